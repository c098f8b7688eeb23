#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The network-only tier on Debian's own kernels: run as root inside a VM
# booted without `bpf` in lsm= (make vmtest-net), as most distributions'
# kernels boot. The suites the build host runs natively (make hosttest)
# run here against 6.1 and 6.12: network rules enforced by the cgroup
# programs alone, everything BPF LSM would decide refused at load.
set -e
cd "$(dirname "$0")/../.."
if grep -qw bpf /sys/kernel/security/lsm 2>/dev/null; then
	echo "the network-only tier needs a kernel booted without bpf in lsm= (make vmtest-net)" >&2
	exit 2
fi
uname -r
cat /sys/kernel/security/lsm
echo
status=0
for suite in tests/integration/test_net.py tests/escape/test_netdoors.py \
	tests/escape/test_netcache.py; do
	echo "== $suite"
	/usr/bin/python3 "$suite" || status=1
done
# The start storm measures the daemon's answers under load; that code is
# the same in every tier, and it runs in both BPF LSM guests and on the host
# (make vmtest, make hosttest). Here it would double this stage's time.
echo "== tests/integration/test_cli.py"
/usr/bin/python3 tests/integration/test_cli.py --without test_a_start_storm_with_an_attacker_in_it || status=1
exit $status
