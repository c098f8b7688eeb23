#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# learn-peers.sh: what recording a program's opens costs the whole machine,
# learn mode beside auditd and bpftrace recording the same opens, in one
# guest run (tools/vm/vmrun.sh --bench: guest time counts instructions).
# Peers from bookworm's packages, unpacked by tools/vm/fetch-peers.sh.
#
#   tools/bench/learn-peers.sh [--iterations N] [--rounds R] [--timeout S]
#
# Workloads (tests/helpers/sysloop.c, static, from the guest's tmpfs): one
# file opened and closed N times (default 200,000); 5,000 distinct files
# each opened once, R times over (default 10), each round in a fresh cgroup
# (learn keeps one record per cgroup and object: a new cgroup learns them
# all again) and, for the others, the same files again.
#
# What is counted: the busy time of every CPU of the guest (/proc/stat:
# user, nice, system, irq, softirq) from just before the loop until 2 s
# after it ends, so that the recorder's own work (the agent, auditd and the
# kernel's kauditd, bpftrace) is in the figure, whichever task does it. The
# recorders are started and stopped outside that window. Each figure is the
# median of 3 measurements; the overhead of a recorder is its busy time less
# the no-recorder one, per open, and the ratio is auditd's (or bpftrace's)
# overhead to learn mode's.
#
# Recorders:
#   learn     bpfwarden learn --cgroup on the loop's cgroup (default deny:
#             every open is learned; the kernel sends each distinct one once)
#   auditd    auditd 3.0.9 logging to the guest's tmpfs (flush
#             incremental_async), the rule -a always,exit -S openat -F exe=LOOP;
#             the kernel waits for auditd when its backlog is full rather
#             than lose records; their count is checked
#   bpftrace  bpftrace 0.17 printing pid and file name of each openat of the
#             loop (tracepoint syscalls:sys_enter_openat, comm filter) to a
#             file; its lost-event count is printed
. "$(dirname "$0")/common.sh"

PEERS=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}/peers/root
if [ "${1:-}" != --in-vm ]; then
	iters=200000 rounds=10 timeout=2400
	while [ $# -gt 0 ]; do
		case $1 in
		--iterations) iters=$2; shift ;;
		--rounds) rounds=$2; shift ;;
		--timeout) timeout=$2; shift ;;
		*) echo "usage: $0 [--iterations N] [--rounds R] [--timeout S]" >&2; exit 2 ;;
		esac
		shift
	done
	make -s all
	tools/vm/fetch-peers.sh --quiet
	exec tools/vm/vmrun.sh --bench --kernel 6.12 --timeout "$timeout" -- \
		tools/bench/learn-peers.sh --in-vm "$iters" "$rounds"
fi
iters=$2 rounds=$3
BW=build/bpfwarden
dir=/tmp/bench
nfiles=5000
mkdir -p "$dir" "$dir/audit" $dir/many
cp build/tests/sysloop $dir/sysloop # off 9p: see docs/testing.md
LOOP=$dir/sysloop
echo data >$dir/one
for ((i = 0; i < nfiles; i++)); do : >$dir/many/$i; done
export LD_LIBRARY_PATH=$PEERS/usr/lib/x86_64-linux-gnu:$PEERS/lib/x86_64-linux-gnu
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing

busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
hz=$(getconf CLK_TCK)

# workload NAME: run it (in the current cgroup) and print how many opens it made.
workload() {
	local r
	case $1 in
	one)
		$LOOP open $dir/one "$iters" >/dev/null
		echo "$iters"
		;;
	many)
		for ((r = 0; r < rounds; r++)); do $LOOP distinct $dir/many $nfiles >/dev/null; done
		echo $((rounds * nfiles))
		;;
	esac
}

# window CGROUP NAME: the busy ms of the workload run in CGROUP and the 2 s after it.
window() {
	local c=$1 b0 b1
	b0=$(busy)
	(echo $BASHPID >"$c/cgroup.procs" && workload "$2" >/dev/null)
	sleep 2
	b1=$(busy)
	echo $(((b1 - b0) * 1000 / hz))
}

freshcg() { local c=$cg/bench/lp-$RANDOM$RANDOM; mkdir -p "$c"; echo "$c"; }

# The recorders: start RECORDER CGROUP / stop RECORDER.
start() {
	case $1 in
	none) ;;
	learn)
		: >$dir/learn.log
		$BW learn --cgroup "$2" --output $dir/learned.profile --log $dir/learn.log 2>/dev/null &
		rec=$!
		for _ in $(seq 600); do grep -q governing $dir/learn.log && break; sleep 0.1; done
		grep -q governing $dir/learn.log || { echo "learn did not govern" >&2; exit 1; }
		;;
	auditd)
		rm -f $dir/audit/audit.log
		cat >$dir/audit/auditd.conf <<-EOF
			log_file = $dir/audit/audit.log
			log_format = RAW
			flush = INCREMENTAL_ASYNC
			freq = 50
			max_log_file = 0
			max_log_file_action = IGNORE
			space_left = 2
			space_left_action = IGNORE
			admin_space_left = 1
			admin_space_left_action = IGNORE
			disk_full_action = IGNORE
			disk_error_action = IGNORE
			write_logs = yes
			q_depth = 4000
		EOF
		$PEERS/sbin/auditd -n -c $dir/audit 2>$dir/audit/stderr &
		rec=$!
		for _ in $(seq 100); do $PEERS/sbin/auditctl -s 2>/dev/null | grep -q "pid $rec" && break; sleep 0.1; done
		$PEERS/sbin/auditctl -D >/dev/null
		$PEERS/sbin/auditctl -b 8192 --backlog_wait_time 60000 >/dev/null
		$PEERS/sbin/auditctl -a always,exit -F arch=b64 -S openat -F exe=$LOOP -k bwbench >/dev/null
		;;
	bpftrace)
		: >$dir/bt.out
		$PEERS/usr/bin/bpftrace -o $dir/bt.out -e \
			'tracepoint:syscalls:sys_enter_openat /comm == "sysloop"/ { printf("%d %s\n", pid, str(args->filename)); }' \
			2>$dir/bt.err &
		rec=$!
		for _ in $(seq 600); do grep -q Attaching $dir/bt.out && break; sleep 0.1; done
		grep -q Attaching $dir/bt.out || { echo "bpftrace did not attach: $(cat $dir/bt.err)" >&2; exit 1; }
		;;
	esac
}
stop() {
	case $1 in
	none) ;;
	auditd)
		$PEERS/sbin/auditctl -D >/dev/null
		lost_audit=$($PEERS/sbin/auditctl -s | awk '$1 == "lost" { print $2 }')
		kill $rec
		wait $rec || true
		;;
	*)
		kill -INT $rec
		wait $rec || true
		;;
	esac
}

declare -A res note
for w in one many; do
	for r in none learn auditd bpftrace; do
		vals=()
		for _ in 1 2 3 4; do # the first not counted
			c=$(freshcg)
			start $r "$c"
			vals+=("$(window "$c" $w)")
			stop $r # the records are complete once the recorder has stopped
			case $r in
			auditd) n=$(grep -c 'key="bwbench"' $dir/audit/audit.log || true) ;;
			bpftrace) n=$(grep -c "^[0-9]* $dir/" $dir/bt.out || true) ;;
			learn) n=$(grep -c "$dir" $dir/learned.profile 2>/dev/null || true) ;;
			*) n= ;;
			esac
			note[$r,$w]="recorded $n"
			if [ $r = auditd ]; then note[$r,$w]+=", lost ${lost_audit:-?}"; fi
			if [ $r = bpftrace ]; then
				note[$r,$w]+=", $(grep -o 'Lost [0-9]* events' $dir/bt.out | head -1 || true)"
			fi
			rmdir "$c" 2>/dev/null || true
		done
		res[$r,$w]=$(printf '%s\n' "${vals[@]:1}" | sort -g | sed -n 2p)
	done
done

echo "recording opens, kernel $(uname -r): busy ms of every CPU for the loop and 2 s after, median of 3"
for w in one many; do
	case $w in
	one) opens=$iters; echo "one file opened $iters times" ;;
	many) opens=$((rounds * nfiles)); echo "$nfiles distinct files, each once, $rounds rounds ($opens opens)" ;;
	esac
	printf '  %-10s %10s %16s %12s  %s\n' recorder "busy ms" "overhead/open" "vs learn" "what it recorded"
	lo=$(awk "BEGIN{print (${res[learn,$w]} - ${res[none,$w]}) * 1e6 / $opens}")
	for r in none learn auditd bpftrace; do
		ov=$(awk "BEGIN{print (${res[$r,$w]} - ${res[none,$w]}) * 1e6 / $opens}")
		vs=
		case $r in
		auditd | bpftrace) vs=$(awk "BEGIN{ if ($lo > 0) printf \"%.1fx\", $ov / $lo; else print \"-\" }") ;;
		esac
		printf '  %-10s %10s %13.0f ns %12s  %s\n' $r "${res[$r,$w]}" "$ov" "$vs" "${note[$r,$w]:-}"
	done
done
echo "learn's record is its profile: the lines naming the bench files (generalised: not one per file)."
