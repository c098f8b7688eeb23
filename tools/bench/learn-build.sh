#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# learn-build.sh: host-wide learn mode while building a C project, as a
# ratio to the same build with no agent, in one guest run. Also reports the
# learn events sent, the distinct objects and the losses.
#
# Not --bench: gcc, its headers and libraries come from the host over 9p, and
# under -icount every 9p request moves the guest clock to the next tick, which
# would measure the transport. Plain TCG drifts by a few percent instead, so
# the rounds alternate (no agent, learn, no agent, learn...) and the best of
# each is kept.
#
#   tools/bench/learn-build.sh [--kernel 6.1|6.12] [--rounds N]
#
# The project is bpfwarden's own profile parser (policy/*.c, tests/unit),
# compiled with gcc -O1 file by file from a copy on the guest's tmpfs.
set -euo pipefail
cd "$(dirname "$0")/../.."
kernel=6.12
rounds=3
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--in-vm) inside=1 ;;
	*) echo "usage: $0 [--kernel 6.1|6.12] [--rounds N]" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "${inside:-}" ]; then
	make -s all
	exec tools/vm/vmrun.sh --smp 1 --kernel "$kernel" -- tools/bench/learn-build.sh --in-vm --rounds "$rounds"
fi

BW=$PWD/build/bpfwarden
src=/tmp/bench-src
rm -rf $src && mkdir -p $src
cp policy/*.c policy/*.h include/bpfwarden.h $src/

# The build runs in a cgroup of its own: learn --all leaves the agent's cgroup
# (here the root, like everything else in the guest) alone.
cg=/sys/fs/cgroup/bench-build
mkdir -p $cg

build() { # one clean build in $cg; prints guest nanoseconds
	sh -c 'echo $$ > '$cg'/cgroup.procs
		src='$src'
		rm -f $src/*.o
		t0=$(date +%s%N)
		for f in $src/*.c; do
			gcc -O1 -D_GNU_SOURCE -c -I$src "$f" -o "${f%.c}.o" 2>/dev/null
		done
		t1=$(date +%s%N)
		echo $((t1 - t0))'
}

min() { if [ -z "$1" ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi; }

build >/dev/null # warm the page cache
base="" learn=""
log=/tmp/learn-bench.log
for ((r = 0; r < rounds; r++)); do
	base=$(min "$base" "$(build)")
	$BW learn --all --output /tmp/learn-bench --log $log >/tmp/learn-bench.summary 2>/dev/null &
	agent=$!
	while ! grep -q "learning on" $log 2>/dev/null; do sleep 0.2; done
	learn=$(min "$learn" "$(build)")
	kill -INT $agent
	wait $agent || true
done
events=$(grep -c '"type":"learn"' $log || true)
lost=$(awk -F'"count":' '/"type":"lost"/ {split($2, a, ","); s += a[1]} END {print s + 0}' $log)
objects=$(awk '$1 == "/bench-build" {print $6}' /tmp/learn-bench.summary)
echo "C build of $(ls $src/*.c | wc -l) files with gcc -O1, kernel $(uname -r), best of $rounds rounds, alternating"
printf '%-28s %14s %8s\n' configuration "guest ns" ratio
printf '%-28s %14s %8s\n' "no agent" "$base" "1.000"
printf '%-28s %14s %8s\n' "learn --all" "$learn" "$(awk "BEGIN{printf \"%.3f\", $learn / $base}")"
echo "learn events sent (all rounds): $events; distinct objects of the build cgroup (last round): ${objects:-0}; lost: $lost"
