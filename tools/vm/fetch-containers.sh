#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# fetch-containers.sh: cache what the Kubernetes node tests run in the VM
# guest (tests/k8s/): a real container runtime, an image, and a stand-in for
# kubelet. Nothing is installed on the host.
#
#   containers/bin/       containerd, containerd-shim-runc-v2, ctr (package
#                         containerd) and runc (package runc), from bookworm
#                         with `apt-get download` + `dpkg-deb -x`
#   containers/images.tar an OCI image layout holding two images built here
#                         from the host's busybox-static: localhost/bw-busybox:1
#                         (sh as its command) and localhost/bw-pause:1 (the
#                         pod sandbox's process); `ctr image import` loads it
#   containers/node/      node_modules of tests/k8s/package.json (the CRI
#                         client's gRPC libraries), with `npm ci`
#   containers/podman/    podman and conmon with what they need that the host
#                         lacks (packages podman, conmon, golang-github-
#                         containers-common and -image, libgpgme11,
#                         libassuan0, libsubid4), unpacked the same way, for
#                         tests/k8s/test_podman.py (runc: containers/bin)
#   <6.1|6.12>/extra/overlay.ko  containerd's overlayfs snapshotter needs it;
#                         taken from the kernel package fetch-kernels.sh cached
#
# Cache: ${BW_VM_CACHE:-/var/cache/bpfwarden-vm}. Each part is built in a
# temporary directory and renamed into place, under a flock; a complete part
# is never touched again (the image is rebuilt when busybox, tests/k8s/
# mkimage.py or this script change, the node modules when the lock file does).
#
# Usage: fetch-containers.sh [--quiet] [6.1|6.12 ...]   (kernels: default both)
set -euo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$VM_DIR/../.." && pwd -P)
CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
C=$CACHE/containers
quiet=0
kernels=()

die() { echo "fetch-containers: $*" >&2; exit 1; }
say() { [ "$quiet" = 1 ] || echo "fetch-containers: $*" >&2; }

while [ $# -gt 0 ]; do
	case $1 in
	--quiet|-q) quiet=1 ;;
	-h|--help) sed -n '3,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;;
	6.1|6.12) kernels+=("$1") ;;
	*) die "unknown argument $1" ;;
	esac
	shift
done
[ ${#kernels[@]} -gt 0 ] || kernels=(6.1 6.12)

image_stamp() {
	cat "$0" "$ROOT/tests/k8s/mkimage.py" "$ROOT/tools/oci.py" /bin/busybox | sha256sum | cut -d' ' -f1
}
node_stamp() {
	cat "$ROOT/tests/k8s/package.json" "$ROOT/tests/k8s/package-lock.json" | sha256sum | cut -d' ' -f1
}

all_there() {
	local k
	[ -f "$C/bin/complete" ] || return 1
	[ -f "$C/podman/complete" ] || return 1
	[ "$(cat "$C/images.stamp" 2>/dev/null)" = "$(image_stamp)" ] || return 1
	[ "$(cat "$C/node/stamp" 2>/dev/null)" = "$(node_stamp)" ] || return 1
	for k in "${kernels[@]}"; do
		[ -f "$CACHE/$k/extra/overlay.ko" ] || return 1
	done
}

# Fast path, no lock, no apt, no npm.
all_there && exit 0

[ "$(id -u)" = 0 ] || [ -w "$CACHE" ] || die "cannot write $CACHE (run as root or set BW_VM_CACHE)"
qflag=()
[ "$quiet" = 0 ] || qflag=(--quiet)
"$VM_DIR/fetch-kernels.sh" "${qflag[@]}" "${kernels[@]}"
mkdir -p "$C"
exec 9>"$CACHE/.containers.lock"
flock 9
rm -rf "$CACHE"/.new-containers-*

apt_q=-q
[ "$quiet" = 0 ] || apt_q=-qq
# download DIR PKG[=VERSION]...: into DIR, with one apt-get update on failure.
download() {
	local dir=$1
	shift
	chown _apt "$dir" 2>/dev/null || true
	if ! (cd "$dir" && apt-get download "$apt_q" "$@" >&2); then
		say "running apt-get update"
		apt-get update -qq >&2 || die "apt-get update failed"
		(cd "$dir" && apt-get download "$apt_q" "$@" >&2) || die "apt-get download $* failed"
	fi
}

fetch_bin() {
	local tmp deb
	tmp=$(mktemp -d "$CACHE/.new-containers-bin.XXXXXX")
	chmod 755 "$tmp"
	mkdir "$tmp/deb" "$tmp/x" "$tmp/bin"
	say "downloading containerd and runc"
	download "$tmp/deb" containerd runc
	for deb in "$tmp"/deb/*.deb; do
		dpkg-deb -x "$deb" "$tmp/x"
		echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$tmp/bin/packages"
	done
	cp "$tmp/x/usr/bin/containerd" "$tmp/x/usr/bin/containerd-shim-runc-v2" \
		"$tmp/x/usr/bin/ctr" "$tmp/x/usr/sbin/runc" "$tmp/bin/"
	touch "$tmp/bin/complete"
	rm -rf "$C/bin"
	mv "$tmp/bin" "$C/bin"
	rm -rf "$tmp"
	say "cached $(tr '\n' ' ' <"$C/bin/packages")in $C/bin"
}

fetch_podman() {
	local tmp deb
	tmp=$(mktemp -d "$CACHE/.new-containers-podman.XXXXXX")
	chmod 755 "$tmp"
	mkdir "$tmp/deb" "$tmp/root"
	say "downloading podman"
	download "$tmp/deb" podman conmon golang-github-containers-common \
		golang-github-containers-image libgpgme11 libassuan0 libsubid4
	for deb in "$tmp"/deb/*.deb; do
		dpkg-deb -x "$deb" "$tmp/root"
		echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$tmp/root/packages"
	done
	touch "$tmp/root/complete"
	rm -rf "$C/podman"
	mv "$tmp/root" "$C/podman"
	rm -rf "$tmp"
	say "cached $(tr '\n' ' ' <"$C/podman/packages")in $C/podman"
}

fetch_overlay() {
	local k=$1 pkg ver tmp f release
	read -r pkg ver <"$CACHE/$k/package"
	release=$(cat "$CACHE/$k/release")
	tmp=$(mktemp -d "$CACHE/.new-containers-$k.XXXXXX")
	chmod 755 "$tmp"
	mkdir "$tmp/deb" "$tmp/x" "$tmp/extra"
	say "$k: downloading $pkg $ver again for overlay.ko"
	download "$tmp/deb" "$pkg=$ver" ||
		die "$k: $pkg $ver is gone from the archive: run tools/vm/fetch-kernels.sh --refresh"
	dpkg-deb --fsys-tarfile "$tmp"/deb/*.deb | tar -x -C "$tmp/x" --wildcards --no-anchored '*/overlay.ko*'
	f=$(find "$tmp/x/lib/modules/$release" -name 'overlay.ko*' | head -n1)
	[ -n "$f" ] || die "$k: no overlay module in $pkg"
	case $f in
	*.ko) cp "$f" "$tmp/extra/overlay.ko" ;;
	*.ko.xz) xz -dc "$f" >"$tmp/extra/overlay.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$tmp/extra/overlay.ko" ;;
	*) die "$k: unexpected module file $f" ;;
	esac
	rm -rf "$CACHE/$k/extra"
	mv "$tmp/extra" "$CACHE/$k/extra"
	rm -rf "$tmp"
}

build_images() {
	local tmp
	tmp=$(mktemp -d "$CACHE/.new-containers-img.XXXXXX")
	chmod 755 "$tmp"
	/usr/bin/python3 "$ROOT/tests/k8s/mkimage.py" /bin/busybox "$tmp/images.tar"
	mv "$tmp/images.tar" "$C/images.tar"
	image_stamp >"$C/images.stamp"
	rm -rf "$tmp"
	say "built $C/images.tar from /bin/busybox"
}

install_node() {
	local tmp
	command -v npm >/dev/null || die "no npm (Node 20 and npm are needed for the CRI client)"
	tmp=$(mktemp -d "$CACHE/.new-containers-node.XXXXXX")
	chmod 755 "$tmp"
	cp "$ROOT/tests/k8s/package.json" "$ROOT/tests/k8s/package-lock.json" "$tmp/"
	say "installing the CRI client's node modules"
	(cd "$tmp" && npm ci --silent --no-audit --no-fund --omit=dev >&2) || die "npm ci failed"
	node_stamp >"$tmp/stamp"
	rm -rf "$C/node"
	mv "$tmp" "$C/node"
}

[ -f "$C/bin/complete" ] || fetch_bin
[ -f "$C/podman/complete" ] || fetch_podman
for k in "${kernels[@]}"; do
	[ -f "$CACHE/$k/extra/overlay.ko" ] || fetch_overlay "$k"
done
[ "$(cat "$C/images.stamp" 2>/dev/null)" = "$(image_stamp)" ] || build_images
[ "$(cat "$C/node/stamp" 2>/dev/null)" = "$(node_stamp)" ] || install_node
exit 0
