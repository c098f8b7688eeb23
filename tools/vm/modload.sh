#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# modload.sh NAME...: in a vmrun.sh guest, load the named modules of the
# fsmods set (tools/vm/fetch-modules.sh: loop, ext4, overlay, sctp, dummy,
# binfmt_misc) from the host's cache, which the guest sees. The set's order
# file lists dependencies first, so every module up to the last one named is
# loaded (a few unneeded ones at worst); one already loaded is left alone.
# Exit 2 with a message when the cache has no set for this kernel, 1 when
# insmod fails.
set -eu
dir=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}/${BW_VM_KERNEL:?not in a vmrun.sh guest}/fsmods
if [ ! -f "$dir/complete" ]; then
	echo "modload: no modules cached in $dir: run tools/vm/fetch-modules.sh on the host" >&2
	exit 2
fi
left=" $* "
for m in "$@"; do
	grep -qx "$m" "$dir/order" || { echo "modload: $m is not in $dir/order" >&2; exit 2; }
done
while read -r m && [ -n "$(echo "$left" | tr -d ' ')" ]; do
	left=$(echo "$left" | sed "s/ $m / /")
	[ -d "/sys/module/$m" ] && continue
	insmod "$dir/$m.ko" || { echo "modload: insmod $m failed" >&2; exit 1; }
done <"$dir/order"
