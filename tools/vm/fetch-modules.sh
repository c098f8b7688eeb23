#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# fetch-modules.sh: cache the modules that some VM tests load in the guest:
# a loop device with ext4 on it (file handles of a disk file system,
# tests/escape/test_identity.py), overlayfs, SCTP and a dummy interface
# (tests/escape/test_netdoors.py), binfmt_misc (tests/escape/test_host.py).
#
# The guest boots with the 9p modules only (fetch-kernels.sh) and cannot run
# modprobe (the host's /lib/modules has nothing for its kernel). This script
# takes the modules below and what they depend on (the package's modules.dep)
# from the same Debian kernel package, decompressed, into
#   ${BW_VM_CACHE:-/var/cache/bpfwarden-vm}/<6.1|6.12>/fsmods/
#     NAME.ko ...   order (one module a line, dependencies first)   complete (WANT)
# (the package has no modules.dep: modinfo gives each module's dependencies)
# The guest sees the host's / and loads them with tools/vm/modload.sh.
# An entry complete for this WANT (its `complete` file holds it) is never
# touched again; it is built in a temporary directory under a flock and
# renamed into place.
#
# Usage: fetch-modules.sh [--quiet] [6.1|6.12 ...]   (default: both)
set -euo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
# crc32c_generic: ext4 and jbd2 ask the crypto API for crc32c (a soft dependency).
# sctp and dummy: the SCTP route and an interface other than lo
# (tests/escape/test_netdoors.py).
WANT="loop crc32c_generic ext4 overlay sctp dummy binfmt_misc"
quiet=0
kernels=()

die() { echo "fetch-modules: $*" >&2; exit 1; }
say() { [ "$quiet" = 1 ] || echo "fetch-modules: $*" >&2; }

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

all_there() {
	local k
	for k in "${kernels[@]}"; do
		[ "$(cat "$CACHE/$k/fsmods/complete" 2>/dev/null)" = "$WANT" ] || return 1
	done
}
all_there && exit 0

[ "$(id -u)" = 0 ] || [ -w "$CACHE" ] || die "cannot write $CACHE (run as root or set BW_VM_CACHE)"
qflag=()
[ "$quiet" = 0 ] || qflag=(--quiet)
"$VM_DIR/fetch-kernels.sh" "${qflag[@]}" "${kernels[@]}"
exec 9>"$CACHE/.modules.lock"
flock 9
rm -rf "$CACHE"/.new-fsmods-*

# shellcheck source=tools/vm/debfetch.sh
. "$VM_DIR/debfetch.sh"

# The package has no modules.dep (depmod makes it when installing): each
# module's dependencies come from its own modinfo "depends" field.
fetch_one() {
	local k=$1 pkg ver tmp deb m
	local -a order=()
	read -r pkg ver <"$CACHE/$k/package"
	say "$k: $pkg $ver again, for $WANT"
	fetch_deb "fsmods-$k" "$pkg=$ver" "run tools/vm/fetch-kernels.sh --refresh if it is gone from the archive"
	mkdir "$tmp/fsmods"
	dpkg-deb -c "$deb" | awk '{print $NF}' | grep -E '\.ko(\.[a-z]+)?$' >"$tmp/list"
	# Depth first, a module after what it depends on.
	visit() {
		local m=$1 rel f d
		case " ${order[*]} " in *" $m "*) return 0 ;; esac
		rel=$(grep -E "/$m\.ko(\.[a-z]+)?$" "$tmp/list" | head -n1)
		[ -n "$rel" ] || die "$k: module $m not found in $pkg"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" "$rel"
		f=$tmp/x/${rel#./}
		case $f in
		*.ko) cp "$f" "$tmp/fsmods/$m.ko" ;;
		*.ko.xz) xz -dc "$f" >"$tmp/fsmods/$m.ko" ;;
		*.ko.gz) gzip -dc "$f" >"$tmp/fsmods/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" >"$tmp/fsmods/$m.ko" || die "$k: need zstd for $f" ;;
		esac
		for d in $(modinfo -F depends "$tmp/fsmods/$m.ko" | tr ',' ' '); do
			visit "$d"
		done
		order+=("$m")
	}
	for m in $WANT; do
		visit "$m"
	done
	printf '%s\n' "${order[@]}" >"$tmp/fsmods/order"
	echo "$WANT" >"$tmp/fsmods/complete" # a set made for another WANT is made again
	rm -rf "$CACHE/$k/fsmods"
	mv "$tmp/fsmods" "$CACHE/$k/fsmods"
	rm -rf "$tmp"
	trap - EXIT
	say "$k: cached $(tr '\n' ' ' <"$CACHE/$k/fsmods/order")in $CACHE/$k/fsmods"
}

for k in "${kernels[@]}"; do
	[ "$(cat "$CACHE/$k/fsmods/complete" 2>/dev/null)" = "$WANT" ] || fetch_one "$k"
done
