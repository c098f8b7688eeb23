#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# test-deb.sh: the Debian package as an operator gets it (`make packagetest`,
# part of `make test`). From a copy of this tree (tracked files as they are
# now, as a clone would have them):
#   - dpkg-buildpackage -b builds it, and lintian finds no error;
#   - unpacked (dpkg-deb -x) into build/pkg/root: the files an install puts
#     down, used where they land and nothing from the checkout. The package
#     is not installed into this machine's own /usr: the test must not
#     change the host it runs on;
#   - on the host: man(1) shows each page, the installed agent finds the
#     installed profile library, and selftest finds the installed corpus;
#   - the container image from deploy/image/Containerfile on a Debian base,
#     with this package (test-image.sh);
#   - in a guest on each kernel (in-guest.sh): the demo from the installed
#     files (the shipped profile refuses the hostile script's reads and
#     connection, and logs them), and selftest routes that use each helper
#     program the package ships.
# Needs root, and what tools/install-deps.sh installs (debhelper, lintian).
# Usage: test-deb.sh      BW_KERNELS: kernels, as for run-tests.sh
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
WORK=$ROOT/build/pkg
EXIT_DEAD=125

fail() {
	echo "test-deb: FAIL: $1" >&2
	[ -z "${2:-}" ] || printf '%s\n' "$2" | tail -n 40 >&2
	exit 1
}

cd "$ROOT" || exit 2
rm -rf "$WORK"
mkdir -p "$WORK/src" "$WORK/root"
t=$SECONDS
if [ -d .git ]; then
	git ls-files -z | tar --null -cf - -T - | tar -xf - -C "$WORK/src" ||
		fail "copying the tracked files"
else
	tar --exclude=./build -cf - . | tar -xf - -C "$WORK/src" || fail "copying the tree"
fi

if ! (cd "$WORK/src" && dpkg-buildpackage -b -uc -us) >"$WORK/build.log" 2>&1; then
	fail "dpkg-buildpackage -b" "$(cat "$WORK/build.log")"
fi
deb=$(ls "$WORK"/bpfwarden_*_amd64.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "dpkg-buildpackage made no bpfwarden_*.deb" "$(ls "$WORK")"
echo "test-deb: built $(basename "$deb") in $((SECONDS - t))s"
if ! out=$(lintian --fail-on error "$WORK"/bpfwarden_*_amd64.changes 2>&1); then
	fail "lintian reports errors" "$out"
fi
echo "test-deb: lintian: no error${out:+ ($(grep -c '^[WIP]:' <<<"$out") warnings and notes)}"
dpkg-deb -x "$deb" "$WORK/root" || fail "dpkg-deb -x"
R=$WORK/root

# The host: what needs no BPF LSM.
for page in man8/bpfwarden.8 man8/bpfwarden-hook.8 man5/bpfwarden-profile.5; do
	[ -f "$R/usr/share/man/$page.gz" ] || fail "the package has no $page"
	# The title from standard output alone: troff's warnings on standard error
	# interleave with it in any order. Of those, tbl's "cannot adjust line"
	# (a wide table cell at 80 columns) is the only one allowed, as in
	# tests/integration/test_man.py.
	out=$(MANWIDTH=80 man -l "$R/usr/share/man/$page.gz" 2>"$WORK/man.err" | head -1)
	[[ $out == BPFWARDEN* ]] || fail "man -l $page" "$out$(cat "$WORK/man.err")"
	! grep -v "cannot adjust line" "$WORK/man.err" | grep -q . ||
		fail "man -l $page warns" "$(cat "$WORK/man.err")"
done
for f in usr/sbin/bpfwarden usr/sbin/bpfwarden-hook usr/libexec/bpfwarden/tests/fsop \
	lib/systemd/system/bpfwarden.service usr/share/bash-completion/completions/bpfwarden \
	usr/share/doc/bpfwarden/copyright; do
	[ -e "$R/$f" ] || fail "the package has no /$f"
done
grep -q "^ExecStart=/usr/sbin/bpfwarden daemon" "$R/lib/systemd/system/bpfwarden.service" ||
	fail "the unit does not start /usr/sbin/bpfwarden" "$(grep ExecStart "$R/lib/systemd/system/bpfwarden.service")"
elf=$(find "$R/usr/share" -type f | while read -r f; do
	[ "$(od -An -tx1 -N4 "$f" | tr -d ' ')" != 7f454c46 ] || echo "$f"; done)
[ -z "$elf" ] || fail "ELF files under /usr/share" "$elf"
printf 'profile probe\ndefault deny\ninclude "abstractions/base"\n' >"$WORK/probe.profile"
out=$(cd / && env -u BPFWARDEN_PROFILE_DIR "$R/usr/sbin/bpfwarden" check "$WORK/probe.profile" 2>&1)
[[ $out == "$WORK/probe.profile: ok ("* ]] || fail "the installed agent does not find its library" "$out"
out=$(cd / && env -u BPFWARDEN_SELFTEST_DIR "$R/usr/sbin/bpfwarden" selftest --list 2>&1)
[ "$(wc -l <<<"$out")" -gt 50 ] || fail "the installed selftest lists no corpus" "$out"
"$R/usr/sbin/bpfwarden-hook" --version >/dev/null || fail "bpfwarden-hook --version"

# The container image built from the package (deploy/image/Containerfile).
tests/package/test-image.sh "$deb" || fail "the image from deploy/image/Containerfile"

# The guests.
read -ra kernels <<<"${BW_KERNELS:-6.1 6.12}"
tools/vm/fetch-kernels.sh "${kernels[@]}" >/dev/null || exit 2
for k in "${kernels[@]}"; do
	t=$SECONDS
	for attempt in 1 2; do
		tools/vm/vmrun.sh --kernel "$k" --timeout 900 -- tests/package/in-guest.sh "$R" \
			>"$WORK/guest-$k.log" 2>&1
		rc=$?
		[ "$rc" = "$EXIT_DEAD" ] || break
		echo "test-deb: the $k guest died without a status; booting it once more"
	done
	[ "$rc" = 0 ] || fail "the installed package in the $k guest (exit $rc)" "$(cat "$WORK/guest-$k.log")"
	echo "test-deb: $k: $(grep '^in-guest: ' "$WORK/guest-$k.log" | tail -1 | tr -d '\r') [$((SECONDS - t))s]"
done
echo "test-deb: PASS"
