#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# workloads.sh: two real workloads under the agent, as ratios to the same
# workload with no agent, in one guest run: a small C build (gcc -O1 over
# bpfwarden's profile parser, file by file, from a copy on the guest's
# tmpfs) and a Python import-heavy run (python3.11 importing 95 modules of
# the standard library, five times). Configurations: `run` in enforce,
# audit and learn mode with a default-deny profile for the workload
# (tools/bench/profiles/), and host-wide `learn --all`. Also the events
# each sent and how many were lost.
#
# Under instruction counting (--bench), like the other benchmarks: what the
# workloads read (their programs, libraries, headers, Python's library) is
# copied to the guest's tmpfs first and bind-mounted over its paths, since
# under -icount every 9p request to the host moves the guest clock to the
# next tick. Each figure is the guest's busy time while the workload ran
# (below), after the agent has started; the median of the rounds and their
# spread are printed.
#
#   tools/bench/workloads.sh [--kernel 6.1|6.12] [--rounds N]
set -euo pipefail
cd "$(dirname "$0")/../.."
kernel=6.12
rounds=5
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--in-vm) inside=1 ;;
	*) echo "usage: $0 [--kernel 6.1|6.12] [--rounds N]" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "${inside:-}" ]; then
	make -s all
	mode=--bench
	# It does not boot under -icount (docs/testing.md): plain TCG, noisier.
	[ "$kernel" = 6.1 ] && mode="--smp 1"
	exec tools/vm/vmrun.sh $mode --mem 4G --timeout 3000 --kernel "$kernel" -- \
		tools/bench/workloads.sh --in-vm --rounds "$rounds"
fi

BW=$PWD/build/bpfwarden
export BPFWARDEN_PROFILE_DIR=$PWD/profiles
src=/tmp/bench-src
out=/tmp/bench-work
rm -rf $src $out && mkdir -p $src $out
cp policy/*.c policy/*.h include/bpfwarden.h $src/

# localize PATH...: a copy on tmpfs bind-mounted over each (symlinks resolved).
localize() {
	local p r
	for p; do
		r=$(readlink -f "$p")
		[ "$(stat -f -c %T "$r")" = tmpfs ] && continue # inside one done already
		mkdir -p "$(dirname /tmp/local$r)"
		cp -a "$r" /tmp/local$r
		mount --bind /tmp/local$r "$r"
	done
}
progs="/usr/bin/python3.11 /usr/bin/x86_64-linux-gnu-gcc-12 /usr/bin/x86_64-linux-gnu-as
/usr/lib/gcc/x86_64-linux-gnu/12/cc1 /usr/bin/dash /usr/bin/date /usr/bin/rm"
libs=$(ldd $progs /usr/lib/python3.11/lib-dynload/*.so 2>/dev/null |
	awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' | sort -u)
localize /usr/lib/python3.11 /usr/lib/python3/dist-packages /etc/python3.11 \
	/usr/lib/gcc/x86_64-linux-gnu/12 /usr/include /usr/lib/linux $progs $libs /etc/ld.so.cache

MODULES="json csv decimal fractions statistics datetime calendar email.mime.multipart
email.parser http.client http.server urllib.request xml.dom.minidom xml.etree.ElementTree
html.parser asyncio concurrent.futures multiprocessing subprocess argparse logging.handlers
unittest doctest pydoc difflib textwrap tarfile zipfile gzip bz2 lzma sqlite3 configparser
shelve dbm pickle copy pprint inspect dis ast tokenize typing dataclasses enum functools
itertools collections heapq bisect array struct hashlib hmac secrets uuid base64 binascii ssl
socket selectors signal shutil tempfile glob fnmatch pathlib platform sysconfig locale gettext
codecs unicodedata string re ipaddress mimetypes smtplib imaplib ftplib poplib xmlrpc.client
wsgiref.simple_server ctypes queue sched threading contextlib abc numbers zlib optparse
getopt netrc plistlib"
imports=$(echo $MODULES | tr ' ' ',')

# Each prints the guest's busy time while it ran, in ms (/proc/stat: user,
# nice, system, irq and softirq, in USER_HZ ticks of 10 ms), and nothing
# else. Not its wall time: under -icount a guest that waits (a 9p request
# still made, a lookup on the host's tree) has its clock moved to the next
# timer, which measured the emulator (spreads of 4-10% with no agent). The
# agent's own work while the workload runs (events, in learn mode) counts.
c_build=(sh -c 'busy() { awk "/^cpu / {print \$2 + \$3 + \$4 + \$7 + \$8}" /proc/stat; } &&
	cd '$src' && rm -f *.o && b0=$(busy) &&
	for f in *.c; do gcc -O1 -pipe -frandom-seed=0 -D_GNU_SOURCE -c -I. "$f" -o "${f%.c}.o" || exit 1; done &&
	b1=$(busy) && echo $(((b1 - b0) * 10))')
# Five fresh imports of the modules, each in a child forked before any of them is loaded.
py_import=(python3.11 -I -c "import importlib, os
def busy():
    with open('/proc/stat') as f:
        v = f.readline().split()
    return int(v[1]) + int(v[2]) + int(v[3]) + int(v[6]) + int(v[7])
b = busy()
for _ in range(5):
    pid = os.fork()
    if not pid:
        for m in '$imports'.split(','):
            importlib.import_module(m)
        os._exit(0)
    os.waitpid(pid, 0)
print((busy() - b) * 10)")

# The no-agent run and `learn --all` run their workload in a cgroup of its
# own: learn --all leaves the agent's cgroup (the guest's root) alone.
cg=/sys/fs/cgroup/bench-work
mkdir -p $cg
incg() { sh -c 'echo $$ > '$cg'/cgroup.procs && exec "$@"' sh "$@"; }

# Instruction counts repeat only if the programs do the same work each run:
# gcc hashes pointers, so address space randomization changes its work
# (a spread of 10% between runs with no agent).
echo 0 >/proc/sys/kernel/randomize_va_space

# one WORKLOAD PROFILE CONFIG: one run, its figure on stdout; events counted
# in $out/WORKLOAD-CONFIG.{events,lost} (summed over the rounds).
one() {
	local w=$1 profile=$2 config=$3 log=$out/$1-$3.log agent v
	local -n cmd=$w
	rm -f $log
	# What the last agent left the kernel to do (freeing its maps after an
	# RCU grace period) runs now, not in the figure.
	sleep 3
	case $config in
	none) v=$(incg "${cmd[@]}") ;;
	enforce|audit)
		v=$($BW run --profile "$profile" --mode $config --log $log -- "${cmd[@]}") ;;
	learn)
		v=$($BW run --profile "$profile" --mode learn --log $log \
			--output $out/learned.profile -- "${cmd[@]}" 2>/dev/null) ;;
	learn-all)
		$BW learn --all --output $out/learned-all.profile --log $log >/dev/null 2>&1 &
		agent=$!
		while ! grep -q "learning on" $log 2>/dev/null; do sleep 0.2; done
		v=$(incg "${cmd[@]}")
		kill -INT $agent
		wait $agent || true ;;
	esac
	if ! [[ $v =~ ^[0-9]+$ ]]; then
		echo "workloads: $w under $config printed '$v', not a time; its log:" >&2
		tail -5 $log >&2 2>/dev/null || true
		exit 1
	fi
	if [ -f $log ]; then
		# Learn events of the workload's cgroup, for learn --all: not the agent's own.
		grep -c '"type":"\(learn\|audit\|deny\)"' $log >>$out/$w-$config.events || true
		awk -F'"count":' '/"type":"lost"/ {split($2, a, ","); s += a[1]} END {print s + 0}' \
			$log >>$out/$w-$config.lost
	fi
	echo "$v"
}

sum() { awk '{s += $1} END {print s + 0}' "$1" 2>/dev/null || echo 0; }
# median FILE / spread FILE: of the figures in FILE, one a line (spread: (max - min) / median).
median() { sort -g "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
spread() { sort -g "$1" | awk '{v[NR] = $1} END {printf "%.1f", 100 * (v[NR] - v[1]) / v[int((NR + 1) / 2)]}'; }

configs="none enforce audit learn learn-all"
$BW run --profile tools/bench/profiles/py_import.profile --log /dev/null -- python3.11 -I -c pass # load the programs
sleep 10 # what loading left to do (common.sh, stats)
for w in c_build py_import; do
	profile=tools/bench/profiles/$w.profile
	one $w $profile none >/dev/null # not counted: the first run pays for the caches
	for ((r = 0; r < rounds; r++)); do
		for c in $configs; do
			one $w $profile $c >>$out/$w-$c.ns
		done
	done
done

echo "Real workloads, kernel $(uname -r), $([ "$(uname -r | cut -d. -f1-2)" = 6.1 ] && echo "plain TCG (noisier)" || echo "instruction-counted"), median of $rounds rounds, alternating"
echo "c_build: gcc -O1 -c of $(ls $src/*.c | wc -l) files; py_import: python3.11 importing $(echo $MODULES | wc -w) modules, 5 times"
printf '%-10s %-10s %14s %8s %8s %8s %6s\n' workload config "busy ms" ratio spread% events lost
for w in c_build py_import; do
	base=$(median $out/$w-none.ns)
	for c in $configs; do
		v=$(median $out/$w-$c.ns)
		printf '%-10s %-10s %14s %8s %8s %8s %6s\n' $w $c "$v" \
			"$(awk "BEGIN{printf \"%.3f\", $v / $base}")" "$(spread $out/$w-$c.ns)" \
			"$([ $c = none ] && echo - || sum $out/$w-$c.events)" \
			"$([ $c = none ] && echo - || sum $out/$w-$c.lost)"
	done
done
echo "events: the deny, audit or learn events of all rounds (learn --all: the whole guest's)"
