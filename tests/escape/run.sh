#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The escape corpus (tests/escape/escape.py says what a route test is), run
# as root inside the VM on a kernel with BPF LSM, like tests/integration/.
# Optional arguments name single tests.
set -e
cd "$(dirname "$0")/../.."
status=0
for suite in tests/escape/test_*.py; do
	[ -e "$suite" ] || continue
	echo "== $suite"
	/usr/bin/python3 "$suite" --skip-unknown "$@" || status=1
done
exit $status
