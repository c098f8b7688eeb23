#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The integration suite, run as root inside the VM (tools/vm/vmrun.sh) on a
# kernel with BPF LSM. Optional arguments name single tests.
set -e
cd "$(dirname "$0")/../.."
if ! grep -qw bpf /sys/kernel/security/lsm 2>/dev/null; then
	echo "integration tests need BPF LSM: run them through tools/vm/vmrun.sh" >&2
	exit 2
fi
uname -r
exec /usr/bin/python3 tests/integration/test_file.py "$@"
