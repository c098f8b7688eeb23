# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by the --bench benchmarks (file-open.sh, syscalls.sh, mmap-exec.sh,
# guard-hooks.sh, start.sh) first thing: strict mode and the checkout's root
# as working directory, their options, the guest they run in, the best of 3
# runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# bench_start SCRIPT [--kernel 6.1|6.12] [--iterations N] [--timeout S]: sets $iters, $BW
# (the agent) and $dir (the guest's scratch directory, on tmpfs). Outside
# the VM it builds, runs SCRIPT again in a guest booted with vmrun.sh --bench
# (guest time counts instructions, so ratios repeat) and does not return.
bench_start() {
	local script=$1 kernel=6.12 inside= timeout=600
	shift
	iters=200000
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) kernel=$2; shift ;;
		--iterations) iters=$2; shift ;;
		--timeout) timeout=$2; shift ;; # the guest's, for a loaded machine
		--in-vm) inside=1 ;;
		*) echo "usage: $script [--kernel 6.1|6.12] [--iterations N] [--timeout S]" >&2; exit 2 ;;
		esac
		shift
	done
	if [ -z "$inside" ]; then
		make -s all
		exec tools/vm/vmrun.sh --bench --kernel "$kernel" --timeout "$timeout" -- "$script" --in-vm \
			--iterations "$iters"
	fi
	BW=build/bpfwarden
	dir=/tmp/bench
}

# best CMD...: the fastest of 3 runs of a command that prints one number.
best() {
	local b="" v
	for _ in 1 2 3; do
		v=$("$@")
		if [ -z "$b" ] || awk "BEGIN{exit !($v < $b)}"; then b=$v; fi
	done
	echo "$b"
}

# In the guest (file-open.sh, syscalls.sh): $cg, the cgroup2 root.
cg=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -1)

# incg CMD...: CMD in a cgroup of its own made for it, two levels down as
# `bpfwarden run`'s are (<cgroup2>/bpfwarden/run-PID), and removed after: a
# cgroup that many runs have used costs more per open than a fresh one.
incg() {
	local c=$cg/bench/run-$BASHPID-$RANDOM rc=0
	mkdir -p "$cg/bench"
	mkdir "$c"
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$c" "$@" || rc=$?
	rmdir "$c"
	return $rc
}

# stats CMD...: 3 runs of a command printing one number: "MEDIAN SPREAD%",
# after one run not counted: guest time counts every task's instructions,
# and what the kernel still does after a boot or a program load (deferred
# work, RCU callbacks) would be charged to the first run.
stats() {
	local a b c
	"$@" >/dev/null
	a=$("$@") b=$("$@") c=$("$@")
	printf '%s\n%s\n%s\n' "$a" "$b" "$c" | sort -g | awk '
		{ v[NR] = $1 } END { printf "%.1f %.1f\n", v[2], 100 * (v[3] - v[1]) / v[2] }'
}

# bench_outside SCRIPT DEFAULT-ITERATIONS [--kernel K] [--iterations N] [--timeout S]:
# outside the VM (file-open.sh, syscalls.sh), their options and build; sets
# $kernel, $iters, $timeout and $mode, vmrun.sh's option for the kernel
# (--bench, or nothing on 6.1, which does not boot under -icount).
bench_outside() {
	local script=$1
	iters=$2 kernel=6.12 timeout=1800
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) kernel=$2; shift ;;
		--iterations) iters=$2; shift ;;
		--timeout) timeout=$2; shift ;;
		*) echo "usage: $script [--kernel 6.1|6.12] [--iterations N] [--timeout S]" >&2; exit 2 ;;
		esac
		shift
	done
	make -s all bench-tools
	bench_mode "$kernel"
}

# bench_mode KERNEL [VCPUS]: sets $mode, vmrun.sh's options for the guest:
# --bench (one vCPU, instruction counted), or plain TCG on 6.1, which does
# not boot under -icount, or where more than one vCPU is asked for (VCPUS
# of them; vmrun.sh's default on 6.1 without it); says so when the figures
# will be noisier.
bench_mode() {
	local vcpus=${2:-}
	mode=--bench
	if [ "$1" = 6.1 ]; then
		# It does not boot under -icount (docs/testing.md): plain TCG, noisier.
		mode=${vcpus:+--smp $vcpus}
		echo "6.1: no instruction counting on this kernel; plain TCG, figures vary by 5-10%"
	elif [ -n "$vcpus" ] && [ "$vcpus" != 1 ]; then
		mode="--smp $vcpus" # instruction counting is one vCPU
		echo "$vcpus vCPUs: plain TCG, real time; figures vary from run to run"
	fi
}

# floor_start PROFILE / floor_stop, in the guest: the floor (tools/bench/
# floor.c) on the hooks the agent attaches, read from its pinned links
# after a run under PROFILE; the agent's programs are unloaded meanwhile.
floor_start() {
	$BW run --profile "$1" --log /dev/null -- true
	ls /sys/fs/bpf/bpfwarden/links >$dir/hooks
	$BW reset >/dev/null
	build/bench/floor "$cg" $dir/hooks build/bpf/*.bpf.o >$dir/floor.out &
	floor=$!
	for _ in $(seq 100); do grep -q attached $dir/floor.out 2>/dev/null && break; sleep 0.1; done
	if ! grep -q attached $dir/floor.out; then
		echo "the floor did not attach (build/bench/floor)" >&2
		exit 1
	fi
	sleep 10 # what loading left to do (common.sh, stats)
}
floor_stop() {
	kill $floor
	wait $floor || true
}
