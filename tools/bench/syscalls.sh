#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# syscalls.sh: what the agent costs the calls beside open() (stat, exec,
# TCP connect refused by the peer, denied by the profile and accepted, UDP
# sendto), as ratios to the same loop with no agent, in one guest run, with
# the floor beside them: empty programs on every hook the agent attaches
# (tools/bench/floor.c), the least any agent on those hooks could cost.
# Outside the VM it boots one (tools/vm/vmrun.sh --bench: guest time counts
# instructions).
#
#   tools/bench/syscalls.sh [--kernel 6.1|6.12] [--iterations N] [--timeout S]
#
# N is the stat loop's count; the others run fewer (exec N/100, connects,
# UDP and TCP N/5, accepted connects N/10). Workloads (tests/helpers/sysloop.c,
# static, run from the guest's tmpfs): stat of /tmp/f2; fork + exec of a
# static program that exits at once + wait; connect to 127.0.0.1:9, where
# nothing listens; connect to 127.0.0.1:10, which the profile denies (EPERM;
# where nothing governs, refused by the peer as port 9 is); connect, accept
# and close on 127.0.0.1:9100; sendto and recv of 64 bytes on 127.0.0.1:9101;
# 64 bytes each way on one TCP connection to 127.0.0.1:9102 (send and recv
# on both ends: the connecting end's peer is decided again after a policy
# change, bpf/tcpconn.bpf.h).
#
# Configurations, each in a fresh child cgroup: no agent; the floor;
# programs loaded, process not governed; governed (enforce), the calls
# allowed by rules; audit mode; learn mode (default deny, every call learned
# once, then repeated); no agent again at the end (the figures did not
# drift). Each figure is the median of 3 runs after one not counted, with
# the spread. A second table, from one more run of each call under the
# floor, not governed and governed with the kernel's BPF run-time
# statistics on, gives the time spent in the programs per call.
. "$(dirname "$0")/common.sh"

if [ "${1:-}" != --in-vm ]; then
	bench_outside "$0" 100000 "$@"
	exec tools/vm/vmrun.sh $mode --kernel "$kernel" --timeout "$timeout" -- \
		tools/bench/syscalls.sh --in-vm "$iters"
fi
iters=$2
BW=build/bpfwarden
dir=/tmp/bench
mkdir -p "$dir"
cp build/tests/sysloop $dir/sysloop # off 9p: see docs/testing.md
LOOP=$dir/sysloop
echo data >/tmp/f2

cat >$dir/p.profile <<PROFILE
profile bench
default allow
deny file rw /etc/shadow
allow file r /tmp/f2
allow exec $dir/sysloop
allow net connect tcp 127.0.0.1:9
allow net connect tcp 127.0.0.1:9100
deny net connect tcp 127.0.0.1:10
allow net bind tcp 127.0.0.1:9100
allow net bind udp 127.0.0.1:9101
allow net connect udp 127.0.0.1:9101
allow net connect tcp 127.0.0.1:9102
allow net bind tcp 127.0.0.1:9102
PROFILE
printf 'profile bench\ndefault deny\n' >$dir/plearn.profile

workloads="stat exec refused denied accepted udp tcp"
# args WORKLOAD CONFIG: sysloop's mode, argument and count.
args() {
	case $1 in
	stat) echo stat /tmp/f2 "$iters" ;;
	exec) echo exec $LOOP $((iters / 100)) ;;
	refused) echo refused 9 $((iters / 5)) ;;
	denied) [ "$2" = gov ] && echo denied 10 $((iters / 5)) || echo refused 10 $((iters / 5)) ;;
	accepted) echo accepted 9100 $((iters / 10)) ;;
	udp) echo udp 9101 $((iters / 5)) ;;
	tcp) echo tcp 9102 $((iters / 5)) ;;
	esac
}

quiet() { "$@" 2>/dev/null; }

declare -A res
measure() { # measure CONFIG CMD... (sysloop's arguments are appended per workload)
	local config=$1 w
	shift
	for w in $workloads; do
		# shellcheck disable=SC2046
		res[$config,$w]=$(stats "$@" $LOOP $(args $w $config))
	done
}

measure base incg

floor_start $dir/p.profile
measure floor incg
floor_stop

$BW run --profile $dir/p.profile --log /dev/null -- true # load and pin the programs
sleep 10
measure ungov incg
measure gov $BW run --profile $dir/p.profile --log /dev/null --
measure audit $BW run --mode audit --profile $dir/p.profile --log /dev/null --
# quiet: not the "learned profile written" line of each run.
measure learn quiet $BW run --mode learn --profile $dir/plearn.profile --output $dir/learned.profile \
	--log /dev/null --
$BW reset >/dev/null
sleep 10
measure again incg

# The same calls once more with the kernel's BPF run-time statistics on:
# the time spent in the programs themselves, per call (what the loop's time
# says with the rest of the kernel around it, and the exec loop's spread
# of 1 to 3% hides). Programs named PREFIX*: bw_ (the agent's) or fl_ (the
# floor's), but the bpf(2) hooks, which only the snapshots' bpftool runs.
# Between the two snapshots only the calls run, and bpftool's start and end.
progns() { # progns PREFIX BEFORE AFTER: ns spent in PREFIX's programs from one snapshot to the next
	python3 -c '
import json, sys
def ns(path):
    return sum(p.get("run_time_ns", 0) for p in json.load(open(path))
               if p.get("name", "").startswith(sys.argv[1])
               and not p["name"].startswith(sys.argv[1] + "bpf"))
print(ns(sys.argv[3]) - ns(sys.argv[2]))' "$@"
}
declare -A hook
hookns() { # hookns CONFIG PREFIX CMD...: ns per call in PREFIX's programs, one run of each workload
	local config=$1 prefix=$2 w n
	shift 2
	for w in $workloads; do
		# shellcheck disable=SC2046
		set -- "$@" $LOOP $(args $w $config)
		n=${*: -1}
		bpftool -j prog show >$dir/progs.before
		"$@" >/dev/null
		bpftool -j prog show >$dir/progs.after
		hook[$config,$w]=$(awk "BEGIN{printf \"%.0f\", $(progns "$prefix" $dir/progs.before \
			$dir/progs.after) / $n}")
		set -- "${@:1:$#-4}"
	done
}
sysctl -q kernel.bpf_stats_enabled=1
floor_start $dir/p.profile
hookns floor fl_ incg
floor_stop
$BW run --profile $dir/p.profile --log /dev/null -- true
sleep 10
hookns ungov bw_ incg
# Governed: an agent started before the calls, not by them (`run` would
# count its own start-up's hooks), on a cgroup the calls then run in.
mkdir -p "$cg/bench/gov"
$BW attach --cgroup "$cg/bench/gov" --profile $dir/p.profile --log $dir/gov.log &
govagent=$!
for _ in $(seq 300); do grep -q governing $dir/gov.log 2>/dev/null && break; sleep 0.1; done
grep -q governing $dir/gov.log || { echo "attach did not govern: $(cat $dir/gov.log)" >&2; exit 1; }
ingov() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg/bench/gov" "$@"; }
hookns gov bw_ ingov
kill $govagent
wait $govagent || true
rmdir "$cg/bench/gov"
sysctl -q kernel.bpf_stats_enabled=0
$BW reset >/dev/null

declare -A label=(
	[stat]="stat"
	[exec]="fork+exec+wait"
	[refused]="connect, refused by the peer"
	[denied]="connect, denied by the profile"
	[accepted]="connect+accept"
	[udp]="UDP sendto+recv"
	[tcp]="TCP 64 bytes each way"
)
configs="base floor ungov gov audit learn again"
echo "calls beside open(), kernel $(uname -r), $(sed -n 's/^floor: //p' $dir/floor.out) for the floor," \
	"median of 3 (spread); ns per call and ratio to no agent"
printf '%-32s %14s' call "no agent"
for c in floor ungov gov audit learn again; do
	case $c in
	floor) h="floor" ;;
	ungov) h="not governed" ;;
	gov) h="governed" ;;
	audit) h="audit" ;;
	learn) h="learn" ;;
	again) h="no agent again" ;;
	esac
	printf '%22s' "$h"
done
echo
for w in $workloads; do
	read -r bns _ <<<"${res[base,$w]}"
	printf '%-32s %14s' "${label[$w]}" "$(printf '%.0f ns' "$bns")"
	for c in floor ungov gov audit learn again; do
		read -r ns spread <<<"${res[$c,$w]}"
		printf '%22s' "$(awk "BEGIN{printf \"%.0f %.3f (%.1f%%)\", $ns, $ns / $bns, $spread}")"
	done
	echo
done
echo "governed, 'connect, denied by the profile' is the refusal (EPERM) and its"
echo "event; elsewhere that connect is refused by the peer, as port 9's is."
echo
echo "time in the programs per call (kernel.bpf_stats_enabled, one run), ns, and the"
echo "agent's over the floor's in points of the call without an agent"
printf '%-32s %14s %14s %14s %18s %18s\n' call floor "not governed" governed "not governed-floor" "governed-floor"
for w in $workloads; do
	read -r bns _ <<<"${res[base,$w]}"
	printf '%-32s %14s %14s %14s %18s %18s\n' "${label[$w]}" "${hook[floor,$w]}" "${hook[ungov,$w]}" \
		"${hook[gov,$w]}" "$(awk "BEGIN{printf \"%+.2f\", 100 * (${hook[ungov,$w]} - ${hook[floor,$w]}) / $bns}")" \
		"$(awk "BEGIN{printf \"%+.2f\", 100 * (${hook[gov,$w]} - ${hook[floor,$w]}) / $bns}")"
done
