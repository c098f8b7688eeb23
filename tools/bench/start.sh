#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# start.sh: how long a sandbox takes to start, by the size of its profile:
# `bpfwarden run --profile P -- true` from exec to exit, in guest time (with
# --bench, instructions: 1 ns each), beside `bpfwarden check P` (reading and
# compiling the same profile, nothing loaded). Outside the VM it boots one.
#
#   tools/bench/start.sh [--kernel 6.1|6.12] [--timeout S]
#
# Profiles of 10, 1,000 and 10,000 rules: subtree allow rules, every tenth
# path also denied for writing, half of the paths existing (pinned by inode,
# hard-link scan of the denied ones), the rest positions for objects that may
# appear later. The first start of a guest loads and pins the programs
# (cold); the others find them pinned (warm). After them, the verifier's
# work on each program (tools/bench/verified.py), what the cold start is
# made of.
. "$(dirname "$0")/common.sh"
bench_start tools/bench/start.sh "$@"

# took N CMD...: "wall cpu" in guest ms of one run of CMD (cpu: user + system
# of it and its children), the run with the least cpu of N. Wall time also
# counts the agent's waits (its loop tick, the child's exit), which under
# --bench the guest's clock skips through.
took() {
	local TIMEFORMAT='%R %U %S' t b="" bc="" n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		t=$( { time "$@" >/dev/null 2>&1; } 2>&1) || { echo "start.sh: failed: $*" >&2; exit 1; }
		read -r r u sy <<<"$t"
		c=$(awk "BEGIN{print ($u + $sy) * 1000}")
		if [ -z "$bc" ] || awk "BEGIN{exit !($c < $bc)}"; then
			bc=$c
			b="$(awk "BEGIN{print $r * 1000}") $c"
		fi
	done
	echo "$b"
}

profile() { # profile NRULES FILE
	local i d
	{
		echo "profile bench"
		echo "default allow"
		for ((i = 0; i < $1; i++)); do
			d=$dir/tree/d$((i % 100))/rule$i
			echo "allow file r $d/**"
			((i % 10)) || echo "deny file w $d/**"
		done
	} >"$2"
	for ((i = 0; i < $1; i += 2)); do
		mkdir -p "$dir/tree/d$((i % 100))/rule$i"
	done
}

mkdir -p "$dir"
for n in 10 1000 10000; do profile $n "$dir/p$n.profile"; done
cold=$(took 1 $BW run --profile "$dir/p10.profile" --log /dev/null -- true)
declare -A run check
for n in 10 1000 10000; do
	check[$n]=$(took 3 $BW check "$dir/p$n.profile")
	run[$n]=$(took 3 $BW run --profile "$dir/p$n.profile" --log /dev/null -- true)
done

echo "bpfwarden start, kernel $(uname -r), guest ms, wall / cpu (user+sys)"
printf '%-40s %16s\n' "" "wall / cpu"
printf '%-40s %16s\n' "first start (loads the programs), 10 rules" "$(echo $cold | tr ' ' /)"
for n in 10 1000 10000; do
	printf '%-40s %16s\n' "check, $n rules" "$(echo ${check[$n]} | tr ' ' /)"
	printf '%-40s %16s\n' "run -- true, $n rules" "$(echo ${run[$n]} | tr ' ' /)"
done
echo
echo "the verifier's work, instructions walked per program (first start)"
tools/bench/verified.py
