#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# fetch-peers.sh: cache the peers the learn benchmark (tools/bench/
# learn-peers.sh) runs in the VM guest beside learn mode: auditd and
# auditctl (package auditd) and bpftrace, from bookworm with `apt-get
# download` + `dpkg-deb -x`, with the libraries of theirs the host lacks.
# Nothing is installed on the host (an installed auditd would start on it).
#
#   peers/root/         the packages unpacked; run with
#                       LD_LIBRARY_PATH=peers/root/usr/lib/x86_64-linux-gnu
#   peers/packages      what was unpacked, one "name version" a line
#
# Cache: ${BW_VM_CACHE:-/var/cache/bpfwarden-vm}. Built in a temporary
# directory and renamed into place, under a flock; never touched again.
#
# Usage: fetch-peers.sh [--quiet]
set -euo pipefail

CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
P=$CACHE/peers
quiet=0
[ "${1:-}" = --quiet ] && quiet=1

die() { echo "fetch-peers: $*" >&2; exit 1; }
say() { [ "$quiet" = 1 ] || echo "fetch-peers: $*" >&2; }

[ -f "$P/complete" ] && exit 0
[ "$(id -u)" = 0 ] || [ -w "$CACHE" ] || die "cannot write $CACHE (run as root or set BW_VM_CACHE)"
mkdir -p "$CACHE"
exec 9>"$CACHE/.peers.lock"
flock 9
[ -f "$P/complete" ] && exit 0
rm -rf "$CACHE"/.new-peers.*

# The peers, then each library of theirs that the host has not installed.
pkgs=(auditd bpftrace)
for lib in libauparse0 libwrap0 libbpfcc; do
	dpkg-query -W -f='${Status}' "$lib" 2>/dev/null | grep -q 'ok installed' || pkgs+=("$lib")
done

tmp=$(mktemp -d "$CACHE/.new-peers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/deb" "$tmp/peers" "$tmp/peers/root"
chown _apt "$tmp/deb" 2>/dev/null || true
say "downloading ${pkgs[*]}"
if ! (cd "$tmp/deb" && apt-get download -q "${pkgs[@]}" >&2); then
	say "running apt-get update"
	apt-get update -qq >&2 || die "apt-get update failed"
	(cd "$tmp/deb" && apt-get download -q "${pkgs[@]}" >&2) || die "apt-get download ${pkgs[*]} failed"
fi
for deb in "$tmp"/deb/*.deb; do
	dpkg-deb -x "$deb" "$tmp/peers/root"
	echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$tmp/peers/packages"
done
for bin in sbin/auditd sbin/auditctl usr/bin/bpftrace; do
	[ -x "$tmp/peers/root/$bin" ] || die "no $bin in the packages"
done
touch "$tmp/peers/complete"
mv "$tmp/peers" "$P"
say "cached $(tr '\n' ' ' <"$P/packages")in $P"
