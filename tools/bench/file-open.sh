#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# file-open.sh: the cost of the file hooks on an open()+close() loop, as
# ratios to the same loop with no agent loaded, measured side by side in one
# guest run. Outside the VM it boots one (tools/vm/vmrun.sh --bench: guest
# time counts instructions, so the ratios repeat from run to run).
#
#   tools/bench/file-open.sh [--kernel 6.1|6.12] [--iterations N] [--timeout S]
#
# Configurations: no agent; programs loaded, process ungoverned; governed
# with 10, 1,000 and 10,000 rules (default allow, the file matched by a
# subtree rule, one deny rule on another file system, so no pin climb); and
# with a deny rule on the file's own file system (the pin climb runs); and
# learn mode under default deny (the file learned once, then repeated).
. "$(dirname "$0")/common.sh"
bench_start tools/bench/file-open.sh "$@"

LOOP=build/tests/openloop
mkdir -p "$dir/data/lib/python3/json"
target=$dir/data/lib/python3/json/decoder.py
echo data >"$target"

profile() { # profile NRULES FILE
	{
		echo "profile bench"
		echo "default allow"
		echo "deny file rw /etc/shadow"
		echo "allow file r $dir/data/**"
		for ((i = 2; i < $1; i++)); do
			echo "allow file r $dir/rule$i/**"
		done
	} >"$2"
}

base=$(best $LOOP "$target" "$iters")
profile 10 $dir/p10.profile
$BW run --profile $dir/p10.profile --log /dev/null -- true # load and pin the programs
ungov=$(best $LOOP "$target" "$iters")
declare -A gov
for n in 10 1000 10000; do
	profile $n $dir/p$n.profile
	gov[$n]=$(best $BW run --profile $dir/p$n.profile --log /dev/null -- $LOOP "$target" "$iters")
done
echo secret >$dir/secret
profile 10 $dir/pclimb.profile
echo "deny file rw $dir/secret" >>$dir/pclimb.profile
climb=$(best $BW run --profile $dir/pclimb.profile --log /dev/null -- $LOOP "$target" "$iters")
# Learn mode under default deny: every open is learned once, then repeats.
printf 'profile bench\ndefault deny\n' >$dir/plearn.profile
learn=$(best $BW run --mode learn --profile $dir/plearn.profile --output $dir/learned.profile \
	--log /dev/null -- $LOOP "$target" "$iters")

ratio() { awk "BEGIN{printf \"%.3f\", $1 / $base}"; }
echo "open+close of $target, $iters iterations, kernel $(uname -r), best of 3"
printf '%-34s %10s %8s\n' configuration ns/iter ratio
printf '%-34s %10s %8s\n' "no agent" "$base" "1.000"
printf '%-34s %10s %8s\n' "loaded, process not governed" "$ungov" "$(ratio "$ungov")"
for n in 10 1000 10000; do
	printf '%-34s %10s %8s\n' "governed, $n rules" "${gov[$n]}" "$(ratio "${gov[$n]}")"
done
printf '%-34s %10s %8s\n' "governed, deny pin on same fs" "$climb" "$(ratio "$climb")"
printf '%-34s %10s %8s\n' "learn, the same file repeated" "$learn" "$(ratio "$learn")"
