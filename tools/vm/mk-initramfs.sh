#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mk-initramfs.sh: build (or reuse) the initramfs that vmrun.sh boots.
#
# The guest has no disk: its root is the host's / shared read-only over
# virtio-9p, so the binaries just built on the host run unchanged in the guest.
# This initramfs only bridges to it: busybox-static, the 9p (and, on 6.1,
# virtio) modules cached by fetch-kernels.sh, and an /init that loads them,
# mounts the host's / at /newroot and switch_roots into the stage-2 script
# (tools/vm/stage2.sh, read from the host, so editing it needs no rebuild).
# switch_root, not chroot: under a chroot, path-based tools would see the
# initramfs mount prefix in every path.
#
# The image is cached next to the kernels and rebuilt when this script,
# busybox or the kernel entry changes. Prints the image's path.
#
# Usage: mk-initramfs.sh 6.1|6.12
set -euo pipefail

CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
BUSYBOX=/bin/busybox

die() { echo "mk-initramfs: $*" >&2; exit 1; }

[ $# = 1 ] || die "usage: mk-initramfs.sh 6.1|6.12"
k=$1
kdir=$CACHE/$k
[ -f "$kdir/complete" ] || die "kernel $k is not cached; run tools/vm/fetch-kernels.sh $k"
[ -x "$BUSYBOX" ] || die "no $BUSYBOX (apt-get install busybox-static)"
if readelf -l "$BUSYBOX" 2>/dev/null | grep -q INTERP; then
	die "$BUSYBOX is dynamically linked (apt-get install busybox-static)"
fi

out=$CACHE/initramfs-$k.cpio
stamp=$out.stamp
# Everything the image is made of; a change to any of it means a rebuild.
want=$(cat "$0" "$BUSYBOX" "$kdir/package" "$kdir"/modules/*.ko | sha256sum | cut -d' ' -f1)

if [ -f "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	echo "$out"
	exit 0
fi

exec 9>"$CACHE/.initramfs.lock"
flock 9
# With the lock held, any half-built image is a leftover of a killed run.
rm -rf "$CACHE"/.initramfs-*
if [ -f "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	echo "$out"
	exit 0
fi

tmp=$(mktemp -d "$CACHE/.initramfs-$k.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root"/{bin,dev,proc,sys,newroot,modules}
cp "$BUSYBOX" "$root/bin/busybox"
for applet in sh mount umount insmod switch_root poweroff sleep cat; do
	ln -s busybox "$root/bin/$applet"
done
mknod -m 600 "$root/dev/console" c 5 1
mknod -m 666 "$root/dev/null" c 1 3
cp "$kdir"/modules/*.ko "$root/modules/"

cat >"$root/init" <<'EOF'
#!/bin/sh
# bpfwarden VM stage 1: load the 9p modules, mount the host's / read-only,
# switch_root into the stage-2 script named by bw.stage2= on the command line.
export PATH=/bin

fail() {
	echo "bw-init: $*"
	poweroff -f
	sleep 60
}

mount -t proc proc /proc || fail "cannot mount /proc"
stage2=
msize=512000
verbose=0
for arg in $(cat /proc/cmdline); do
	case $arg in
	bw.stage2=*) stage2=${arg#bw.stage2=} ;;
	bw.msize=*) msize=${arg#bw.msize=} ;;
	bw.verbose) verbose=1 ;;
	esac
done
mark() {
	[ "$verbose" = 1 ] || return 0
	read -r up _ </proc/uptime
	echo "bw-init: [$up] $*"
}

mark "loading modules"
for m in /modules/*.ko; do
	insmod "$m" || fail "insmod $m failed"
done
mark "modules loaded"
[ -n "$stage2" ] || fail "no bw.stage2= on the kernel command line"

mount -t 9p -o ro,trans=virtio,version=9p2000.L,cache=loose,msize=$msize host /newroot ||
	fail "cannot mount the host's / over 9p (mount_tag host)"
[ -x "/newroot$stage2" ] || fail "stage 2 $stage2 not found on the host's /"
mark "host / mounted, switch_root to $stage2"
umount /proc
exec switch_root /newroot "$stage2"
EOF
chmod 755 "$root/init"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$tmp/initramfs.cpio"
mv "$tmp/initramfs.cpio" "$out"
echo "$want" >"$stamp"
echo "$out"
