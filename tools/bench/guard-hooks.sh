#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# guard-hooks.sh: the cost of the hooks of other processes, the agent itself
# and descriptors from outside (bpf/guard.bpf.c, bpf/receive.bpf.c) for a
# process outside every sandbox, as ratios to the same loop with no agent
# loaded, side by side in one guest run; then, for the calls a sandbox may
# make, governed. Outside the VM it boots one (tools/vm/vmrun.sh --bench:
# guest time counts instructions).
#
#   tools/bench/guard-hooks.sh [--kernel 6.1|6.12] [--iterations N] [--timeout S]
#
# Loops (tests/helpers/guardloop.c): kill of a child (task_kill),
# setpriority and prlimit of itself (task_setnice, task_setrlimit),
# process_vm_readv of a child (ptrace_access_check), bpf(2) (bpf), a
# descriptor passed over a socketpair (file_receive).
. "$(dirname "$0")/common.sh"
bench_start tools/bench/guard-hooks.sh "$@"

mkdir -p "$dir"
cp build/tests/guardloop $dir/guardloop # off 9p: see docs/testing.md
LOOP=$dir/guardloop
cat >$dir/p.profile <<PROFILE
profile bench
default allow
PROFILE

declare -A base ungov gov
modes="kill nice rlimit vmread bpf receive"
for m in $modes; do base[$m]=$(best $LOOP $m "$iters"); done
$BW run --profile $dir/p.profile --log /dev/null -- true # load and pin the programs
for m in $modes; do ungov[$m]=$(best $LOOP $m "$iters"); done
for m in $modes; do
	[ $m = bpf ] && continue # refused in a sandbox
	gov[$m]=$(best $BW run --profile $dir/p.profile --log /dev/null -- $LOOP $m "$iters")
done

echo "guard and receive hooks, $iters iterations, kernel $(uname -r), best of 3; ns/iter (ratio)"
printf '%-36s %18s %18s %18s\n' call "no agent" "not governed" "governed"
for m in $modes; do
	case $m in
	kill) what="kill a child (task_kill)" ;;
	nice) what="setpriority (task_setnice)" ;;
	rlimit) what="prlimit (task_setrlimit)" ;;
	vmread) what="process_vm_readv (ptrace_access)" ;;
	bpf) what="bpf(2) (bpf)" ;;
	receive) what="SCM_RIGHTS (file_receive)" ;;
	esac
	g="refused"
	[ -n "${gov[$m]:-}" ] && g="${gov[$m]} ($(awk "BEGIN{printf \"%.3f\", ${gov[$m]} / ${base[$m]}}"))"
	printf '%-36s %18s %18s %18s\n' "$what" "${base[$m]} (1.000)" \
		"${ungov[$m]} ($(awk "BEGIN{printf \"%.3f\", ${ungov[$m]} / ${base[$m]}}"))" "$g"
done
