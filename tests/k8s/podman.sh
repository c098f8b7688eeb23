#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# podman.sh ARG...: Debian bookworm's podman 4.3 in the VM guest, from
# tools/vm/fetch-containers.sh's cache (containers/podman, runc from
# containers/bin), nothing installed: its state and configuration on the
# guest's tmpfs (BW_PODMAN_DATA), cgroupfs driver, no network backend (run
# with --network none), file events.
#
#   podman.sh setup       write the configuration, load localhost/bw-busybox:1
#   podman.sh run ARG...  podman run --pull never --network none ARG...
#   podman.sh ARG...      podman ARG... (with --root, --runroot, --runtime, ...)
#
# Each call runs in a mount namespace of its own, where the libraries podman
# needs and the host lacks (libgpgme, libassuan, libsubid) are on the default
# search path: conmon starts podman again for the cleanup after the
# container exits, with an environment it makes itself (no LD_LIBRARY_PATH),
# and the namespace is inherited by both.
set -eu

CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
R=$CACHE/containers/podman
RUNC=$CACHE/containers/bin/runc
W=${BW_PODMAN_DATA:-/tmp/bw-podman}

die() { echo "podman.sh: $*" >&2; exit 1; }

if [ "${1:-}" != --in-ns ]; then
	[ -f "$R/complete" ] || die "no podman in $R: run tools/vm/fetch-containers.sh"
	exec unshare -m "$0" --in-ns "$@"
fi
shift
grep -qw overlay /proc/filesystems ||
	insmod "$CACHE/${BW_VM_KERNEL:?not in a vmrun.sh guest}/extra/overlay.ko" ||
	die "cannot load overlay.ko (tools/vm/fetch-containers.sh)"
lib=/usr/lib/x86_64-linux-gnu
if [ ! -e "$lib/libsubid.so.4" ] || [ ! -e "$lib/libgpgme.so.11" ]; then
	mkdir -p "$W/lib"
	cp -a "$R$lib"/libgpgme.so.* "$R$lib"/libassuan.so.* "$R$lib"/libsubid.so.* "$W/lib/"
	mount -t overlay overlay -o "lowerdir=$W/lib:$lib" "$lib" || die "cannot put podman's libraries on $lib"
fi

pm() {
	CONTAINERS_CONF=$W/containers.conf CONTAINERS_STORAGE_CONF=$W/storage.conf \
		CONTAINERS_REGISTRIES_CONF=$R/etc/containers/registries.conf \
		"$R/usr/bin/podman" --root "$W/storage" --runroot "$W/run" --cgroup-manager cgroupfs \
		--events-backend file --runtime "$RUNC" --conmon "$R/usr/bin/conmon" \
		--storage-driver overlay "$@"
}

setup() {
	mkdir -p "$W/cni" "$W/cni-bin" "$W/run" "$W/storage" "$W/tmp" "$W/oci"
	cat >"$W/containers.conf" <<EOF
[containers]
seccomp_profile = "$R/usr/share/containers/seccomp.json"
default_sysctls = []
[network]
# No netavark and no CNI plugins: "cni" wants its directories only for a
# container that joins a network, and --network none joins none.
network_backend = "cni"
network_config_dir = "$W/cni"
cni_plugin_dirs = ["$W/cni-bin"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$W/tmp"
conmon_path = ["$R/usr/bin/conmon"]
runtime = "runc"
[engine.runtimes]
runc = ["$RUNC"]
EOF
	cat >"$W/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$W/storage"
runroot = "$W/run"
EOF
	# images.tar holds two images under the same ref.name: pull the one
	# wanted from a copy of the layout whose index lists only it.
	tar -xf "$CACHE/containers/images.tar" -C "$W/oci"
	/usr/bin/python3 -c '
import json, sys
p = sys.argv[1] + "/index.json"
ix = json.load(open(p))
ix["manifests"] = [m for m in ix["manifests"]
                   if m.get("annotations", {}).get("io.containerd.image.name") == "localhost/bw-busybox:1"]
json.dump(ix, open(p, "w"))' "$W/oci"
	pm pull -q --signature-policy "$R/etc/containers/policy.json" "oci:$W/oci" >/dev/null
	pm tag "localhost$W/oci:latest" localhost/bw-busybox:1
	pm rmi "localhost$W/oci:latest" >/dev/null
}

case ${1:-} in
setup) setup ;;
run)
	shift
	pm run --pull never --signature-policy "$R/etc/containers/policy.json" --network none "$@" ;;
"") die "usage: podman.sh setup | podman.sh ARG..." ;;
*) pm "$@" ;;
esac
