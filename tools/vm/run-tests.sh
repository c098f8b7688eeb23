#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-tests.sh: run the integration suite (tests/integration/run.sh) in a
# QEMU guest on each Debian kernel we support, one after the other (`make
# vmtest`). BPF LSM cannot run on the build host's kernel, hence the VMs.
#
# Prints one PASS / FAIL / GUEST-DIED line per kernel and exits non-zero if
# any kernel did not pass. A guest that dies without reporting the suite's
# status (vmrun.sh exit 125: hang, panic, the rare spontaneous TCG death) is
# retried once, and the retry is reported; a second death counts as failure.
#
# Usage: run-tests.sh [--timeout SECONDS] [TEST...]
#   TEST...        passed to tests/integration/run.sh (default: all tests)
#   BW_KERNELS     kernels to test, default "6.1 6.12"
#   --timeout      per guest run, default $BW_VM_TIMEOUT or 3600
set -uo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$VM_DIR/../.." && pwd -P)
SUITE=${BW_VM_SUITE:-tests/integration/run.sh} # override: to test this script
EXIT_DEAD=125

# The whole suite in one guest: the Kubernetes node tests alone take minutes
# under TCG (pods and containers start in seconds each), more on a busy host.
timeout_opt=(--timeout "${BW_VM_TIMEOUT:-3600}")
while [ $# -gt 0 ]; do
	case $1 in
	--timeout) timeout_opt=(--timeout "${2:?--timeout needs seconds}"); shift ;;
	--timeout=*) timeout_opt=(--timeout "${1#*=}") ;;
	-h|--help) sed -n '3,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) echo "run-tests: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done

cd "$ROOT" || exit 2
if [ ! -x "$SUITE" ]; then
	echo "run-tests: $ROOT/$SUITE is missing or not executable" >&2
	exit 2
fi

read -ra kernels <<<"${BW_KERNELS:-6.1 6.12}"
[ ${#kernels[@]} -gt 0 ] || { echo "run-tests: BW_KERNELS is empty" >&2; exit 2; }
# Download both kernels up front, so a network failure reads as one.
"$VM_DIR/fetch-kernels.sh" "${kernels[@]}" || exit 2
# And what the Kubernetes node tests run in the guest (containerd, runc, an image).
"$VM_DIR/fetch-containers.sh" "${kernels[@]}" || exit 2

summary=()
failed=0
for k in "${kernels[@]}"; do
	start=$SECONDS
	note=
	for attempt in 1 2; do
		echo "run-tests: === kernel $k${note:+ (retry)}: $SUITE${*:+ $*} ==="
		"$VM_DIR/vmrun.sh" --kernel "$k" "${timeout_opt[@]}" -- "$SUITE" "$@"
		rc=$?
		if [ "$rc" != "$EXIT_DEAD" ] || [ "$attempt" = 2 ]; then
			break
		fi
		echo "run-tests: kernel $k: GUEST-DIED without reporting a status; retrying once"
		note="after a guest death and a retry"
	done
	secs=$((SECONDS - start))
	if [ "$rc" = 0 ]; then
		line="PASS"
	elif [ "$rc" = "$EXIT_DEAD" ]; then
		line="GUEST-DIED (twice; the suite reported no status)"
		note=
		failed=1
	else
		line="FAIL (exit $rc)"
		failed=1
	fi
	summary+=("$(printf 'run-tests: %-5s %s%s [%ss]' "$k" "$line" "${note:+ ($note)}" "$secs")")
done

printf '%s\n' "${summary[@]}"
exit "$failed"
