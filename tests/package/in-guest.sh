#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# in-guest.sh ROOT: inside a guest (test-deb.sh), the package unpacked at
# ROOT used as installed, nothing from the checkout but the demo's hostile
# script: the demo under the shipped profile, then selftest routes that
# between them run every helper program the package ships (fsop, cgop,
# mountop, dcroute, idroute, libbwmark.so). The whole corpus runs from the
# checkout in `make vmtest`; here the question is whether the installed
# layout finds and runs it.
set -uo pipefail
R=${1:?usage: in-guest.sh ROOT}
cd "$(dirname "$0")/../.." || exit 2
BW=$R/usr/sbin/bpfwarden
PROFILE=$R/usr/share/bpfwarden/profiles/python-sandbox.profile
t=$SECONDS

fail() {
	echo "in-guest: FAIL: $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2"
	exit 1
}

# The demo: every hostile attempt refused (the script exits 0 then), and
# the refusals logged with the installed profile's rules.
mkdir -p /tmp/job
cp examples/hostile.py /tmp/job/main.py
log=$(mktemp /tmp/bw-deb.XXXXXX.log)
out=$(cd / && env -u BPFWARDEN_PROFILE_DIR "$BW" run --profile "$PROFILE" --log "$log" -- \
	/usr/bin/python3 /tmp/job/main.py 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "the demo under the installed profile exited $rc" "$out"
why=$(/usr/bin/python3 - "$log" "$PROFILE" <<'PY'
import json, sys
evs = [json.loads(line) for line in open(sys.argv[1])]
deny = [e for e in evs if e.get("type") == "deny"]
if not any(e.get("path") == "/etc/shadow" and e.get("rule", "").startswith(sys.argv[2] + ":")
           for e in deny):
    print("no denial of /etc/shadow by a rule of %s: %r" % (sys.argv[2], deny[:3]))
elif not any(e.get("port") == 22 for e in deny):
    print("no denial of the loopback connection to port 22 (%d denials)" % len(deny))
PY
)
[ -z "$why" ] || fail "$why"
demo=$((SECONDS - t))

routes=(test_bpf_syscall test_posix_acl_removed_through_a_read_only_descriptor
	test_leave_by_writing_cgroup_procs test_bind_mount_as_root
	test_cached_file_renamed_into_a_denied_tree test_created_after_load_hard_link_outside
	test_dlopen_of_a_memfd)
out=$(cd / && env -u BPFWARDEN_SELFTEST_DIR "$BW" selftest "${routes[@]}" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" = 0 ] || fail "the installed selftest exited $rc"
n=$(grep -c '^refused ' <<<"$out")
[ "$n" = "${#routes[@]}" ] || fail "$n of ${#routes[@]} routes refused"
echo "in-guest: passed (demo ${demo}s, $n routes refused, $((SECONDS - t))s in all; $(uname -r))"
