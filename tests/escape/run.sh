#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The escape corpus (tests/escape/escape.py says what a route test is), run
# as root inside the VM on a kernel with BPF LSM, like tests/integration/,
# through `bpfwarden selftest`, the command operators run on a node.
# Optional arguments name single tests: those that are routes run.
set -e
cd "$(dirname "$0")/../.."
BW=${BW_BUILD:-build}/bpfwarden
if [ $# -gt 0 ]; then
	known=$("$BW" selftest --list | cut -d' ' -f1)
	set -- $(for a in "$@"; do echo "$known" | grep -qx "test_${a#test_}" && echo "$a"; done)
	[ $# -gt 0 ] || exit 0
fi
echo "== bpfwarden selftest"
"$BW" selftest "$@"
