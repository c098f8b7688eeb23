#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# vmrun.sh: run one command as root in a throwaway QEMU guest booted from a
# stock Debian kernel with BPF LSM enabled, and exit with its status.
#
# The host's kernel cannot run BPF LSM programs; Debian's 6.1 and 6.12 can.
# The guest has no disk of its own: it sees the host's / read-only over 9p
# (so it runs the binaries just built here), gets tmpfs on /tmp and /run, and
# a fresh writable 9p share per run through which it reports the exit status.
# The checkout and the current directory keep their host paths in the guest.
# See docs/testing.md.
#
# Usage: vmrun.sh [--kernel 6.1|6.12] [--bench] [--timeout SECONDS]
#                 [--mem SIZE] [--smp N] [--out DIR] [--verbose] -- CMD [ARG...]
#   --kernel   which cached Debian kernel to boot (default 6.12)
#   --bench    deterministic timing: one vCPU, -icount shift=0,sleep=off
#              (guest time counts instructions; ratios repeat within ~1%)
#   --timeout  wall-clock seconds for the whole boot-run-poweroff (default 600)
#   --mem      guest memory (default 2G)
#   --smp      guest vCPUs (default 2; 1 with --bench)
#   --out DIR  copy what CMD writes to $BW_VM_OUT (in the guest) into DIR
#   --verbose  show kernel messages and boot-stage timestamps
# CMD runs in the host's current directory, at the same path in the guest
# (also under /tmp or /var/tmp, where the guest has its own tmpfs: the
# checkout and the cwd are bound back there), with a standard PATH,
# HOME=/root, and every BW_* variable of the caller's env.
# BW_VM_CACHE: kernel cache (/var/cache/bpfwarden-vm); BW_VM_KARGS: extra
# kernel parameters.
#
# Exit status: CMD's own status, or 125 if the guest died, hung past
# --timeout or panicked without reporting one (a line on stderr says so and
# shows the last console lines), or 125 for a usage or setup error.
set -euo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
EXIT_DEAD=125
# The stage-2 path travels on the kernel command line.
case $VM_DIR in *[[:space:]]*) echo "vmrun: $VM_DIR: no blanks allowed in this path" >&2; exit "$EXIT_DEAD" ;; esac

kernel=6.12
bench=0
timeout=600
mem=2G
smp=2
smp_set=0
verbose=0
out=

usage() {
	sed -n '3,/^set /s/^# \{0,1\}//p' "$0"
	exit "${1:-$EXIT_DEAD}"
}
die() { echo "vmrun: $*" >&2; exit "$EXIT_DEAD"; }

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=${2:?--kernel needs 6.1 or 6.12}; shift ;;
	--kernel=*) kernel=${1#*=} ;;
	--bench) bench=1 ;;
	--timeout) timeout=${2:?--timeout needs seconds}; shift ;;
	--timeout=*) timeout=${1#*=} ;;
	--mem) mem=${2:?--mem needs a size}; shift ;;
	--mem=*) mem=${1#*=} ;;
	--smp) smp=${2:?--smp needs a count}; smp_set=1; shift ;;
	--smp=*) smp=${1#*=}; smp_set=1 ;;
	--out) out=${2:?--out needs a directory}; shift ;;
	--out=*) out=${1#*=} ;;
	--verbose|-v) verbose=1 ;;
	-h|--help) usage 0 ;;
	--) shift; break ;;
	*) echo "vmrun: unexpected argument '$1' (the command goes after --)" >&2; usage >&2 ;;
	esac
	shift
done
[ $# -gt 0 ] || usage >&2
case $kernel in 6.1|6.12) ;; *) die "--kernel must be 6.1 or 6.12, not '$kernel'" ;; esac
[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a whole number of seconds"
[[ $smp =~ ^[1-9][0-9]*$ ]] || die "--smp must be a positive integer"
if [ "$bench" = 1 ]; then
	[ "$smp_set" = 0 ] || [ "$smp" = 1 ] || echo "vmrun: --bench runs one vCPU, ignoring --smp $smp" >&2
	smp=1
fi

CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
export BW_VM_CACHE=$CACHE
command -v qemu-system-x86_64 >/dev/null || die "no qemu-system-x86_64 (tools/install-deps.sh)"
"$VM_DIR/fetch-kernels.sh" "$kernel" || die "cannot get kernel $kernel"
# loop, ext4 and overlay for the tests that need them (tools/vm/modload.sh).
"$VM_DIR/fetch-modules.sh" --quiet "$kernel" ||
	echo "vmrun: no file system modules for $kernel: tests that need loop, ext4 or overlay will be skipped" >&2
initrd=$("$VM_DIR/mk-initramfs.sh" "$kernel") || die "cannot build the initramfs for $kernel"
kdir=$CACHE/$kernel
# The uncompressed kernel boots through its PVH entry, seconds faster under
# TCG than the bzImage's decompressor; fetch-kernels.sh may not have one.
image=$kdir/vmlinux
[ -f "$image" ] || image=$kdir/vmlinuz

cwd=$(pwd -P)
# The guest shows these host directories at the same paths (stage2.sh binds
# them back where its tmpfs on /tmp or /var/tmp hides them): the checkout
# this script belongs to, and the current directory unless one holds the
# other.
root=$(cd "$VM_DIR/../.." && pwd -P)
case $cwd/ in
"$root"/*) show=$root ;;
*) case $root/ in "$cwd"/*) show=$cwd ;; *) show=$root$'\n'$cwd ;; esac ;;
esac
case $cwd in *$'\n'*) die "the current directory's name has a newline; the guest cannot show it" ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bw-vm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/share/out"

# What stage2.sh needs, as busybox sh it sources from the results share.
shq() { local s=${1//\'/\'\\\'\'}; printf "'%s'" "$s"; }
tty=0
if [ -t 0 ] && [ -t 1 ]; then
	tty=1
fi
{
	echo "BW_VM_CWD=$(shq "$cwd")"
	echo "BW_VM_SHOW=$(shq "$show")"
	echo "BW_VM_TTY=$tty"
	echo "export BW_VM_KERNEL=$kernel BW_VM_BENCH=$bench"
	if [ "$tty" = 1 ]; then
		echo "export TERM=$(shq "${TERM:-vt100}")"
		read -r rows cols < <(stty size 2>/dev/null || echo)
		echo "BW_VM_ROWS=$(shq "${rows:-}") BW_VM_COLS=$(shq "${cols:-}")"
	fi
	printf 'set --'
	for arg in "$@"; do
		printf ' %s' "$(shq "$arg")"
	done
	echo
	for name in $(compgen -e); do
		case $name in
		BW_VM_CWD|BW_VM_SHOW|BW_VM_TTY|BW_VM_ROWS|BW_VM_COLS) ;;
		BW_*) echo "export $name=$(shq "${!name}")" ;;
		esac
	done
} >"$tmp/share/env.sh"

msize=512000
# quiet: only errors and worse reach the console, so CMD's output reads clean.
# panic=-1 + -no-reboot: a panicking guest ends QEMU at once.
append="console=ttyS0 quiet loglevel=3 lsm=lockdown,capability,landlock,bpf panic=-1"
# Skip the crypto self-tests (about 0.4 s of every boot under TCG).
append+=" cryptomgr.notests"
append+=" bw.stage2=$VM_DIR/stage2.sh bw.msize=$msize"
if [ "$verbose" = 1 ]; then
	append+=" loglevel=7 bw.verbose"
fi
# Extra kernel parameters for debugging, e.g. BW_VM_KARGS="initcall_debug loglevel=8".
append+="${BW_VM_KARGS:+ $BW_VM_KARGS}"

accel=(-accel tcg)
if [ "$bench" = 1 ]; then
	# shellcheck disable=SC2054 # commas are QEMU's
	accel=(-accel tcg,thread=single -icount shift=0,sleep=off)
fi

# Console: the serial port on our stdio, also logged for the death report.
# Interactive (a terminal on both ends): stdin goes to the guest, ^C included;
# ^A x quits QEMU. Otherwise the guest gets no stdin and ^C stops QEMU.
if [ "$tty" = 1 ]; then
	chardev="stdio,id=con,mux=on,signal=off,logfile=$tmp/console.log"
else
	chardev="stdio,id=con,mux=on,logfile=$tmp/console.log"
	exec </dev/null
fi

# shellcheck disable=SC2054 # commas are QEMU's
qemu=(
	qemu-system-x86_64
	"${accel[@]}"
	-cpu max
	-m "$mem"
	-smp "$smp"
	-nographic -nodefaults -no-reboot
	-bios qboot.rom
	-chardev "$chardev" -serial chardev:con -mon chardev=con,mode=readline
	-nic none
	-kernel "$image"
	-initrd "$initrd"
	-append "$append"
	-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap
	-virtfs "local,path=$tmp/share,mount_tag=results,security_model=none"
)

# QEMU runs in the background so that a signal to this script (^C, an outer
# timeout, a CI runner's TERM) reaches it; then this script waits for it.
# timeout --foreground: stay in the terminal's process group (QEMU reads it).
timeout --foreground --kill-after=10 "$timeout" "${qemu[@]}" <&0 &
qpid=$!
interrupted=0
# shellcheck disable=SC2317 # called from the traps below
on_signal() {
	interrupted=$1
	kill -TERM "$qpid" 2>/dev/null || true
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP
qrc=0
wait "$qpid" || qrc=$?
while kill -0 "$qpid" 2>/dev/null; do
	qrc=0
	wait "$qpid" || qrc=$?
done
if [ "$interrupted" != 0 ]; then
	echo "vmrun: interrupted, guest stopped" >&2
	exit "$interrupted"
fi

if [ -n "$out" ]; then
	mkdir -p "$out" && cp -a "$tmp/share/out/." "$out/" ||
		echo "vmrun: cannot copy the guest's \$BW_VM_OUT to $out" >&2
fi

status=$(cat "$tmp/share/status" 2>/dev/null || true)
if [[ $status =~ ^[0-9]+$ ]]; then
	exit "$status"
fi

case $qrc in
124|137) why="no status after --timeout $timeout s, guest killed" ;;
0) why="QEMU ended with no status from the guest (panic, triple fault or early power-off)" ;;
*) why="QEMU exited $qrc" ;;
esac
log=$tmp/console.log
{
	echo "vmrun: GUEST DIED without reporting a status (kernel $kernel, $(cat "$kdir/release")): $why; exit $EXIT_DEAD"
	if [ -s "$log" ]; then
		tr -d '\r' <"$log" |
			grep -m5 -E 'Kernel panic|BUG:|Oops|double fault|triple fault|general protection|bw-init:|bw-stage2:' |
			sed 's/^/vmrun: cause? /' || true
		echo "vmrun: last console lines:"
		tail -n 12 "$log" | tr -d '\r' | sed 's/^/vmrun: | /'
	else
		echo "vmrun: the guest printed nothing"
	fi
} >&2
exit "$EXIT_DEAD"
