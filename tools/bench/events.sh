#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# events.sh: the event pipeline's highest sustained rate with none lost,
# and what happens past it. One sandbox whose profile refuses one file;
# tools/bench/evpace.c tries to open it at a fixed rate for a few seconds
# of guest time, each attempt one deny event through the ring buffer into
# the JSON Lines log. Per rate: the events offered, how many the kernel
# refused, how many the log holds, how many it reports lost (ring buffer
# full) and throttled (--event-rate), whether these add up to the
# refusals ("all told": nothing vanished without a `lost` record), and the
# agent's CPU time per logged event. Run with --event-rate 0 (no limit),
# then flat out at the default limit (1,000 a second per cgroup); "x2":
# two producers at once.
#
#   tools/bench/events.sh [--kernel 6.1|6.12] [--seconds S] [--vcpus N] [--timeout S]
#
# In the --bench guest (one vCPU, guest time counts instructions): the
# producer and the agent share the one CPU, so the highest rate is the one
# the pair sustain together, and "a second" is a second of guest time.
# --vcpus 2: plain TCG with two vCPUs (real time, noisier), where the
# producer has a CPU of its own and can outrun the agent: what happens past
# the highest rate. Each row is the median of 3 runs (the lost column's
# spread beside it).
. "$(dirname "$0")/common.sh"

if [ "${1:-}" != --in-vm ]; then
	kernel=6.12 secs=2 timeout=1800 vcpus=1
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) kernel=$2; shift ;;
		--seconds) secs=$2; shift ;;
		--vcpus) vcpus=$2; shift ;;
		--timeout) timeout=$2; shift ;;
		*) echo "usage: $0 [--kernel 6.1|6.12] [--seconds S] [--vcpus N] [--timeout S]" >&2; exit 2 ;;
		esac
		shift
	done
	make -s all bench-tools
	bench_mode "$kernel" "$vcpus"
	exec tools/vm/vmrun.sh $mode --kernel "$kernel" --timeout "$timeout" -- \
		tools/bench/events.sh --in-vm "$secs"
fi
secs=$2
BW=build/bpfwarden
PACE=build/bench/evpace
dir=/tmp/bench
mkdir -p $dir
echo secret >$dir/secret
echo open >$dir/open
printf 'profile events\ndefault allow\ndeny file r %s/secret\n' $dir >$dir/ev.profile

# cpu CMD...: runs CMD (the agent, evpace below it, one line per producer)
# and prints the producers' lines summed (the longest time), then the CPU
# seconds of all it ran.
cpu() {
	python3 -c '
import resource, subprocess, sys
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, check=True).stdout.decode()
lines = [[float(v) for v in line.split()] for line in out.splitlines()]
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%d %d %.0f %.0f" % (sum(l[0] for l in lines), sum(l[1] for l in lines),
                           max(l[2] for l in lines), sum(l[3] for l in lines)),
      r.ru_utime + r.ru_stime)' "$@"
}

# tally LOG: "DENY LOST THROTTLED" from the log, every line parsed (a
# partial line fails the run).
tally() {
	python3 -c '
import json, sys
deny = lost = throttled = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] == "deny":
        deny += 1
    elif e["type"] == "lost":
        if e["reason"] == "throttled":
            throttled += e["count"]
        else:
            lost += e["count"]
print(deny, lost, throttled)' "$1"
}

# one RATE EVENT-RATE FILE [PRODUCERS]: one run, PRODUCERS (default 1)
# evpace at RATE each; "OPENS/S REFUSED LOGGED LOST THROTTLED AGENT_CPU_S".
one() {
	local log=$dir/ev.log attempted refused ns pcpu total deny lost thr
	rm -f $log
	read -r attempted refused ns pcpu total < <(cpu $BW run --profile $dir/ev.profile --log $log \
		--event-rate "$2" -- sh -c 'for _ in $(seq "$1"); do "$0" "$2" "$3" "$4" & done; wait' \
		$PACE "${4:-1}" "$1" "$secs" "$3")
	read -r deny lost thr < <(tally $log)
	awk -v a="$attempted" -v r="$refused" -v ns="$ns" -v p="$pcpu" -v t="$total" \
		-v d="$deny" -v l="$lost" -v th="$thr" \
		'BEGIN { printf "%.0f %d %d %d %d %.6f\n", a / (ns / 1e9), r, d, l, th, t - p / 1e9 }'
}

$BW run --profile $dir/ev.profile --log /dev/null -- true # load and pin the programs
sleep 10 # what loading left to do (common.sh, stats)
# The agent's CPU for a run that sends nothing: its start, its stop and its
# idle wake-ups, taken off the others' so that what is left is per event.
idle=$(for _ in 1 2 3; do one 1000 0 $dir/open | cut -d' ' -f6; done | sort -g | sed -n 2p)

echo "deny events through the ring buffer into the log, $secs s of guest time a run," \
	"kernel $(uname -r), $(nproc) vCPU(s), median of 3"
printf '%-14s %10s %10s %10s %10s %10s %10s %9s %12s\n' "offered/s" "event-rate" "opens/s" \
	"refused" "logged" "lost" "throttled" "all told" "agent us/ev"
row() { # row RATE EVENT-RATE [PRODUCERS]
	local runs name
	runs=$(for _ in 1 2 3; do one "$1" "$2" $dir/secret "${3:-1}"; done | sort -k4,4g)
	# The median run by lost events; the spread is the lost column's.
	read -r rate refused deny lost thr agent < <(sed -n 2p <<<"$runs")
	spread=$(awk 'NR == 1 { lo = $4 } NR == 3 { hi = $4 } END { print hi - lo }' <<<"$runs")
	told=no
	[ $((deny + lost + thr)) = "$refused" ] && told=yes
	per=-
	[ "$deny" -gt 0 ] && per=$(awk -v a="$agent" -v i="$idle" -v d="$deny" \
		'BEGIN { printf "%.1f", (a - i) * 1e6 / d }')
	name=$([ "$1" = 0 ] && echo "flat out" || echo "$1")
	[ "${3:-1}" = 1 ] || name="$name x$3"
	printf '%-14s %10s %10s %10s %10s %10s %10s %9s %12s\n' "$name" \
		"$([ "$2" = 0 ] && echo none || echo "$2")" "$rate" "$refused" "$deny" "$lost (±$spread)" "$thr" \
		"$told" "$per"
}
for r in 5000 10000 20000 30000 40000 50000 100000 0; do row $r 0; done
# Two producers: on two vCPUs, more than one CPU's worth of events.
row 0 0 2
row 0 1000
echo "agent CPU of a run that sends nothing: $idle s (taken off each run's)"
