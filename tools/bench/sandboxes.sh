#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# sandboxes.sh: many sandboxes on one host, each with a profile of its own,
# in one guest run: how long they take to start, what each costs in memory,
# and what a governed open() costs in one more sandbox while they all run,
# against the same with none of them running (ratios to no agent, under
# instruction counting).
#
#   tools/bench/sandboxes.sh [--sandboxes N] [--iterations N] [--kernel 6.12]
#
# N (default 1000) `bpfwarden run -- sleep` agents, sandbox i's profile
# denying its own file among 10 rules. The guest gets 8 GiB: each agent and
# its ring buffer take about 5 MB.
. "$(dirname "$0")/common.sh"

if [ "${1:-}" != --in-vm ]; then
	kernel=6.12 n=1000 iters=20000 mode=--bench
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) kernel=$2; shift ;;
		--sandboxes) n=$2; shift ;;
		--iterations) iters=$2; shift ;;
		*) echo "usage: $0 [--sandboxes N] [--iterations N] [--kernel 6.12]" >&2; exit 2 ;;
		esac
		shift
	done
	[ "$kernel" = 6.1 ] && mode= # no instruction counting there (docs/testing.md)
	make -s all bench-tools
	exec tools/vm/vmrun.sh $mode --mem 8G --timeout 5400 --kernel "$kernel" ${BW_VM_VERBOSE:+--verbose} -- \
		tools/bench/sandboxes.sh --in-vm "$n" "$iters"
fi
n=$2 iters=$3
BW=build/bpfwarden
LOOP=build/tests/openloop
dir=/tmp/bench
mkdir -p $dir/sb
# With a second name its verdict is never kept (bpf/dcache.bpf.h): every open decides.
echo x >$dir/target
ln -f $dir/target $dir/target.link

prof() { # prof I: sandbox I's profile
	echo "profile sb$1"
	echo "default allow"
	echo "deny file r $dir/sb/f$1"
	echo "deny file rw /etc/shadow"
	for ((r = 3; r < 10; r++)); do echo "allow file r $dir/rule$r/**"; done
}
for ((i = 0; i <= n; i++)); do prof $i >$dir/sb/p$i.profile; touch $dir/sb/f$i; done

maps_kib() { bpftool -j map show | python3 -c '
import json, sys
print(sum(m.get("bytes_memlock", 0) for m in json.load(sys.stdin)) // 1024)'; }

# open() in one more sandbox, as a ratio to the same loop with no agent.
open_ratio() {
	local none gov
	none=$(stats incg $LOOP $dir/target $iters | cut -d' ' -f1)
	gov=$(stats $BW run --profile $dir/sb/p$n.profile --log /dev/null -- $LOOP $dir/target $iters |
		cut -d' ' -f1)
	awk "BEGIN {printf \"%.3f\", $gov / $none}"
}

$BW run --profile $dir/sb/p0.profile --log /dev/null -- true # load and pin the programs
sleep 10 # what loading left to do (common.sh, stats)
alone=$(open_ratio)
before=$(maps_kib)
t0=$(date +%s%N)
pids=()
for ((i = 0; i < n; i++)); do
	$BW run --profile $dir/sb/p$i.profile --log $dir/sb/$i.log -- sleep 100000 &
	pids+=($!)
done
up=0
for _ in $(seq 36000); do
	up=$( (grep -l governing $dir/sb/*.log 2>/dev/null || true) | wc -l)
	[ "$up" -ge "$n" ] && break
	gone=0
	for p in "${pids[@]}"; do kill -0 $p 2>/dev/null || gone=$((gone + 1)); done
	[ "$gone" = 0 ] || break
	sleep 0.5
done
t1=$(date +%s%N)
if [ "$up" -lt "$n" ]; then
	echo "sandboxes.sh: $up of $n sandboxes governing; the first errors:" >&2
	grep -h -v governing $dir/sb/*.log 2>/dev/null | head -5 >&2
	exit 1
fi
sleep 10
after=$(maps_kib)
rss=0 pss=0
for p in "${pids[@]}"; do
	read -r r s < <(awk '/^Rss:/ { r = $2 } /^Pss:/ { s = $2 } END { print r, s }' /proc/$p/smaps_rollup)
	rss=$((rss + r)) pss=$((pss + s))
done
with=$(open_ratio)
# Each is still enforcing its own profile.
denied=0
for i in 0 $((n / 2)) $((n - 1)); do
	$BW run --profile $dir/sb/p$i.profile --log /dev/null -- cat $dir/sb/f$i 2>/dev/null ||
		denied=$((denied + 1))
done
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null || true

echo "$n sandboxes at once, each its own profile (10 rules), kernel $(uname -r), open() of a file with two names, $iters iterations"
printf '  %-60s %10s\n' "all governing after (guest s)" "$(awk "BEGIN {printf \"%.1f\", ($t1 - $t0) / 1e9}")"
printf '  %-60s %10s\n' "agent process, proportional (Pss), each (KiB)" $((pss / n))
printf '  %-60s %10s\n' "agent process, resident (Rss), each (KiB)" $((rss / n))
printf '  %-60s %10s\n' "BPF map memory added, each (KiB)" $(((after - before) / n))
printf '  %-60s %10s\n' "governed open() in one more sandbox, alone (ratio)" "$alone"
printf '  %-60s %10s\n' "governed open() in one more sandbox, beside the $n (ratio)" "$with"
printf '  %-60s %10s\n' "sandboxes checked still refusing their own file (of 3)" "$denied"
