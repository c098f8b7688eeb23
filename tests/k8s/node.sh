#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# node.sh: make the VM guest a Kubernetes node without kubelet: containerd
# 1.6 with its CRI plugin, runc, the overlay snapshotter and the test images,
# all from tools/vm/fetch-containers.sh's cache, state on the guest's tmpfs.
#
#   node.sh up MODE     start containerd; MODE says how bpfwarden-hook is called:
#                       hook  an OCI createRuntime hook in containerd's base_runtime_spec
#                       nri   an NRI v0.1 plugin (/etc/nri/conf.json)
#                       none  not at all
#   node.sh down        stop containerd, remove every container first
#
# Run as root in the guest (tools/vm/vmrun.sh). The guest's / is the host's,
# read-only: /etc/nri is made writable with an overlay over /etc. Pods use
# the node's network (no CNI here). containerd's socket:
# $BW_K8S_RUN/containerd.sock; its log: $BW_K8S_RUN/containerd.log.
set -eu

CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
BIN=$CACHE/containers/bin
RUN=${BW_K8S_RUN:-/run/bw-k8s}
DATA=${BW_K8S_DATA:-/tmp/bw-k8s}
HERE=$(cd "$(dirname "$0")" && pwd -P)
HOOK=${BW_HOOK:-$(cd "$HERE/../.." && pwd -P)/build/bpfwarden-hook}
export PATH="$BIN:$PATH"

die() { echo "node.sh: $*" >&2; exit 1; }

# The overlay snapshotter's module, once per boot.
load_overlay() {
	grep -qw overlay /proc/filesystems && return 0
	insmod "$CACHE/${BW_VM_KERNEL:?not in a vmrun.sh guest}/extra/overlay.ko" ||
		die "cannot load overlay.ko (tools/vm/fetch-containers.sh)"
}

# /etc is the host's, read-only: an overlay with a tmpfs upper layer lets
# the tests write /etc/nri/conf.json (NRI v0.1 reads that path only).
writable_etc() {
	[ -d /run/bw-etc ] && return 0
	mkdir -p /run/bw-etc/upper /run/bw-etc/work
	mount -t overlay overlay -o lowerdir=/etc,upperdir=/run/bw-etc/upper,workdir=/run/bw-etc/work /etc ||
		die "cannot mount an overlay over /etc"
}

config() {
	mode=$1
	spec=
	if [ "$mode" = hook ]; then
		spec=$RUN/base-spec.json
		# containerd's default spec with our createRuntime hook added.
		ctr oci spec | /usr/bin/python3 -c '
import json, sys
spec = json.load(sys.stdin)
spec.setdefault("hooks", {})["createRuntime"] = [{"path": sys.argv[1], "args": ["bpfwarden-hook"], "timeout": 30}]
json.dump(spec, sys.stdout, indent=1)' "$HOOK" >"$spec"
	fi
	rm -f /etc/nri/conf.json
	if [ "$mode" = nri ]; then
		mkdir -p /etc/nri
		# containerd looks the plugin up in its PATH (plus /opt/nri/bin).
		ln -sf "$HOOK" "$RUN/bin/bpfwarden-hook"
		echo '{"version": "0.1", "plugins": [{"type": "bpfwarden-hook"}]}' >/etc/nri/conf.json
	fi
	cat >"$RUN/config.toml" <<EOF
version = 2
root = "$DATA/containerd"
state = "$RUN/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$RUN/containerd.sock"
[ttrpc]
  address = "$RUN/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/bw-pause:1"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      pod_annotations = ["bpfwarden.io/*"]
      base_runtime_spec = "$spec"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$BIN/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$RUN/cni/bin"
    conf_dir = "$RUN/cni/conf"
EOF
}

up() {
	mode=${1:?node.sh up hook|nri|none}
	case $mode in hook|nri|none) ;; *) die "unknown mode $mode" ;; esac
	[ ! -S "$RUN/containerd.sock" ] || die "containerd runs already (node.sh down first)"
	load_overlay
	writable_etc
	mkdir -p "$RUN/bin" "$RUN/cni/bin" "$RUN/cni/conf" "$DATA"
	config "$mode"
	PATH="$RUN/bin:$PATH" setsid containerd --config "$RUN/config.toml" >>"$RUN/containerd.log" 2>&1 </dev/null &
	echo $! >"$RUN/containerd.pid"
	i=0
	until ctr --address "$RUN/containerd.sock" version >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 300 ] || { tail -20 "$RUN/containerd.log" >&2; die "containerd did not come up"; }
		sleep 0.1
	done
	if ! ctr --address "$RUN/containerd.sock" -n k8s.io images ls -q | grep -q bw-busybox; then
		ctr --address "$RUN/containerd.sock" -n k8s.io images import --no-unpack=false \
			"$CACHE/containers/images.tar" >/dev/null || die "cannot import the test images"
	fi
	echo "$mode" >"$RUN/mode"
}

down() {
	[ -f "$RUN/containerd.pid" ] || return 0
	pid=$(cat "$RUN/containerd.pid")
	kill "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$RUN/containerd.pid" "$RUN/containerd.sock" "$RUN/containerd.sock.ttrpc" /etc/nri/conf.json
}

case ${1:-} in
up) shift; up "$@" ;;
down) down ;;
*) die "usage: node.sh up hook|nri|none | node.sh down" ;;
esac
