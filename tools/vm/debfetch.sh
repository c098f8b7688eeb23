# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# debfetch.sh: sourced by fetch-kernels.sh and fetch-modules.sh, which define
# die, say, CACHE and quiet. A Debian package downloaded into a temporary
# directory of the cache, where an entry is then built and renamed into place.

apt_updated=0
# apt-get update, once a run: fails if it was done already.
apt_update() {
	[ "$apt_updated" = 0 ] || return 1
	say "running apt-get update"
	apt-get update -qq >&2 || die "apt-get update failed"
	apt_updated=1
}

# fetch_deb NAME SPEC [HINT]: sets tmp, a new directory $CACHE/.new-NAME.*
# (removed when the script exits) holding deb/ and x/, and deb, SPEC's .deb
# in tmp/deb. A failed download is tried once more after apt-get update;
# HINT is said if that fails too.
fetch_deb() {
	local q=-q

	[ "${quiet:-0}" = 0 ] || q=-qq
	tmp=$(mktemp -d "$CACHE/.new-$1.XXXXXX")
	chmod 755 "$tmp"
	# shellcheck disable=SC2064 # expand now: the trap must remove this dir
	trap "rm -rf '$tmp'" EXIT
	mkdir "$tmp/deb" "$tmp/x"
	# apt drops privileges to _apt for downloads; let it write here.
	chown _apt "$tmp/deb" 2>/dev/null || true
	say "$1: downloading $2"
	if ! (cd "$tmp/deb" && apt-get download "$q" "$2" >&2); then
		apt_update || die "$1: apt-get download $2 failed"
		(cd "$tmp/deb" && apt-get download "$q" "$2" >&2) ||
			die "$1: apt-get download $2 failed after apt-get update${3:+: $3}"
	fi
	deb=$(echo "$tmp"/deb/*.deb)
	[ -f "$deb" ] || die "$1: no .deb downloaded for $2"
}
