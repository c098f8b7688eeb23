#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# fetch-kernels.sh: cache the Debian kernels the VM tests boot.
#
# The build host's own kernel cannot run BPF LSM programs, so the integration
# tests boot Debian's stock kernels under QEMU (tools/vm/vmrun.sh). This script
# downloads them with `apt-get download` + `dpkg-deb` (no kernel is installed on
# the host) and keeps only what a guest needs: vmlinuz, the config, and the few
# modules that mount the host's / over virtio-9p, decompressed and in load order.
#
#   6.1   newest linux-image-6.1.0-NN-amd64 that bookworm's linux-image-amd64
#         (including bookworm-security) depends on
#   6.12  linux-image-6.12.*+deb12-amd64 that bookworm-backports'
#         linux-image-amd64 depends on
#
# Cache: ${BW_VM_CACHE:-/var/cache/bpfwarden-vm}/<6.1|6.12>/
#   vmlinuz  vmlinux  config  release  package  modules/NN-name.ko  complete
#   extra/overlay.ko (not booted: the Kubernetes node tests' containerd uses it)
# (vmlinux: the kernel uncompressed, booted directly through its PVH entry.)
# A complete cache entry is never touched again (no network needed) unless
# --refresh is given (then apt-get update, and replace entries that are not
# the newest). Otherwise apt-get update runs only when a lookup or download
# fails, i.e. the lists are missing or stale. Concurrent runs serialise on a
# flock; an entry is built in a temporary directory and renamed into place,
# so readers never see half of one.
#
# Usage: fetch-kernels.sh [--refresh] [--quiet] [6.1|6.12 ...]   (default: both)
set -euo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
ALL_KERNELS="6.1 6.12"
refresh=0
quiet=0
kernels=()

die() { echo "fetch-kernels: $*" >&2; exit 1; }
say() { [ "$quiet" = 1 ] || echo "fetch-kernels: $*" >&2; }

# Module load order (dependencies first). 6.12 has virtio built in.
modules_for() {
	case $1 in
	6.1)  echo "virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p" ;;
	6.12) echo "netfs 9pnet 9pnet_virtio 9p" ;;
	*)    die "unknown kernel '$1' (known: $ALL_KERNELS)" ;;
	esac
}

while [ $# -gt 0 ]; do
	case $1 in
	--refresh) refresh=1 ;;
	--quiet|-q) quiet=1 ;;
	-h|--help) sed -n '3,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) modules_for "$1" >/dev/null; kernels+=("$1") ;;
	esac
	shift
done
[ ${#kernels[@]} -gt 0 ] || read -ra kernels <<<"$ALL_KERNELS"

all_complete() {
	local k
	for k in "${kernels[@]}"; do
		[ -f "$CACHE/$k/complete" ] || return 1
	done
}

# Fast path, no lock and no apt: everything asked for is already cached.
if [ "$refresh" = 0 ] && all_complete; then
	exit 0
fi

[ "$(id -u)" = 0 ] || [ -w "$CACHE" ] || die "cannot write $CACHE (run as root or set BW_VM_CACHE)"
mkdir -p "$CACHE"
exec 9>"$CACHE/.fetch.lock"
flock 9
# With the lock held, any half-built entry is a leftover of a killed run.
rm -rf "$CACHE"/.new-*

# Newest version of linux-image-amd64 in the apt lists whose version starts
# with "$1." (6.1.x comes from bookworm/bookworm-security, 6.12.x from backports).
newest_meta_version() {
	local v best=
	for v in $(apt-cache madison linux-image-amd64 2>/dev/null | awk '{print $3}'); do
		case $v in "$1".*) ;; *) continue ;; esac
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	echo "$best"
}

# The versioned image package (linux-image-6.1.0-NN-amd64, ...) for kernel $1.
resolve_package() {
	local ver
	ver=$(newest_meta_version "$1")
	[ -n "$ver" ] || return 1
	apt-cache depends "linux-image-amd64=$ver" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}

# shellcheck source=tools/vm/debfetch.sh
. "$VM_DIR/debfetch.sh"

# extract_vmlinux BZIMAGE OUT: the uncompressed ELF kernel inside a bzImage.
# QEMU boots it through its PVH entry point, skipping the decompressor, which
# under TCG takes about 3 s for 6.1 (xz) and 1 s for 6.12 (zstd).
extract_vmlinux() {
	local magic tool off
	for magic in '\xfd7zXZ\x00:xz -dcq --single-stream' '\x28\xb5\x2f\xfd:zstd -dcq' '\x1f\x8b\x08:gzip -dcq'; do
		tool=${magic#*:}
		command -v "${tool%% *}" >/dev/null || continue
		off=$(LC_ALL=C grep -obUaP "${magic%%:*}" "$1" | head -n1 | cut -d: -f1)
		[ -n "$off" ] || continue
		# zstd and gzip complain about the bytes after the stream: ignore
		# that, and judge by the result instead.
		tail -c +$((off + 1)) "$1" | $tool >"$2" 2>/dev/null
		if [ "$(head -c4 "$2" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] &&
			readelf -n "$2" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
			return 0
		fi
	done
	rm -f "$2"
	return 1
}

fetch_one() {
	local k=$1 pkg tmp deb release m f n ver
	local -a mods pats

	pkg=$(resolve_package "$k" || true)
	if [ -z "$pkg" ]; then
		apt_update || true
		pkg=$(resolve_package "$k" || true)
	fi
	[ -n "$pkg" ] || die "$k: no linux-image-amd64 $k.* in the apt lists (is bookworm-backports in the sources? see tools/install-deps.sh)"

	fetch_deb "$k" "$pkg"
	mkdir "$tmp/modules"
	ver=$(dpkg-deb -f "$deb" Version)

	read -ra mods <<<"$(modules_for "$k")"
	pats=('boot/vmlinuz-*' 'boot/config-*')
	for m in "${mods[@]}"; do
		pats+=("*/$m.ko*")
	done
	# Not for the boot: containerd's overlay snapshotter in the Kubernetes
	# node tests (fetch-containers.sh takes it from here, or downloads the
	# package again for a cache entry made before this).
	pats+=('*/overlay.ko*')
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" --wildcards --no-anchored "${pats[@]}"

	f=$(echo "$tmp"/x/boot/vmlinuz-*)
	[ -f "$f" ] || die "$k: no vmlinuz in $pkg"
	release=${f##*/vmlinuz-}
	mv "$f" "$tmp/vmlinuz"
	mv "$tmp"/x/boot/config-* "$tmp/config"
	extract_vmlinux "$tmp/vmlinuz" "$tmp/vmlinux" ||
		say "$k: cannot extract an ELF vmlinux with a PVH entry (is zstd installed?); vmrun.sh boots the slower bzImage"

	n=0
	for m in "${mods[@]}"; do
		f=$(find "$tmp/x/lib/modules/$release" -name "$m.ko*" | head -n1)
		[ -n "$f" ] || die "$k: module $m not found in $pkg"
		n=$((n + 1))
		local out
		out=$tmp/modules/$(printf '%02d' "$n")-$m.ko
		# busybox insmod cannot be relied on for compressed modules:
		# decompress here, once.
		case $f in
		*.ko)    cp "$f" "$out" ;;
		*.ko.xz) xz -dc "$f" >"$out" ;;
		*.ko.gz) gzip -dc "$f" >"$out" ;;
		*.ko.zst) zstd -qdc "$f" >"$out" || die "$k: need zstd for $f" ;;
		*) die "$k: unexpected module file $f" ;;
		esac
	done

	f=$(find "$tmp/x/lib/modules/$release" -name 'overlay.ko*' | head -n1)
	if [ -n "$f" ]; then
		mkdir "$tmp/extra"
		case $f in
		*.ko) cp "$f" "$tmp/extra/overlay.ko" ;;
		*.ko.xz) xz -dc "$f" >"$tmp/extra/overlay.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$tmp/extra/overlay.ko" ;;
		esac
	fi

	echo "$release" >"$tmp/release"
	echo "$pkg $ver" >"$tmp/package"
	rm -rf "$tmp/deb" "$tmp/x"
	touch "$tmp/complete"

	# Swap the entry in. Each rename is atomic; the old entry, if any, is
	# deleted only after the new one is in place.
	if [ -e "$CACHE/$k" ]; then
		mv "$CACHE/$k" "$tmp.old"
	fi
	mv "$tmp" "$CACHE/$k"
	rm -rf "$tmp.old"
	trap - EXIT
	say "$k: cached $pkg $ver ($release) in $CACHE/$k"
}

for k in "${kernels[@]}"; do
	if [ "$refresh" = 0 ] && [ -f "$CACHE/$k/complete" ]; then
		continue
	fi
	if [ "$refresh" = 1 ] && [ -f "$CACHE/$k/complete" ]; then
		[ "$apt_updated" = 1 ] || apt_update
		cur=$(cat "$CACHE/$k/package")
		want=$(resolve_package "$k" || true)
		if [ -n "$want" ]; then
			want="$want $(apt-cache policy "$want" | awk '$1 == "Candidate:" { print $2 }')"
		fi
		if [ "$cur" = "$want" ]; then
			say "$k: $cur is current"
			continue
		fi
	fi
	fetch_one "$k"
done
