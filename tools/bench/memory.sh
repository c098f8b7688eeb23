#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# memory.sh: what one sandbox costs in memory, in one guest run: the agent
# process of each `bpfwarden run` (resident and proportional set size, from
# /proc/PID/smaps_rollup) and the BPF map memory that exists for it (the
# kernel's memlock figure of each map, from bpftool), beside what every
# sandbox shares (the pinned maps and programs loaded once).
#
#   tools/bench/memory.sh [--kernel 6.1|6.12] [--sandboxes N]
#
# N sandboxes (default 8) run `sleep` under a 10-rule profile at once; the
# figures are taken while all of them are governed.
. "$(dirname "$0")/common.sh"

if [ "${1:-}" != --in-vm ]; then
	kernel=6.12 n=8
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) kernel=$2; shift ;;
		--sandboxes) n=$2; shift ;;
		*) echo "usage: $0 [--kernel 6.1|6.12] [--sandboxes N]" >&2; exit 2 ;;
		esac
		shift
	done
	make -s all
	exec tools/vm/vmrun.sh --kernel "$kernel" --timeout 900 -- tools/bench/memory.sh --in-vm "$n"
fi
n=$2
BW=build/bpfwarden
dir=/tmp/bench
mkdir -p "$dir"
{
	echo "profile bench"
	echo "default allow"
	echo "deny file rw /etc/shadow"
	for ((i = 3; i < 10; i++)); do echo "allow file r $dir/rule$i/**"; done
} >$dir/p.profile

# memlock KiB of the maps bpftool lists, by name; total of those matching RE.
maps_kib() { bpftool -j map show | python3 -c '
import json, re, sys
pat = re.compile(sys.argv[1])
print(sum(m.get("bytes_memlock", 0) for m in json.load(sys.stdin) if pat.search(m.get("name", ""))) // 1024)
' "$1"; }
progs_kib() { bpftool -j prog show | python3 -c '
import json, sys
print(sum(p.get("bytes_memlock", 0) for p in json.load(sys.stdin) if p.get("name", "").startswith("bw_")) // 1024)'; }

$BW run --profile $dir/p.profile --log /dev/null -- true # load and pin the programs
shared_maps=$(maps_kib '^bw_')
shared_progs=$(progs_kib)
before_all=$(maps_kib '.')
pids=()
for ((i = 0; i < n; i++)); do
	$BW run --profile $dir/p.profile --log /dev/null -- sleep 600 &
	pids+=($!)
done
for _ in $(seq 600); do
	[ "$(ls /sys/fs/cgroup/bpfwarden 2>/dev/null | grep -c '^run-')" -ge "$n" ] && break
	sleep 0.1
done
sleep 2
after_all=$(maps_kib '.')
rss=0 pss=0
for p in "${pids[@]}"; do
	read -r r s < <(awk '/^Rss:/ { r = $2 } /^Pss:/ { s = $2 } END { print r, s }' /proc/$p/smaps_rollup)
	rss=$((rss + r)) pss=$((pss + s))
done
echo "memory per sandbox, kernel $(uname -r), $n sandboxes at once (bpfwarden run -- sleep, 10 rules)"
printf '  %-52s %8s KiB\n' "agent process, resident (Rss), each" $((rss / n))
printf '  %-52s %8s KiB\n' "agent process, proportional (Pss), each" $((pss / n))
printf '  %-52s %8s KiB\n' "BPF maps made for the sandbox (its ring buffer), each" $(((after_all - before_all) / n))
printf '  %-52s %8s KiB\n' "shared by every sandbox: the pinned maps" "$shared_maps"
printf '  %-52s %8s KiB\n' "shared by every sandbox: the programs" "$shared_progs"
printf '  %-52s %8s KiB\n' "the kernel's BTF (each agent reads it once at start)" \
	$(($(stat -c %s /sys/kernel/btf/vmlinux) / 1024))
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null || true
