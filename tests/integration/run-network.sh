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
	tests/escape/test_netcache.py tests/integration/test_cli.py; do
	echo "== $suite"
	/usr/bin/python3 "$suite" || status=1
done
exit $status
