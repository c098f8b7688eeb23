#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# file-open.sh: the cost of the file hooks on an open()+close() loop of a
# cached tmpfs file at 2, 10 and 34 path components, as ratios to the same
# loop with no agent, measured side by side in one guest run, with Landlock
# and AppArmor enforcing equivalent rules as peers. Outside the VM it boots
# two guests (tools/vm/vmrun.sh --bench: guest time counts instructions, so
# the ratios repeat from run to run): one for everything but AppArmor, one
# booted with AppArmor among its LSMs for the AppArmor rows (AppArmor's
# hooks then run for every process, so that guest has its own baseline).
#
#   tools/bench/file-open.sh [--kernel 6.1|6.12] [--iterations N] [--timeout S]
#
# Every configuration runs in a fresh cgroup two levels below the cgroup2
# root, as governed processes do: a process outside the root cgroup pays
# the memory controller's accounting on each open (6 to 12% of this loop),
# which is no agent's cost. A row in the root cgroup shows it.
#
# Configurations: no agent (child cgroup; and the root cgroup); the floor,
# empty programs on every hook the agent attaches (tools/bench/floor.c);
# programs loaded, process not governed; governed with 10, 1,000 and 10,000 rules
# (default allow, the file matched by an allow rule, one deny rule on
# another file system, so no pin climb); with a deny rule on the file's own
# file system (the pin climb runs where nothing is kept); learn mode under
# default deny (the file learned once, then repeated); governed, a file with
# a second hard link, whose verdict is never kept (every open decides on its
# path: the cost without the decision cache); audit mode with the same
# profile, and under default deny, where every open is an audit event (the
# first 1,000 a second logged, the rest counted as throttled); Landlock with 5 path
# rules (tests/helpers/landlock_run.c); AppArmor with a 6-rule profile.
# Each figure is the median of 3 runs, with their spread (max - min, in %
# of the median).
. "$(dirname "$0")/common.sh"

if [ "${1:-}" != --in-vm ]; then
	bench_outside "$0" 100000 "$@"
	tools/vm/vmrun.sh $mode --kernel "$kernel" --timeout "$timeout" -- \
		tools/bench/file-open.sh --in-vm main "$iters"
	BW_VM_KARGS="lsm=lockdown,capability,landlock,apparmor,bpf" \
		tools/vm/vmrun.sh $mode --kernel "$kernel" --timeout "$timeout" -- \
		tools/bench/file-open.sh --in-vm apparmor "$iters"
	exit
fi
phase=$2 iters=$3
BW=build/bpfwarden
LOOP=build/tests/openloop
LANDLOCK=build/tests/landlock_run
dir=/tmp/bench
build=$PWD/build

# The files: /tmp/f2 is 2 components deep, the others under /tmp/a/...
depths="2 10 34"
declare -A file
file[2]=/tmp/f2
for d in 10 34; do
	p=/tmp
	for ((i = 2; i < d; i++)); do p=$p/a; done
	mkdir -p "$p"
	file[$d]=$p/f$d
done
for d in $depths; do
	echo data >"${file[$d]}"
	# A file with a second name: its verdict is never kept (bpf/dcache.bpf.h).
	echo data >"${file[$d]}.s"
	ln -f "${file[$d]}.s" "${file[$d]}.link"
done
mkdir -p "$dir"

profile() { # profile NRULES FILE [EXTRA-LINE]
	{
		echo "profile bench"
		echo "default allow"
		echo "deny file rw /etc/shadow"
		echo "allow file r /tmp/f2"
		echo "allow file r /tmp/a/**"
		for ((i = 3; i < $1; i++)); do
			echo "allow file r $dir/rule$i/**"
		done
		[ -z "${3:-}" ] || echo "$3"
	} >"$2"
}

quiet() { "$@" 2>/dev/null; }

declare -A res
suffix=
measure() { # measure NAME CMD... (the loop's FILE$suffix and N are appended per depth)
	local name=$1 d
	shift
	for d in $depths; do res[$name,$d]=$(stats "$@" "${file[$d]}$suffix" "$iters"); done
}

if [ "$phase" = main ]; then
	rows="base root floor ungov gov10 gov1000 gov10000 slow climb audit auditdeny learn landlock again"
	measure base incg $LOOP
	measure root $LOOP
	profile 10 $dir/p10.profile
	floor_start $dir/p10.profile
	measure floor incg $LOOP
	floor_stop
	$BW run --profile $dir/p10.profile --log /dev/null -- true # load and pin the programs
	sleep 10
	measure ungov incg $LOOP
	for n in 10 1000 10000; do
		profile $n $dir/p$n.profile
		measure gov$n $BW run --profile $dir/p$n.profile --log /dev/null -- $LOOP
	done
	suffix=.s
	measure slow $BW run --profile $dir/p10.profile --log /dev/null -- $LOOP
	suffix=
	echo secret >/tmp/a/secret
	profile 10 $dir/pclimb.profile "deny file rw /tmp/a/secret"
	measure climb $BW run --profile $dir/pclimb.profile --log /dev/null -- $LOOP
	measure audit $BW run --mode audit --profile $dir/p10.profile --log /dev/null -- $LOOP
	printf 'profile bench\ndefault deny\n' >$dir/plearn.profile
	# Every open one that enforce would refuse: an audit event each, the
	# first 1,000 a second sent (--event-rate), the others counted.
	measure auditdeny quiet $BW run --mode audit --profile $dir/plearn.profile --log /dev/null -- $LOOP
	# quiet: not the "learned profile written" line of each run.
	measure learn quiet $BW run --mode learn --profile $dir/plearn.profile --output $dir/learned.profile \
		--log /dev/null -- $LOOP
	# The same reach: programs and libraries, the checkout's build, and /tmp.
	lib64=
	[ -d /lib64 ] && lib64=x:/lib64
	measure landlock incg $LANDLOCK x:/usr x:/lib $lib64 x:"$build" r:/tmp -- $LOOP
	# The baseline again, every program unloaded: the figures did not drift.
	# The kernel frees the maps of 10,000 rules after a grace period: let
	# it, or the first loops pay for it.
	$BW reset >/dev/null
	sleep 10
	measure again incg $LOOP
else
	rows="base gov10 apparmor"
	measure base incg $LOOP
	profile 10 $dir/p10.profile
	measure gov10 $BW run --profile $dir/p10.profile --log /dev/null -- $LOOP
	cat >$dir/aa.profile <<-EOF
		abi <abi/3.0>,
		profile bwbench {
		  /usr/** mr,
		  /lib/** mr,
		  /etc/ld.so.cache r,
		  $build/** mrix,
		  /tmp/f2 r,
		  /tmp/a/** r,
		}
	EOF
	if ! apparmor_parser -r -K $dir/aa.profile; then
		echo "AppArmor: the profile does not load here (apparmor_parser, package apparmor)"
		exit 1
	fi
	measure apparmor incg aa-exec -p bwbench -- $LOOP
fi

declare -A label=(
	[base]="no agent"
	[root]="no agent, root cgroup"
	[floor]="floor: empty programs"
	[ungov]="loaded, process not governed"
	[gov10]="governed, 10 rules"
	[gov1000]="governed, 1,000 rules"
	[gov10000]="governed, 10,000 rules"
	[slow]="governed, 10 rules, nothing kept"
	[climb]="governed, deny pin on same fs"
	[audit]="audit mode, 10 rules"
	[auditdeny]="audit mode, every open audited"
	[learn]="learn, the same file repeated"
	[landlock]="Landlock, 5 rules"
	[again]="no agent, again at the end"
	[apparmor]="AppArmor, 6 rules"
)
if [ "$phase" = main ]; then
	echo "open+close of a cached tmpfs file, $iters iterations, kernel $(uname -r)," \
		"median of 3 (spread)"
else
	echo "the same, in a guest booted with AppArmor among its LSMs (its own baseline)"
fi
printf '%-32s' configuration
for d in $depths; do printf '%24s' "$d components"; done
echo
for r in $rows; do
	printf '%-32s' "${label[$r]}"
	for d in $depths; do
		read -r ns spread <<<"${res[$r,$d]}"
		read -r bns _ <<<"${res[base,$d]}"
		printf '%24s' "$(awk "BEGIN{printf \"%.0f ns %.3f (%.1f%%)\", $ns, $ns / $bns, $spread}")"
	done
	echo
done
