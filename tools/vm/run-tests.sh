#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-tests.sh: run the integration suite (tests/integration/run.sh) in a
# QEMU guest on each Debian kernel we support, the kernels at once (`make
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
#   BW_VM_SERIAL   1: one kernel after the other, output unprefixed
#   BW_VM_SUITE    the guest's suite (default tests/integration/run.sh)
#   BW_VM_TAG      in the logs' names: build/vmtest-TAG-KERNEL.log
#   BW_VM_KARGS    more kernel parameters (vmrun.sh); a later lsm= wins
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

# One kernel's run, retried once if its guest died: the result line goes
# to $1 (the caller's summary), the suite's output to stdout.
run_kernel() {
	local k=$1 result=$2 start=$SECONDS note= rc line attempt tests="${*:3}"
	for attempt in 1 2; do
		echo "run-tests: === kernel $k${note:+ (retry)}: $SUITE${tests:+ $tests} ==="
		"$VM_DIR/vmrun.sh" --kernel "$k" "${timeout_opt[@]}" -- "$SUITE" "${@:3}" </dev/null
		rc=$?
		if [ "$rc" != "$EXIT_DEAD" ] || [ "$attempt" = 2 ]; then
			break
		fi
		echo "run-tests: kernel $k: GUEST-DIED without reporting a status; retrying once"
		note="after a guest death and a retry"
	done
	if [ "$rc" = 0 ]; then
		line="PASS"
	elif [ "$rc" = "$EXIT_DEAD" ]; then
		line="GUEST-DIED (twice; the suite reported no status)"
		note=
	else
		line="FAIL (exit $rc)"
	fi
	printf 'run-tests: %-5s %s%s [%ss]\n' "$k" "$line" "${note:+ ($note)}" "$((SECONDS - start))" >"$result"
	[ "$rc" = 0 ]
}

results=$(mktemp -d "${TMPDIR:-/tmp}/bw-run-tests.XXXXXX")
trap 'rm -rf "$results"' EXIT
failed=0
if [ "${BW_VM_SERIAL:-0}" = 1 ] || [ ${#kernels[@]} = 1 ]; then
	for k in "${kernels[@]}"; do
		run_kernel "$k" "$results/$k" "$@" || failed=1
	done
else
	# The guests run at once: a guest under TCG keeps about one host core
	# busy (the verifier and most tests are one thread), so two kernels take
	# little longer than one. Each line is prefixed with its kernel, and each
	# kernel's whole output is also kept, unmixed, in build/vmtest-KERNEL.log.
	mkdir -p "$ROOT/build"
	logs_kept=1
	pids=()
	for k in "${kernels[@]}"; do
		(
			set -o pipefail
			run_kernel "$k" "$results/$k" "$@" 2>&1 | tee "$ROOT/build/vmtest${BW_VM_TAG:+-$BW_VM_TAG}-$k.log" |
				sed -u "s/^/[$k] /"
		) &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || failed=1
	done
	for k in "${kernels[@]}"; do
		echo "run-tests: kernel $k's whole output: build/vmtest${BW_VM_TAG:+-$BW_VM_TAG}-$k.log"
	done
fi

# CI keeps only the tail of what a run printed: repeat each failure, with
# the first lines of its description, where that tail will show it.
failures() {
	awk -v k="$1" '
		/^(FAIL |OPEN |broken |failed )/ { n = 12; shown++ }
		n > 0 && shown <= 6 { print "run-tests: [" k "] " $0; n-- }
	' "$2"
}
for k in "${kernels[@]}"; do
	log="$ROOT/build/vmtest${BW_VM_TAG:+-$BW_VM_TAG}-$k.log"
	[ "$failed" = 0 ] || [ -z "${logs_kept:-}" ] || failures "$k" "$log"
done
for k in "${kernels[@]}"; do
	cat "$results/$k" 2>/dev/null || { echo "run-tests: $k: no result"; failed=1; }
done
exit "$failed"
