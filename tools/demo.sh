#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The README's first command: confine a hostile Python script with the shipped
# profile and print what the kernel refused. Where this kernel cannot run BPF
# LSM programs, the same demo runs inside the VM runner.
set -e
cd "$(dirname "$0")/.."
BW=build/bpfwarden
if [ "${1:-}" != --in-vm ] && ! "$BW" status >/dev/null 2>&1; then
	why=$("$BW" status 2>/dev/null | sed -n 's/^  file rules *no  //p')
	echo "bpfwarden: this kernel cannot enforce file rules (${why:-see bpfwarden status}); running the demo in the VM (Debian 6.12)"
	tools/vm/fetch-kernels.sh >/dev/null
	# An emulated guest rarely dies on its own (exit 125): try once more.
	status=0
	tools/vm/vmrun.sh --kernel 6.12 -- tools/demo.sh --in-vm || status=$?
	if [ "$status" = 125 ]; then
		echo "bpfwarden: the guest died without reporting; booting it once more"
		tools/vm/vmrun.sh --kernel 6.12 -- tools/demo.sh --in-vm || status=$?
	fi
	exit "$status"
fi
log=$(mktemp /tmp/bpfwarden-demo.XXXXXX.log)
# The profile gives the job one directory, /tmp/job: the script goes there.
mkdir -p /tmp/job
cp examples/hostile.py /tmp/job/main.py
echo "== bpfwarden run --profile profiles/python-sandbox.profile -- python3 /tmp/job/main.py"
set +e
"$BW" run --profile profiles/python-sandbox.profile --log "$log" -- \
	/usr/bin/python3 /tmp/job/main.py
status=$?
set -e
echo "== denials in the audit log ($log):"
/usr/bin/python3 - "$log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] != "deny":
        continue
    if "addr" in e:
        what, access = "%s %s port %d" % (e["proto"], e["addr"], e["port"]), ""
    else:
        what, access = e["path"] or "(no path: memfd)", e["access"]
    print("  %-7s %-2s %-40s %-8s rule %s" % (e["op"], access, what, e["proc"]["comm"],
          e["rule"]))
PY
exit $status
