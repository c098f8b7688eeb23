# SPDX-License-Identifier: GPL-2.0-only
"""The escape corpus: hostile routes around a profile, each tried twice.

A route is one way code in a sandbox could reach what its profile forbids:
another name for a file (a bind mount, a chroot, a file handle), another
cgroup, another process. Every test here runs the route's hostile program
twice (docs/threat-model.md lists the routes and their tests):

- under a profile that forbids what the route reaches: the syscall must
  fail with the expected errno, the secret must not be read or the file
  must be unchanged, and exactly one deny event must name the real object;
- under a permissive profile, as its control: the same program must get
  through. A route that no longer works there is a broken test, not a pass
  (the control fails the test).

Hostile programs print one line per attempt, "OK [DETAIL]" or
"ERR <ERRNO NAME>" (the helpers in tests/helpers/ and the drivers in
tests/integration/ follow that convention), so that a route's outcome is
what the program saw, not what the agent says.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

from bwtest import (BW, BUILD, FSOP, RUNTIME_RULES, SCRATCH, Failure, check, check_eq,  # noqa: E402,F401
                    cgroup_root, denials, events, lsm_active, main, profile, read, run, skip,
                    wait_for, write)


def need_modules(*mods):
    """Load modules a route needs from the VM's cached kernel package
    (tools/vm/fetch-modules.sh); skip the route when they cannot be loaded,
    as on a node, where the running kernel's own modules are the operator's."""
    r = subprocess.run(["tools/vm/modload.sh"] + list(mods), capture_output=True, text=True)
    if r.returncode:
        skip("cannot load %s: %s" % (" and ".join(mods), r.stderr.strip()))


def kept_of(agent_pid):
    """The "verdicts kept" counter (`bpfwarden status`) of the slot agent_pid owns."""
    out = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.search(r"agent pid (\d+) .* (\d+) verdicts kept", line)
        if m and int(m.group(1)) == agent_pid:
            return int(m.group(2))
    raise Failure("no policy slot of agent %d in status:\n%s" % (agent_pid, out))


def wait_governed(p, log):
    """Wait until the `bpfwarden run` p, logging to log, governs its sandbox."""
    try:
        # The first run of a boot loads and verifies every BPF program: slow under TCG.
        wait_for(lambda: "governing" in read(log) or p.poll() is not None, timeout=180,
                 what="the sandbox to be governed")
    except Failure:
        raise Failure("not governed after 180 s: " + read(log)[-2000:])
    if p.poll() is not None:
        raise Failure("bpfwarden run ended before governing: %s %s"
                      % (p.communicate()[1][-2000:], read(log)[-2000:]))


class RouteOpen(Failure):
    """The forbidding run got through: the route is open on this kernel."""


class ControlBroken(Failure):
    """The control run did not get through: the route proves nothing here."""


def outcome_lines(r):
    return [l for l in r.stdout.splitlines() if l.startswith(("OK", "ERR"))]


def refused(r, errno_name, obj, what, key="path"):
    """The forbidding run: the attempt got errno_name, and exactly one deny
    event names obj (by key: "path", "unix" or "addr")."""
    got = outcome_lines(r)
    if not (got and got[-1] == "ERR " + errno_name):
        raise (RouteOpen if got and got[-1].startswith("OK") else Failure)(
            "%s: the attempt should fail with %s; the program said %r (rc %d, stderr %s)"
            % (what, errno_name, got, r.rc, r.stderr.strip()))
    d = denials(r.events)
    named = [e for e in d if e.get(key) == obj]
    check(len(named) == 1,
          "%s: exactly one deny event should name %s; deny events: %r" % (what, obj, d))
    return named[0]


def got_through(r, what):
    """The control run: the route is real, the program got what it tried."""
    got = outcome_lines(r)
    if not (got and got[-1].startswith("OK") and not denials(r.events)):
        raise ControlBroken(
            "%s: the control under a permissive profile must get through (a route that no "
            "longer works is a broken test): the program said %r (rc %d, stderr %s), deny "
            "events %r" % (what, got, r.rc, r.stderr.strip(), denials(r.events)))
