#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mmap-exec.sh: the cost of the mapping hooks (mmap_file, bpf/exec.bpf.c) on
# an mmap()+munmap() loop of one page, as ratios to the same loop with no
# agent loaded, side by side in one guest run. Outside the VM it boots one
# (tools/vm/vmrun.sh --bench: guest time counts instructions).
#
#   tools/bench/mmap-exec.sh [--kernel 6.1|6.12] [--iterations N] [--timeout S]
#
# Mappings: a file readable (returns before any lookup), anonymous memory
# executable (likewise), a file executable (one lookup when not governed;
# decided when governed, the file allowed by `allow exec lib`); then the same
# two mapped readable and made executable by mprotect (file_mprotect:
# anonymous memory returns before any lookup, a file costs one lookup when not
# governed and is decided, its path walked, when governed).
. "$(dirname "$0")/common.sh"
bench_start tools/bench/mmap-exec.sh "$@"

LOOP=build/tests/mmaploop
mkdir -p "$dir/lib"
# A file on tmpfs (off 9p: see docs/testing.md), one page of it mapped.
target=$dir/lib/libdata.so
head -c 4096 /dev/zero >"$target"
cp $LOOP $dir/mmaploop
LOOP=$dir/mmaploop

cat >$dir/p.profile <<PROFILE
profile bench
default allow
deny file rw /etc/shadow
allow exec lib $dir/lib/**
PROFILE

declare -A base ungov gov
modes="r anonx rx anonpx rpx"
for m in $modes; do base[$m]=$(best $LOOP $m "$target" "$iters"); done
$BW run --profile $dir/p.profile --log /dev/null -- true # load and pin the programs
for m in $modes; do ungov[$m]=$(best $LOOP $m "$target" "$iters"); done
for m in $modes; do
	gov[$m]=$(best $BW run --profile $dir/p.profile --log /dev/null -- $LOOP $m "$target" "$iters")
done

echo "mmap+munmap of one page, $iters iterations, kernel $(uname -r), best of 3; ns/iter (ratio)"
printf '%-28s %18s %18s %18s\n' mapping "no agent" "not governed" "governed"
for m in $modes; do
	case $m in
	r) what="file, PROT_READ" ;;
	anonx) what="anonymous, PROT_EXEC" ;;
	rx) what="file, PROT_EXEC" ;;
	anonpx) what="anonymous, mprotect EXEC" ;;
	rpx) what="file, mprotect EXEC" ;;
	esac
	printf '%-28s %18s %18s %18s\n' "$what" "${base[$m]} (1.000)" \
		"${ungov[$m]} ($(awk "BEGIN{printf \"%.3f\", ${ungov[$m]} / ${base[$m]}}"))" \
		"${gov[$m]} ($(awk "BEGIN{printf \"%.3f\", ${gov[$m]} / ${base[$m]}}"))"
done
