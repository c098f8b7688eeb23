# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by the --bench benchmarks (file-open.sh, mmap-exec.sh), from the
# checkout's root: their options, the guest they run in, the best of 3 runs.

# bench_start SCRIPT [--kernel 6.1|6.12] [--iterations N]: sets $iters. Outside
# the VM it builds, runs SCRIPT again in a guest booted with vmrun.sh --bench
# (guest time counts instructions, so ratios repeat) and does not return.
bench_start() {
	local script=$1 kernel=6.12 inside=
	shift
	iters=200000
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) kernel=$2; shift ;;
		--iterations) iters=$2; shift ;;
		--in-vm) inside=1 ;;
		*) echo "usage: $script [--kernel 6.1|6.12] [--iterations N]" >&2; exit 2 ;;
		esac
		shift
	done
	if [ -z "$inside" ]; then
		make -s all
		exec tools/vm/vmrun.sh --bench --kernel "$kernel" -- "$script" --in-vm --iterations "$iters"
	fi
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
