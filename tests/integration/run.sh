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
# Each suite takes test names; with names, a suite runs only those it has.
status=0
for suite in tests/integration/test_file.py tests/integration/test_exec.py tests/integration/test_net.py \
	tests/integration/test_learn.py tests/integration/test_services.py tests/integration/test_cli.py \
	tests/integration/test_lifecycle.py \
	tests/k8s/test_k8s.py tests/k8s/test_podman.py; do
	echo "== $suite"
	/usr/bin/python3 "$suite" --skip-unknown "$@" || status=1
done
# The escape corpus: hostile routes around a profile (docs/threat-model.md).
tests/escape/run.sh "$@" || status=1
exit $status
