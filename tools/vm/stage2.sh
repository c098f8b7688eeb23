#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
#
# stage2.sh: PID 1 of a vmrun.sh guest, run from the host's / (read-only 9p)
# right after the initramfs switch_roots into it. Not meant to be run by hand.
#
# It makes the read-only host tree usable as a test machine: kernel
# filesystems (proc, sysfs, devtmpfs, securityfs, cgroup2, bpffs, tracefs,
# debugfs), tmpfs on /tmp, /var/tmp and /run, loopback up. Then it mounts the
# per-run writable 9p share "results" at /run/bw, sources the env.sh vmrun.sh
# wrote there (cwd, BW_* variables, the command as `set -- ARGS`), shows the
# checkout and the cwd at the host's paths even where a tmpfs hides them,
# runs the command as root on the console, writes its exit status to
# /run/bw/status and powers off. vmrun.sh treats a missing status file as a
# dead guest.
#
# busybox sh (the host's busybox-static), not bash: its applets run without
# loading a dynamically linked binary over 9p, which under TCG costs 30-60 ms
# each time; this script takes a few tenths of a second, not 2 s as it did
# with bash and util-linux.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

halt() {
	sync
	/bin/busybox poweroff -f
	echo o >/proc/sysrq-trigger
	/bin/busybox sleep 60
}

die() {
	echo "bw-stage2: $*" >/dev/console
	halt
}

# mnt [-q] TYPE WHERE [OPTIONS]: mount a kernel filesystem; -q: optional.
mnt() {
	optional=0
	if [ "$1" = -q ]; then optional=1; shift; fi
	[ -d "$2" ] || mkdir -p "$2" 2>/dev/null
	mount -t "$1" -o "${3:-defaults}" "$1" "$2" 2>/dev/null && return 0
	[ "$optional" = 1 ] && return 1
	die "cannot mount $1 on $2"
}

# busybox runs its applets through /proc/self/exe: until the guest's own proc
# is mounted, that is the host's /proc over 9p (QEMU's executable!), so the
# first mount names busybox itself.
/bin/busybox mount -t proc -o nosuid,nodev,noexec proc /proc || die "cannot mount proc on /proc"
read -r cmdline </proc/cmdline
msize=512000 # must match the root mount's, set by bw.msize=
verbose=0
for arg in $cmdline; do
	case $arg in
	bw.msize=*) msize=${arg#bw.msize=} ;;
	bw.verbose) verbose=1 ;;
	esac
done
# mark TEXT: with vmrun.sh --verbose, print TEXT and the guest's uptime.
mark() {
	[ "$verbose" = 1 ] || return 0
	read -r up _ </proc/uptime
	echo "bw-stage2: [$up] $*" >/dev/console
}
mark "stage 2 started"
# The host's /lib/modules has nothing for this kernel: make request_module()
# fail at once instead of running the host's modprobe (0.6 s when mounting
# bpffs, which asks for bpf_preload).
echo >/proc/sys/kernel/modprobe

mnt sysfs /sys nosuid,nodev,noexec
mnt devtmpfs /dev nosuid,mode=755
mnt -q devpts /dev/pts nosuid,noexec,gid=5,mode=620,ptmxmode=666
mnt -q tmpfs /dev/shm nosuid,nodev,mode=1777
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr

mnt tmpfs /run nosuid,nodev,mode=755
# The host's tree as the 9p root shows it, without the guest's own mounts on
# top (a bind is not recursive): what the tmpfs on /tmp, /var/tmp, /run and
# /dev/shm hide stays reachable under /run/host, read-only, and the checkout
# is bound back from there to its own path (show_host_path below).
mkdir /run/host
mount --bind / /run/host || die "cannot bind the host's / at /run/host"
mnt tmpfs /tmp nosuid,nodev,mode=1777
mnt -q tmpfs /var/tmp nosuid,nodev,mode=1777

mnt securityfs /sys/kernel/security nosuid,nodev,noexec
# The guest's fresh sysfs has an empty /sys/fs/cgroup: a pure cgroup2
# hierarchy there, with systemd's options where the kernel has them, and
# every controller enabled for children as systemd does.
mnt -q cgroup2 /sys/fs/cgroup nosuid,nodev,noexec,nsdelegate,memory_recursiveprot ||
	mnt cgroup2 /sys/fs/cgroup nosuid,nodev,noexec
read -r ctrls </sys/fs/cgroup/cgroup.controllers
enable=
for c in $ctrls; do enable="$enable +$c"; done
[ -z "$enable" ] || echo "$enable" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mnt bpf /sys/fs/bpf nosuid,nodev,noexec,mode=700
mnt -q tracefs /sys/kernel/tracing nosuid,nodev,noexec
mnt -q debugfs /sys/kernel/debug nosuid,nodev,noexec

mark "kernel filesystems mounted"
mkdir /run/bw
mount -t 9p -o "trans=virtio,version=9p2000.L,msize=$msize" results /run/bw ||
	die "cannot mount the results share (mount_tag results)"
[ -r /run/bw/env.sh ] || die "no /run/bw/env.sh from vmrun.sh"
BW_VM_TTY=0
BW_VM_CWD=/
BW_VM_SHOW=
set --
# shellcheck source=/dev/null
. /run/bw/env.sh
[ $# -gt 0 ] || die "no command in /run/bw/env.sh"
# Files for the host: vmrun.sh --out DIR copies this directory there.
export BW_VM_OUT=/run/bw/out

ip link set lo up || echo "bw-stage2: warning: cannot bring lo up" >/dev/console
hostname bw-vm

# show_host_path P: make the host's directory P visible at P in the guest.
# Paths must agree between host and guest: the build compiles absolute paths
# in, the agent finds its profile library from its own path, tests write
# rules naming the checkout. A checkout under /tmp, /var/tmp (or /run,
# /dev/shm) is hidden by the guest's tmpfs there: bind it back, read-only
# like the rest of the host, at the same path inside that tmpfs.
show_host_path() {
	case $1 in
	/run/host|/run/host/*|/run/bw|/run/bw/*)
		die "the host's $1 cannot be shown in the guest: /run/host and /run/bw are the runner's" ;;
	/tmp|/var/tmp|/run|/dev/shm)
		# Binding the host's over it would leave the guest no writable one.
		echo "bw-stage2: note: $1 is the guest's own tmpfs; the host's is /run/host$1" >/dev/console
		return 0 ;;
	esac
	# Visible already (the usual case: under /home, /root, /srv ...).
	[ "$1" -ef "/run/host$1" ] && return 0
	[ -d "/run/host$1" ] || die "the host's $1 is not a directory"
	if ! mkdir -p "$1" || ! mount --bind "/run/host$1" "$1"; then
		die "cannot show the host's $1 at the same path in the guest"
	fi
}
# BW_VM_SHOW: the checkout vmrun.sh runs from and the caller's directory,
# one a line.
set -f
IFS='
'
for p in $BW_VM_SHOW; do
	unset IFS
	show_host_path "$p"
done
unset IFS
set +f
# Shared, as systemd makes every mount of a host: a mount made here later
# reaches the namespaces copied from this one as slaves (`bpfwarden run`'s).
mount --make-rshared / || die "cannot make the guest's mounts shared"
mark "host paths shown"
cd "$BW_VM_CWD" || die "cannot cd to $BW_VM_CWD"

# Look the command up in PATH here and run it by its full path: busybox sh
# would otherwise run its own applet for names like cat, sh or ip, and a name
# could collide with a function of this script.
prog=$1
case $prog in
*/*) ;;
*)
	IFS=:
	for d in $PATH; do
		if [ -f "$d/$prog" ] && [ -x "$d/$prog" ]; then
			prog=$d/$prog
			break
		fi
	done
	unset IFS
	;;
esac
shift

console=/dev/ttyS0
[ -c "$console" ] || console=/dev/console
mark "running $prog"
case $prog in
*/*) ;;
*) echo "bw-stage2: $prog: command not found" >/dev/console; status=127 ;;
esac
if [ -n "${status:-}" ]; then
	:
elif [ "$BW_VM_TTY" = 1 ]; then
	# Interactive: a session with the serial port as controlling terminal,
	# so job control and ^C work, sized like the host's terminal.
	stty -F "$console" sane ${BW_VM_ROWS:+rows "$BW_VM_ROWS"} ${BW_VM_COLS:+cols "$BW_VM_COLS"} 2>/dev/null
	/usr/bin/setsid --ctty --wait "$prog" "$@" <>"$console" >&0 2>&0
	status=$?
else
	# Captured output: plain \n line ends, no stdin.
	stty -F "$console" -onlcr 2>/dev/null
	"$prog" "$@" </dev/null
	status=$?
fi

if ! { echo "$status" >/run/bw/status.tmp && mv /run/bw/status.tmp /run/bw/status; }; then
	echo "bw-stage2: cannot record the exit status" >/dev/console
fi
mark "command exited $status"
umount /run/bw 2>/dev/null
# coreutils stty applies settings with TCSADRAIN: it returns once the output
# has left the serial port, so powering off now loses none of it.
/bin/stty -F "$console" -echo 2>/dev/null
# Silence even "reboot: Power down" (KERN_EMERG) so CMD's output ends clean.
echo 0 >/proc/sys/kernel/printk
halt
