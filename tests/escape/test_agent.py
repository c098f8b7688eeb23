# SPDX-License-Identifier: GPL-2.0-only
"""The agent itself: from inside a sandbox, as root, under a profile that
allows everything (self-protection holds "whatever the profile allows"):
bpf(2), the pinned maps and programs, the pins themselves, and the agent
process (signals, ptrace, SIGIO, limits). docs/threat-model.md, "The agent
itself".

Each route is refused with its errno and exactly one deny event naming the
real object (rule builtin:self-protection); its control is the same program
outside every sandbox, or aimed at a process that is not an agent.
"""
import json
import os
import signal
import subprocess
import sys

from escape import (BW, SCRATCH, check, check_eq, cgroup_root, denials, main, outcome_lines,
                    profile, read, refused, run, skip, wait_for, write)
from guards import HERE, attempt_failed, control, driver, needs_lsm

PINS = "/sys/fs/bpf/bpfwarden"
S = SCRATCH


def allow_all():
    return profile("default allow\n", name="allow-all")


def outside(route, *args):
    """The same program outside every sandbox: its outcome line."""
    out = subprocess.run(driver(route, *args), capture_output=True, text=True, timeout=60)
    return out.stdout.strip()


def at_agent(r, errno_name, op, what):
    """Refused with errno_name (None: the sender cannot see it), and exactly
    one deny event names this run's agent (the driver's parent) as its target."""
    attempt_failed(r, errno_name, what)
    d = denials(r.events)
    check(len(d) == 1 and d[0]["op"] == op and d[0].get("target", {}).get("agent") is True
          and d[0]["target"]["pid"] == d[0]["proc"]["ppid"]
          and d[0]["target"]["comm"] == "bpfwarden"
          and d[0]["rule"] == "builtin:self-protection",
          "%s: exactly one %s event should name the agent: %r" % (what, op, d))
    check_eq(r.rc, 0, "%s: the agent lived to report the command's status (%s)"
             % (what, r.stderr.strip()))
    return d[0]


class Agent:
    """`bpfwarden attach` on a cgroup of its own, as a target outside."""

    def __init__(self, name):
        self.cg = os.path.join(cgroup_root(), name)
        os.makedirs(self.cg, exist_ok=True)
        self.log = S + "/" + name + ".log"
        self.proc = subprocess.Popen([BW, "attach", "--cgroup", self.cg, "--profile",
                                      allow_all(), "--log", self.log])
        wait_for(lambda: os.path.exists(self.log) and "governing" in read(self.log),
                 what="attach")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=30)
        subprocess.run([BW, "detach", "--cgroup", self.cg], capture_output=True)
        os.rmdir(self.cg)


class Sleeper:
    """A process outside every sandbox that is not an agent."""

    def __init__(self):
        self.proc = subprocess.Popen(["sleep", "300"])
        self.pid = self.proc.pid

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        return self.proc.wait(timeout=30)


def test_bpf_syscall():
    """bpf(2) itself: `bpftool prog list`, and the syscall through ctypes."""
    needs_lsm()
    r = run(allow_all(), driver("bpf", 11))
    refused(r, "EPERM", {"cmd": 11, "name": "BPF_PROG_GET_NEXT_ID"}, "bpf(2)", key="bpf")
    r = run(allow_all(), ["bpftool", "prog", "list"])
    check(r.rc != 0 and "Operation not permitted" in r.stderr,
          "bpftool prog list fails (rc %d): %s" % (r.rc, r.stderr))
    check_eq([e["op"] for e in denials(r.events)], ["bpf"], "bpftool: one event")
    control(outside("bpf", 11).startswith("OK"), "bpf(2) outside the sandbox")


def test_pinned_maps_cannot_be_read():
    """A pinned map through bpf(BPF_OBJ_GET), through read(2) of the pin (a
    map with BTF prints itself), and through a bind mount of the pin
    directory made outside before."""
    needs_lsm()
    pin = PINS + "/bw_policies"
    r = run(allow_all(), driver("objget", pin))
    refused(r, "EPERM", {"cmd": 7, "name": "BPF_OBJ_GET"}, "BPF_OBJ_GET of a pin", key="bpf")
    r = run(allow_all(), driver("read", pin))
    e = refused(r, "EACCES", pin, "read(2) of a pinned map")
    check_eq((e["op"], e["rule"]), ("open", "builtin:self-protection"), "the pin's event")
    other = S + "/pins"
    os.makedirs(other)
    subprocess.run(["mount", "--bind", PINS, other], check=True)
    try:
        r = run(allow_all(), driver("read", other + "/bw_policies"))
        refused(r, "EACCES", other + "/bw_policies", "the pin through a bind mount")
    finally:
        subprocess.run(["umount", other], check=True)
    control(outside("read", pin).startswith("OK"), "read(2) of the pin outside the sandbox")


def test_pins_cannot_be_removed():
    """unlink, rename, rmdir and mkdir in the pin directory. The pin tried
    is a scratch map pinned there by this test, which the control removes."""
    needs_lsm()
    dummy = PINS + "/bwtest_dummy"
    subprocess.run(["bpftool", "map", "create", dummy, "type", "array", "key", "4", "value", "4",
                    "entries", "1", "name", "bwtest_dummy"], check=True)
    try:
        for route, args, op, path in (
                ("unlink", [dummy], "unlink", dummy),
                ("rename", [dummy, PINS + "/moved"], "rename", dummy),
                ("rmdir", [PINS + "/links"], "rmdir", PINS + "/links"),
                ("mkdir", [PINS + "/new"], "mkdir", PINS + "/new")):
            r = run(allow_all(), driver(route, *args))
            e = refused(r, "EACCES", path, route + " in the pin directory")
            check_eq((e["op"], e["rule"]), (op, "builtin:self-protection"), route + ": event")
            check(os.path.exists(dummy) and not os.path.exists(PINS + "/new"),
                  route + ": the pin directory is unchanged")
        control(outside("unlink", dummy).startswith("OK"), "unlink of the pin outside a sandbox")
    finally:
        if os.path.exists(dummy):
            os.unlink(dummy)


def test_agent_cannot_be_killed():
    """SIGKILL and SIGSTOP to the agent (the driver's parent under `run`)."""
    needs_lsm()
    for sig in (signal.SIGKILL, signal.SIGSTOP):
        r = run(allow_all(), driver("kill", "parent", int(sig)))
        e = at_agent(r, "EPERM", "signal", "signal %d to the agent" % sig)
        check_eq(e["signal"], int(sig), "the event's signal")
    # Control: from outside, an agent dies of SIGKILL like any process.
    a = Agent("bwtest-victim")
    try:
        control(outside("kill", a.proc.pid, 9).startswith("OK") and a.proc.wait(timeout=30) == -9,
                "SIGKILL of an agent from outside")
    finally:
        a.close()


def test_agent_cannot_be_traced():
    """PTRACE_ATTACH to the agent and its /proc/PID/environ."""
    needs_lsm()
    r = run(allow_all(), driver("attach", "parent"))
    e = at_agent(r, "EPERM", "ptrace", "ptrace attach of the agent")
    check_eq(e["access"], "attach", "the event's access")
    r = run(allow_all(), driver("environ", "parent"))
    e = at_agent(r, "EACCES", "ptrace", "the agent's environment")
    check_eq(e["access"], "read", "the event's access")
    a = Agent("bwtest-traced")
    try:
        control(outside("attach", a.proc.pid) == "OK attached", "ptrace of an agent from outside")
    finally:
        a.close()


def test_sigio_aimed_at_the_agent():
    """F_SETOWN points a socket's SIGIO at the agent and F_SETSIG makes it
    SIGKILL: the sender sees nothing, the signal is not delivered."""
    needs_lsm()
    r = run(allow_all(), driver("sigio", "parent", 9))
    e = at_agent(r, None, "signal", "SIGIO as SIGKILL to the agent")
    check_eq(e["signal"], 9, "the event's signal")
    # Control: the same route kills a process that is not an agent.
    s = Sleeper()
    try:
        r = run(allow_all(), driver("sigio", s.pid, 9))
        control(outcome_lines(r) == ["OK sent"] and s.proc.wait(timeout=30) == -9,
                "SIGIO as SIGKILL to a process that is not an agent: %r" % outcome_lines(r))
    finally:
        s.close()


def test_limits_on_the_agent():
    """prlimit (RLIMIT_CPU of a second gets the agent killed), setpriority,
    sched_setaffinity and ioprio_set aimed at the agent."""
    needs_lsm()
    s = Sleeper()
    try:
        for route, ctl in (("prlimit", "rlimit"), ("nice", "nice"),
                         ("affinity", "scheduler"), ("ioprio", "ioprio")):
            r = run(allow_all(), driver(route, "parent"))
            e = at_agent(r, "EPERM", "control", route + " of the agent")
            check_eq(e["control"], ctl, route + ": the event says what")
            r = run(allow_all(), driver(route, s.pid))
            control(outcome_lines(r) == ["OK set"] and not denials(r.events),
                    "%s of a process that is not an agent: %r, events %r"
                    % (route, outcome_lines(r), denials(r.events)))
    finally:
        s.close()


def test_map_descriptor_from_outside():
    """A pinned map's descriptor, opened outside and sent over a unix socket:
    a map is read without bpf(2) too (mmap)."""
    needs_lsm()
    from test_descriptors import Broker, recv
    b = Broker()
    try:
        r = run(allow_all(), recv(b, "bpfmap", PINS + "/bw_policies"))
        e = refused(r, "CTRUNC", {"map": "bw_policies"}, "a map descriptor from outside",
                    key="bpf")
        check_eq((e["op"], e["rule"]), ("receive", "builtin:self-protection"), "its event")
        control(outside("recv", b.path, "bpfmap", PINS + "/bw_policies").startswith("OK"),
                "the map descriptor received outside a sandbox")
    finally:
        b.close()


def test_without_capabilities_the_policy_stays():
    """Outside every sandbox: a process without CAP_BPF and CAP_SYS_ADMIN
    that opens a pinned map cannot rewrite the policy. A non-root uid cannot
    reach the pin (the directory is root's, 0700); root without those two
    capabilities can, by its file mode alone, and the kernel would let it
    update the map: the bpf_map hook refuses bpfwarden's own maps to it."""
    needs_lsm()
    if not subprocess.run(["which", "setpriv"], capture_output=True).returncode == 0:
        skip("setpriv (util-linux) is not installed: no way to drop a capability")
    run(allow_all(), ["true"])  # everything loaded and pinned
    pin = PINS + "/bw_policies"
    value = "aa" * 48

    def slot63():
        out = subprocess.run(["bpftool", "-j", "map", "lookup", "pinned", pin, "key", "63", "0",
                              "0", "0"], capture_output=True, text=True, check=True).stdout
        return out

    before = slot63()
    for who, args, want in (
            ("a non-root uid", ["--reuid=65534", "--regid=65534", "--clear-groups"], "ERR EACCES"),
            ("root without CAP_BPF and CAP_SYS_ADMIN",
             ["--inh-caps=-bpf,-sys_admin", "--bounding-set=-bpf,-sys_admin"], "ERR EPERM")):
        out = subprocess.run(["setpriv"] + args + driver("objupdate", pin, 63, value),
                             capture_output=True, text=True)
        check_eq(out.stdout.strip(), want, "%s opening the pinned map (%s)" % (who, out.stderr))
    check_eq(slot63(), before, "the policy map is unchanged")
    control(outside("objget", pin).startswith("OK"), "with the capabilities the pin opens")


LOG_ROUTES = r"""
import ctypes, errno, os, sys
log, other, link, view = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
libc = ctypes.CDLL(None, use_errno=True)
def by_bind_mount():
    # The log's directory bound on view, in the sandbox's own mount namespace.
    if libc.mount(os.path.dirname(log).encode(), view.encode(), None, 4096, None):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    append(os.path.join(view, os.path.basename(log)))
def attempt(name, fn):
    try:
        fn()
        print(name, "OK")
    except OSError as e:
        print(name, "ERR", errno.errorcode[e.errno])
def append(path):
    with open(path, "a") as f:
        f.write('{"forged":1}\n')
attempt("truncate", lambda: open(log, "w").close())
attempt("append", lambda: append(log))
attempt("ftruncate", lambda: os.truncate(log, 0))
attempt("chmod", lambda: os.chmod(log, 0o666))
attempt("append-by-link", lambda: append(link))
attempt("append-by-bind-mount", by_bind_mount)
attempt("rename", lambda: os.rename(log, other + ".moved"))
with open(other + ".decoy", "w") as f:
    f.write("{}\n")
attempt("replace", lambda: os.rename(other + ".decoy", log))
attempt("unlink", lambda: os.unlink(log))
"""


def test_the_audit_log_cannot_be_changed():
    """The run's own audit log, from inside the sandbox as root under a
    profile that allows everything: truncated, appended to (by its name and
    by a hard link made to it), truncated by name, chmod, renamed away,
    replaced by a decoy renamed over it, unlinked. Each is refused (EACCES)
    with a deny event of rule builtin:self-protection, and the log keeps
    every record. Control: the same steps on a file that is no agent's. The
    profile allows mounts too: appended to through a bind mount of its
    directory in the sandbox's own namespace, it is the same file."""
    needs_lsm()
    log, other = S + "/agent.log", S + "/plain"
    write(other, "plain\n")
    write(log, "")
    os.link(log, log + ".link")
    os.link(other, other + ".link")
    os.makedirs(S + "/view")
    prof = profile("default allow\nallow mount\n", name="allow-all")
    names = ["truncate", "append", "ftruncate", "chmod", "append-by-link",
             "append-by-bind-mount", "rename", "replace", "unlink"]
    for target, want in ((log, "ERR EACCES"), (other, "OK")):
        r = subprocess.run([BW, "run", "--profile", prof, "--log", log, "--", "python3", "-c",
                            LOG_ROUTES, target, S + "/x-" + os.path.basename(target),
                            target + ".link", S + "/view"],
                           capture_output=True, text=True, timeout=120)
        got = dict(line.split(" ", 1) for line in r.stdout.splitlines())
        check_eq(sorted(got), sorted(names), "every step ran (%s)" % r.stderr.strip())
        for n in names:
            check_eq(got[n], want, "%s of %s" % (n, target))
    recs = [line for line in read(log).splitlines() if line.strip()]
    check(all(line.startswith('{"ts"') for line in recs), "no forged record: %r" % recs[:3])
    evs = denials([json.loads(line) for line in recs])
    check(evs and all(e["rule"] == "builtin:self-protection" for e in evs),
          "the refusals' events: %r" % evs)
    check(len(evs) >= len(names), "an event for each refusal: %r" % evs)
    check(any(e["op"] == "unlink" and e["path"] == log for e in evs), "the unlink named the log")


def test_a_dead_agent_protects_nothing():
    """An agent killed with SIGKILL cannot remove its record: the record is
    its task's storage and goes with it, so a process that reuses its pid is
    an ordinary process (here: one the sandbox may kill)."""
    needs_lsm()
    a = Agent("bwtest-gone")
    pid = a.proc.pid
    a.proc.kill()
    a.close()
    s = None
    for _ in range(20):
        write("/proc/sys/kernel/ns_last_pid", str(pid - 1))
        s = Sleeper()
        if s.pid == pid:
            break
        s.close()
        s = None
    if not s:
        skip("could not get pid %d again (other processes took it)" % pid)
    try:
        r = run(allow_all(), driver("kill", pid, 9))
        check_eq(outcome_lines(r), ["OK sent"], "kill of the process that reuses the pid")
        check_eq(denials(r.events), [], "no event")
        check_eq(s.proc.wait(timeout=30), -9, "it was killed")
    finally:
        s.close()


def test_audit_and_learn_modes_let_bpf_through():
    """The mode is the operator's: in audit and learn mode bpf(2) goes
    through, with one audit event each (never a learn event)."""
    needs_lsm()
    for mode in ("audit", "learn"):
        r = run(allow_all(), driver("bpf", 11), mode=mode)
        check(outcome_lines(r)[-1].startswith("OK"), "%s mode: bpf(2) goes through: %r"
              % (mode, r.stdout))
        evs = [(e["type"], e["op"], e["mode"], e["rule"]) for e in r.events
               if e["type"] in ("deny", "audit", "learn")]
        check_eq(evs, [("audit", "bpf", mode, "builtin:self-protection")], mode + " mode events")


TESTS = [
    test_bpf_syscall,
    test_pinned_maps_cannot_be_read,
    test_pins_cannot_be_removed,
    test_agent_cannot_be_killed,
    test_agent_cannot_be_traced,
    test_sigio_aimed_at_the_agent,
    test_limits_on_the_agent,
    test_map_descriptor_from_outside,
    test_without_capabilities_the_policy_stays,
    test_the_audit_log_cannot_be_changed,
    test_a_dead_agent_protects_nothing,
    test_audit_and_learn_modes_let_bpf_through,
]

if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main(TESTS, sys.argv))
