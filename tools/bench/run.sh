#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh (`make bench`): the benchmark suite, one command in bounded time.
# Each benchmark boots its own guests with a time limit; on 6.12 under
# instruction counting (ratios repeat within 1%), on 6.1, which does not
# boot that way, in plain TCG (noisier, and said so in its output). The
# tables go to build/bench/NAME.txt, the charts of the open benchmark and
# of the calls beside it to build/bench/file-open-6.12.svg and
# syscalls-6.12.svg; docs/performance.md records a run.
#
#   tools/bench/run.sh [--quick]
#     --quick   fewer iterations (a smoke run of the suite, not figures)
#
# About 90 minutes on an idle machine of two cores (1,000 sandboxes take 20).
set -euo pipefail
cd "$(dirname "$0")/../.."
quick=
[ "${1:-}" = --quick ] && quick=1
out=build/bench
mkdir -p "$out"
iters() { [ -n "$quick" ] && echo "--iterations $1" || true; }

run() { # run NAME CMD...
	local name=$1
	shift
	echo "== $name: $*"
	"$@" | tee "$out/$name.txt"
}

start=$(date +%s)
run file-open-6.12 tools/bench/file-open.sh --kernel 6.12 $(iters 2000)
python3 tools/bench/chart.py "$out/file-open-6.12.txt" "$out/file-open-6.12.svg"
run file-open-6.1 tools/bench/file-open.sh --kernel 6.1 $(iters 2000)
run syscalls-6.12 tools/bench/syscalls.sh --kernel 6.12 $(iters 5000)
python3 tools/bench/chart.py --calls "$out/syscalls-6.12.txt" "$out/syscalls-6.12.svg"
run learn-peers-6.12 tools/bench/learn-peers.sh $(iters 20000) $([ -n "$quick" ] && echo --rounds 2 || true)
run mmap-exec-6.12 tools/bench/mmap-exec.sh --kernel 6.12 $(iters 1000)
run guard-hooks-6.12 tools/bench/guard-hooks.sh --kernel 6.12 $(iters 1000)
run start-6.12 tools/bench/start.sh --kernel 6.12
run memory-6.12 tools/bench/memory.sh --kernel 6.12
run events-6.12 tools/bench/events.sh --kernel 6.12 $([ -n "$quick" ] && echo --seconds 0.5 || true)
run sandboxes-6.12 tools/bench/sandboxes.sh --sandboxes "$([ -n "$quick" ] && echo 50 || echo 1000)" $(iters 2000)
run workloads-6.12 tools/bench/workloads.sh --kernel 6.12 $([ -n "$quick" ] && echo --rounds 1 || true)
echo "bench: done in $(($(date +%s) - start)) s; tables in $out/, the charts in $out/file-open-6.12.svg" \
	"and $out/syscalls-6.12.svg"
