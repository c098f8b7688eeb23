#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# test-checkout.sh: prove that a checkout works wherever it is cloned
# (`make checkouttest`, part of `make test`). For each location it clones
# this checkout into a fresh directory there, builds it, and checks what
# depends on where the tree is:
#   - on the host, from another directory: the agent finds its profile
#     library next to its build tree, and next to an installed copy
#     (`make install DESTDIR=... PREFIX=/usr`);
#   - in a VM guest (tools/vm/vmrun.sh of the clone): the checkout is at the
#     same path as on the host, the agent finds the library there, the learn
#     suite (learned profiles include the library's abstractions), a test
#     whose rules name the build directory, and the guest part of `make demo`
#     (tools/demo.sh --in-vm; the host part only picks the guest).
# /tmp and /var/tmp matter most: the guest mounts its own tmpfs on both, and
# the checkout must be shown back at its own path (docs/testing.md).
#
# What is cloned: the commit checked out here, plus the changes to tracked
# files (staged or not; what `git commit -a` would take), so that an edit is
# tested before it is committed. Untracked files are left out, as a clone
# leaves them out: a file the tree needs and git does not have fails here.
# Without git (a tree unpacked from an archive) the tree is copied instead,
# build/ excluded.
#
# Usage: test-checkout.sh [DIR...]   (default: /tmp /var/tmp $HOME)
#   BW_KERNELS   kernels as for run-tests.sh (default "6.1 6.12"): every
#                location boots the last one with every check; the first
#                location also boots the others, for the path checks only
# Needs root (the guest), git (apt-get install git) for a git checkout, and
# what tools/install-deps.sh installs. Everything it makes is removed.
set -uo pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd "$VM_DIR/../.." && pwd -P)
EXIT_DEAD=125
# A profile outside profiles/ that needs the library: found only through it.
PROBE_PROFILE='profile probe
default deny
include "abstractions/base"
'

# In the guest: run from the clone by the host part below.
if [ "${1:-}" = --in-vm ]; then
	cd "$ROOT" || exit 1
	status=0
	if [ "$ROOT" != "${BW_CHECKOUT_PATH:-}" ]; then
		echo "test-checkout: FAIL: the guest sees the checkout at $ROOT, the host at ${BW_CHECKOUT_PATH:-?}"
		status=1
	fi
	printf '%s' "$PROBE_PROFILE" >/tmp/probe.profile
	if ! out=$(cd / && "$ROOT/build/bpfwarden" check /tmp/probe.profile 2>&1) ||
		[ "$out" != "/tmp/probe.profile: ok (${BW_CHECKOUT_RULES:-?} rules)" ]; then
		echo "test-checkout: FAIL: the agent in the guest does not find its library: $out"
		status=1
	fi
	t=$SECONDS
	# The kernel's paths against rules naming the build directory.
	/usr/bin/python3 tests/integration/test_exec.py test_allowed_and_denied_programs || status=1
	if [ "${BW_CHECKOUT_SHORT:-0}" = 1 ]; then
		/usr/bin/python3 tests/integration/test_learn.py test_learn_enforce_round_trip || status=1
		times="tests $((SECONDS - t))s"
	else
		/usr/bin/python3 tests/integration/test_learn.py || status=1
		times="tests $((SECONDS - t))s"
		t=$SECONDS
		tools/demo.sh --in-vm >/tmp/demo.out 2>&1 || {
			echo "test-checkout: FAIL: tools/demo.sh --in-vm exited $?:"
			cat /tmp/demo.out
			status=1
		}
		times+=" demo $((SECONDS - t))s"
		# The demo's rules come from the shipped profile and its includes.
		if ! grep -q '/etc/shadow .*rule profiles/python-sandbox.profile:' /tmp/demo.out; then
			echo "test-checkout: FAIL: the demo logged no denial of /etc/shadow:"
			cat /tmp/demo.out
			status=1
		fi
	fi
	[ "$status" != 0 ] || echo "test-checkout: guest checks passed ($(uname -r); $times)"
	exit "$status"
fi

case ${1:-} in -h|--help) sed -n '3,/^set /s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
if [ "$(id -u)" != 0 ]; then
	echo "test-checkout: run as root (it boots VM guests)" >&2
	exit 2
fi
if [ $# -gt 0 ]; then
	locations=("$@")
else
	locations=(/tmp /var/tmp "${HOME:-/root}")
fi
read -ra kernels <<<"${BW_KERNELS:-6.1 6.12}"
[ ${#kernels[@]} -gt 0 ] || { echo "test-checkout: BW_KERNELS is empty" >&2; exit 2; }
"$VM_DIR/fetch-kernels.sh" "${kernels[@]}" || exit 2
# The environment must not hand the agent its library: the lookup is tested.
unset BPFWARDEN_PROFILE_DIR

scratch=()
# shellcheck disable=SC2317 # called from the trap
cleanup() { [ ${#scratch[@]} = 0 ] || rm -rf "${scratch[@]}"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# What the clone gets besides a commit: see the header.
patch=$(mktemp /tmp/bw-checkout-patch.XXXXXX)
scratch+=("$patch")
if [ -e "$ROOT/.git" ]; then
	command -v git >/dev/null || { echo "test-checkout: needs git (apt-get install git)" >&2; exit 2; }
	# `make test` runs as root, often in a checkout a user owns, and git
	# refuses such a repository ("dubious ownership") unless a global
	# config allows it (not -c: a local clone's upload-pack drops that):
	# this script's own global config, for its own git commands.
	export GIT_CONFIG_GLOBAL=$patch.gitconfig
	scratch+=("$GIT_CONFIG_GLOBAL")
	printf '[safe]\n\tdirectory = *\n' >"$GIT_CONFIG_GLOBAL"
	head=$(git -C "$ROOT" rev-parse HEAD) || exit 2
	git -C "$ROOT" diff --binary HEAD >"$patch" || exit 2
	what="commit ${head:0:12}"
	[ -s "$patch" ] && what+=" + changes to tracked files"
	untracked=$(git -C "$ROOT" ls-files --others --exclude-standard | head -5)
	if [ -n "$untracked" ]; then
		echo "test-checkout: note: untracked files are not cloned (git add them if the tree needs them):"
		while read -r f; do echo "test-checkout:   $f"; done <<<"$untracked"
	fi
else
	head=
	what="a copy of $ROOT (not a git checkout)"
fi
echo "test-checkout: $what, cloned into ${locations[*]}"

# clone DEST: the tree as a newcomer gets it.
clone() {
	if [ -z "$head" ]; then
		mkdir -p "$1" && tar -C "$ROOT" --exclude=./build -cf - . | tar -C "$1" -xf -
		return
	fi
	git clone -q --no-checkout "$ROOT" "$1" &&
		git -C "$1" checkout -q --detach "$head" &&
		{ [ ! -s "$patch" ] || git -C "$1" apply --whitespace=nowarn "$patch"; }
}

# guest K CLONE LOG SHORT: the guest checks on kernel K (SHORT=1: fewer),
# retried once if the guest dies without a status (the rare TCG death, as
# run-tests.sh does).
guest() {
	local rc
	for attempt in 1 2; do
		(cd "$2" && BW_CHECKOUT_PATH=$2 BW_CHECKOUT_RULES=$rules BW_CHECKOUT_SHORT=$4 \
			tools/vm/vmrun.sh --kernel "$1" -- tools/vm/test-checkout.sh --in-vm) >"$3" 2>&1
		rc=$?
		[ "$rc" = "$EXIT_DEAD" ] && [ "$attempt" = 1 ] && continue
		return "$rc"
	done
}

# fail WHAT [DETAIL...]: one check failed; go on with the others.
fail() {
	fails+=("$1")
	echo "test-checkout: FAIL in $co: $1"
	shift
	[ $# = 0 ] || printf '%s\n' "$@" | sed 's/^/test-checkout: | /'
}

# How many rules the probe profile has with the library, from the first
# clone; the others and the guests must agree.
rules=
summary=()
failed=0
first=1
for where in "${locations[@]}"; do
	start=$SECONDS
	fails=()
	times=
	if ! dir=$(mktemp -d "$where/bw-checkout.XXXXXX"); then
		summary+=("$(printf 'test-checkout: %-10s FAIL: cannot make a directory there' "$where")")
		failed=1
		continue
	fi
	scratch+=("$dir")
	co=$dir/bpfwarden
	echo "test-checkout: === $co ==="
	t=$SECONDS
	if ! out=$(clone "$co" 2>&1); then
		fail "clone" "$out"
	elif ! out=$(cd "$co" && make -j"$(nproc)" 2>&1); then
		fail "make" "$(tail -n 30 <<<"$out")"
	fi
	times+="build $((SECONDS - t))s"
	if [ ${#fails[@]} -gt 0 ]; then
		summary+=("$(printf 'test-checkout: %-10s FAIL: %s' "$where" "${fails[0]}")")
		failed=1
		rm -rf "$dir"
		continue
	fi

	# The host: the agent from its build tree, then installed, each run
	# from another directory with a profile that needs the library.
	printf '%s' "$PROBE_PROFILE" >"$dir/probe.profile"
	out=$(cd / && "$co/build/bpfwarden" check "$dir/probe.profile" 2>&1)
	if [[ ! $out =~ ^"$dir/probe.profile: ok ("([0-9]+)" rules)"$ ]]; then
		fail "the build tree's agent does not find its library" "$out"
	elif [ -n "$rules" ] && [ "${BASH_REMATCH[1]}" != "$rules" ]; then
		fail "the probe profile has ${BASH_REMATCH[1]} rules here, $rules elsewhere"
	else
		rules=${BASH_REMATCH[1]}
	fi
	if ! out=$(make -C "$co" install DESTDIR="$dir/inst" PREFIX=/usr 2>&1); then
		fail "make install" "$out"
	else
		# With the tree's library out of the way: the installed one is used.
		mv "$co/profiles" "$co/profiles.away"
		out=$(cd / && "$dir/inst/usr/sbin/bpfwarden" check "$dir/probe.profile" 2>&1)
		mv "$co/profiles.away" "$co/profiles"
		[ "$out" = "$dir/probe.profile: ok (${rules:-?} rules)" ] ||
			fail "the installed agent does not find its library" "$out"
		# And the corpus of `bpfwarden selftest`, with the tree's out of the way.
		want=$("$co/build/bpfwarden" selftest --list 2>&1)
		mv "$co/tests" "$co/tests.away"
		out=$(cd / && "$dir/inst/usr/sbin/bpfwarden" selftest --list 2>&1)
		mv "$co/tests.away" "$co/tests"
		[ -n "$want" ] && [ "$out" = "$want" ] ||
			fail "the installed agent lists other routes than the tree's" "$out"
		[ -x "$dir/inst/usr/libexec/bpfwarden/tests/fsop" ] ||
			fail "make install left out the corpus's helper programs"
	fi

	# The guest: every location on the last kernel, with every check; the
	# first also on the others, with the checks that kernels could disagree
	# on (the paths the BPF programs build across the bind of the checkout).
	if [ "$first" = 1 ]; then
		ks=("${kernels[@]}")
	else
		ks=("${kernels[-1]}")
	fi
	first=0
	for k in "${ks[@]}"; do
		t=$SECONDS
		short=1
		[ "$k" != "${kernels[-1]}" ] || short=0
		guest "$k" "$co" "$dir/guest-$k.log" "$short"
		rc=$?
		times+=", guest $k $((SECONDS - t))s"
		inside=$(sed -n 's/^test-checkout: guest checks passed (.*; \(.*\))\r\{0,1\}$/\1/p' "$dir/guest-$k.log")
		[ -z "$inside" ] || times+=" ($inside)"
		if [ "$rc" = "$EXIT_DEAD" ]; then
			fail "the $k guest died twice without a status" "$(tail -n 20 "$dir/guest-$k.log")"
		elif [ "$rc" != 0 ]; then
			fail "guest checks on $k (exit $rc)" "$(tail -n 60 "$dir/guest-$k.log")"
		fi
	done

	if [ ${#fails[@]} -gt 0 ]; then
		why=$(printf '%s; ' "${fails[@]}")
		summary+=("$(printf 'test-checkout: %-10s FAIL [%ss]: %s' "$where" "$((SECONDS - start))" "${why%; }")")
		failed=1
	else
		summary+=("$(printf 'test-checkout: %-10s PASS [%ss: %s]' "$where" "$((SECONDS - start))" "$times")")
	fi
	rm -rf "$dir"
done

printf '%s\n' "${summary[@]}"
exit "$failed"
