# SPDX-License-Identifier: GPL-2.0-only
"""Other processes: from inside a sandbox, the memory, environment and
descriptors of a process outside it (ptrace and everything the kernel checks
as ptrace: process_vm_readv, pidfd_getfd, /proc/PID/mem, environ, fd, root,
cwd). docs/threat-model.md, "Other processes".

The outside process is holder.py, started by this test outside every
governed cgroup: it holds the secret in memory, in its environment and as an
open descriptor. The sandbox's profile allows everything but reading the
secret file, so each route is the only way to the secret. Refused: the
errno, the secret absent from what the program printed, exactly one deny
event naming the outside process. Controls: the same program outside any
sandbox gets the secret (the route is real), and inside the sandbox against
its own child it works (the kernel's rules stay inside).
"""
import os
import secrets
import subprocess
import sys
import threading

from escape import (BW, SCRATCH, check, check_eq, cgroup_root, denials, got_through, main,
                    outcome_lines, profile, read, run, wait_for, write)
from guards import DRIVER, HOLDER, PY, attempt_failed, control, driver, needs_lsm

S = SCRATCH


class Holder:
    """holder.py outside every sandbox, holding a fresh secret."""

    def __init__(self):
        self.secret = "s3cret-" + secrets.token_hex(8)
        self.env_secret = "env-" + secrets.token_hex(8)
        self.path = S + "/secret"
        write(self.path, self.secret)
        self.proc = subprocess.Popen([PY, HOLDER, self.path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     env=dict(os.environ, SECRET_ENV=self.env_secret))
        _, pid, addr, n, fd = self.proc.stdout.readline().split()
        self.pid, self.addr, self.len, self.fd = int(pid), int(addr), int(n), int(fd)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def forbidding(h):
    """Everything allowed but the secret file itself."""
    return profile("default allow\ndeny file r %s\n" % h.path, name="forbid")


def route_args(route, h):
    return {"ptrace": [h.pid, h.addr, h.len], "vmread": [h.pid, h.addr, h.len],
            "mem": [h.pid, h.addr, h.len], "environ": [h.pid], "getfd": [h.pid, h.fd],
            "fdlink": [h.pid, h.fd], "root": [h.pid, "/etc/hostname"], "cwd": [h.pid]}[route]


def refused_target(r, errno_name, pid, op, what, mode="enforce", etype="deny"):
    """The attempt failed with errno_name (None: not checked) and exactly one
    event, of type etype, names process pid as its target."""
    attempt_failed(r, errno_name, what)
    evs = [e for e in r.events if e["type"] in ("deny", "audit", "learn")]
    named = [e for e in evs if e["type"] == etype and e.get("op") == op
             and e.get("target", {}).get("pid") == pid and e["mode"] == mode]
    check(len(named) == 1 and len(evs) == 1,
          "%s: exactly one %s event should name process %d; events: %r" % (what, etype, pid, evs))
    return named[0]


def secret_absent(r, h, what):
    for s in (h.secret, h.env_secret):
        check(s not in r.stdout, "%s: the secret was read: %r" % (what, r.stdout))


def try_route(route, errno_name):
    """One route: refused against the outside holder; controls outside and inside."""
    needs_lsm()
    with Holder() as h:
        what = route + " of a process outside the sandbox"
        r = run(forbidding(h), driver(route, *route_args(route, h)))
        e = refused_target(r, errno_name, h.pid, "ptrace", what)
        secret_absent(r, h, what)
        check_eq(e["rule"], "builtin:process-boundary", what + ": rule")
        check_eq((e["target"]["comm"], e["target"]["agent"]), ("python3", False), what + ": target")
        # Control 1: not sandboxed, the same program gets the secret.
        out = subprocess.run(driver(route, *route_args(route, h)), capture_output=True, text=True)
        got = out.stdout.strip()
        control(got.startswith("OK") and (route in ("root", "cwd") or h.secret in got
                                          or h.env_secret in got),
                "%s: outside a sandbox the route reads the secret: %r %s"
                % (what, got, out.stderr))
    # Control 2: inside the sandbox, against its own child, the kernel decides.
    write(S + "/marker", "inside-marker")
    r = run(profile("default allow\n", name="control"), driver("inside", route, S + "/marker"))
    got_through(r, route + " of a process inside the sandbox")
    control(route in ("root", "cwd") or "inside-marker" in r.stdout,
            "%s inside: read the child's marker: %r" % (route, r.stdout))


def test_ptrace_attach_outside():
    """PTRACE_ATTACH to a process outside the sandbox, then PEEKDATA of the
    secret in its memory: EPERM."""
    try_route("ptrace", "EPERM")


def test_process_vm_readv_outside():
    """process_vm_readv of the secret in the memory of a process outside the
    sandbox: EPERM."""
    try_route("vmread", "EPERM")


def test_proc_mem_outside():
    """/proc/PID/mem of a process outside the sandbox, read at the secret's
    address: EACCES at open."""
    try_route("mem", "EACCES")


def test_proc_environ_outside():
    """/proc/PID/environ of a process outside the sandbox, which holds the
    secret in its environment: EACCES at open."""
    try_route("environ", "EACCES")


def test_pidfd_getfd_outside():
    """pidfd_getfd copies the descriptor of the denied file that a process
    outside the sandbox holds open: EPERM."""
    try_route("getfd", "EPERM")


def test_proc_fd_outside():
    """/proc/PID/fd/N of a process outside the sandbox reopens its
    descriptor of the denied file: EACCES."""
    try_route("fdlink", "EACCES")


def test_proc_root_and_cwd_outside():
    """/proc/PID/root and /proc/PID/cwd of a process outside the sandbox,
    its view of the file system: EACCES."""
    try_route("root", "EACCES")
    try_route("cwd", "EACCES")


def test_another_sandbox_is_outside():
    """A process in a cgroup governed by another profile's slot is outside
    too: a sandbox cannot read its neighbour's memory."""
    needs_lsm()
    root = cgroup_root()
    cg = os.path.join(root, "bwtest-neighbour")
    os.makedirs(cg, exist_ok=True)
    log = S + "/neighbour.log"
    with Holder() as h:
        agent = subprocess.Popen([BW, "attach", "--cgroup", cg, "--profile",
                                  profile("default allow\n", name="neighbour"), "--log", log])
        try:
            wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
            write(os.path.join(cg, "cgroup.procs"), str(h.pid))
            r = run(forbidding(h), driver("mem", h.pid, h.addr, h.len))
            refused_target(r, "EACCES", h.pid, "ptrace", "memory of a neighbouring sandbox")
            secret_absent(r, h, "memory of a neighbouring sandbox")
            # Control: the same program, ungoverned, reads the neighbour's memory.
            out = subprocess.run(driver("mem", h.pid, h.addr, h.len), capture_output=True,
                                 text=True)
            control(h.secret in out.stdout, "the neighbour's memory read from outside: %r %s"
                    % (out.stdout, out.stderr))
        finally:
            write(os.path.join(root, "cgroup.procs"), str(h.pid))
            agent.terminate()
            agent.wait(timeout=30)
            os.rmdir(cg)


def test_traceme_by_an_outside_child():
    """PTRACE_TRACEME makes the caller's parent its tracer: a process moved
    out of the sandbox (by root outside) cannot hand itself to its sandboxed
    parent. Control: a child still inside can."""
    needs_lsm()
    root = cgroup_root()
    out = os.path.join(root, "bwtest-out")
    os.makedirs(out, exist_ok=True)
    child_file, moved_file = S + "/child", S + "/moved"
    # The sandboxed parent forks a child that waits until this test has
    # moved it (or not), then asks to be traced.
    code = ("import os, time\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    open(%r, 'w').write(str(os.getpid()))\n"
            "    while not os.path.exists(%r): time.sleep(0.05)\n"
            "    os.execv(%r, [%r, %r, 'traceme'])\n"
            "os.waitpid(pid, 0)\n" % (child_file, moved_file, PY, PY, DRIVER))

    def mover(move):
        wait_for(lambda: os.path.exists(child_file) and read(child_file), what="the child")
        if move:
            write(os.path.join(out, "cgroup.procs"), read(child_file))
        write(moved_file, "")

    try:
        for move in (True, False):
            for f in (child_file, moved_file):
                if os.path.exists(f):
                    os.unlink(f)
            t = threading.Thread(target=mover, args=(move,))
            t.start()
            r = run(profile("default allow\n", name="traceme"), [PY, "-c", code])
            t.join()
            child = int(read(child_file))
            if move:
                e = refused_target(r, "EPERM", child, "ptrace", "PTRACE_TRACEME from outside")
                check_eq(e["access"], "traceme", "the event says traceme")
                check(e["proc"]["pid"] != child, "the event's process is the governed parent")
            else:
                got_through(r, "PTRACE_TRACEME inside the sandbox")
    finally:
        os.rmdir(out)


def test_audit_and_learn_modes_let_ptrace_through():
    """The mode is the operator's: audit and learn block nothing a profile
    did not deny; enforce would have refused, so each says so once, as an
    audit event (never learned: no rule can allow it)."""
    needs_lsm()
    for mode in ("audit", "learn"):
        with Holder() as h:
            r = run(forbidding(h), driver("environ", h.pid), mode=mode)
            got = outcome_lines(r)
            check(got and got[-1].startswith("OK") and h.env_secret in got[-1],
                  "%s mode lets the route through: %r" % (mode, got))
            refused_target(r, None, h.pid, "ptrace", "environ in %s mode" % mode, mode=mode,
                           etype="audit")


def test_ps_stays_quiet():
    """The kernel asks some checks not to be logged (PTRACE_MODE_NOAUDIT:
    /proc/PID/stat's stack and wchan fields): refused alike, without events,
    so that ps in a sandbox does not flood the log."""
    needs_lsm()
    with Holder() as h:
        r = run(profile("default allow\n", name="ps"), ["/bin/cat", "/proc/%d/stat" % h.pid])
        check_eq(r.rc, 0, "stat is readable (%s)" % r.stderr)
        check(r.stdout.startswith("%d (python3)" % h.pid), "stat: %r" % r.stdout)
        check_eq(denials(r.events), [], "no event for a check the kernel keeps quiet")


def test_proc_cmdline_outside():
    """/proc/PID/cmdline reads a process's argument area, its memory, and the
    kernel checks no ptrace access for it: of a process outside the sandbox
    (its arguments hold a secret), by /proc/PID/cmdline and by
    /proc/PID/task/TID/cmdline, refused with EACCES, one event each naming
    the file (rule builtin:process-boundary). Its own and its child's read
    as before; outside a sandbox the same read gets the secret."""
    needs_lsm()
    secret = "argv-" + secrets.token_hex(8)
    p = subprocess.Popen([PY, "-c", "import sys; sys.stdin.read()", secret],
                         stdin=subprocess.PIPE)
    try:
        paths = ["/proc/%d/cmdline" % p.pid, "/proc/%d/task/%d/cmdline" % (p.pid, p.pid)]
        r = run(profile("default allow\n", name="cmdline"),
                ["/bin/sh", "-c", 'for f; do cat "$f" || echo "ERR $f"; done', "sh"] + paths)
        check(secret not in r.stdout, "the arguments were read: %r" % r.stdout)
        check_eq([l for l in r.stdout.splitlines() if l.startswith("ERR")],
                 ["ERR " + f for f in paths], "each read refused (stderr %s)" % r.stderr.strip())
        check(r.stderr.count("Permission denied") == len(paths), "EACCES: %r" % r.stderr)
        for f in paths:
            named = [e for e in denials(r.events) if e.get("path") == f]
            check(len(named) == 1 and named[0]["rule"] == "builtin:process-boundary",
                  "one process-boundary event naming %s: %r" % (f, denials(r.events)))
        # Control 1: the sandbox's own processes.
        r = run(profile("default allow\n", name="control"),
                ["/bin/sh", "-c", 'cat /proc/self/cmdline; echo; sleep 17 & '
                 'sleep 0.5; cat /proc/$!/cmdline; kill $!'])
        control("cat\0/proc/self/cmdline" in r.stdout and "sleep\x0017" in r.stdout and
                not denials(r.events),
                "the sandbox's own cmdlines: %r, %r" % (r.stdout, denials(r.events)))
        # Control 2: outside any sandbox the route reads the secret.
        out = subprocess.run(["/bin/cat", paths[0]], capture_output=True, text=True)
        control(secret in out.stdout, "outside a sandbox the arguments are read: %r" % out.stdout)
    finally:
        p.stdin.close()
        p.wait(timeout=30)


TESTS = [
    test_ptrace_attach_outside,
    test_process_vm_readv_outside,
    test_proc_mem_outside,
    test_proc_environ_outside,
    test_pidfd_getfd_outside,
    test_proc_fd_outside,
    test_proc_root_and_cwd_outside,
    test_another_sandbox_is_outside,
    test_traceme_by_an_outside_child,
    test_audit_and_learn_modes_let_ptrace_through,
    test_ps_stays_quiet,
    test_proc_cmdline_outside,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
