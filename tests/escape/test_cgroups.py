# SPDX-License-Identifier: GPL-2.0-only
"""Leaving the governed cgroup, and a full governed-cgroup map.

A governed process must not move a task out of the cgroups of its profile
slot, by any route, whatever its profile allows: every sandbox here runs
under `default allow`, the most its profile could allow. So the control of
a migration route cannot be "the same program under a permissive profile"
(that is refused too, which is the point): it is the same program run
outside bpfwarden, from a cgroup nothing governs, which shows that the
kernel alone lets the move happen. The same holds for the limits on the
cgroups a sandbox may make: their control makes as many cgroups below a
cgroup nothing governs.

Moves between the sandbox's own cgroups are the profile's to allow (`allow
cgroup`); with it, the kernel's own check of every move decides (bw_cg_leave,
attached only while such a profile is in force), so the routes out are run
both without and with it.

Every hostile program is tests/helpers/cgop.c: one line per step ("OK" or
"ERR <ERRNO>") and at the end "cgroup PATH", the cgroup it ended up in
(/proc/thread-self/cgroup), which the tests check did not change.
"""
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile

from escape import (BUILD, BW, FSOP, SCRATCH, Failure, check, check_eq, cgroup_root, denials,
                    events, got_through, main, profile, read, refused, wait_for, write)
from bwtest import Result

CGOP = os.path.join(BUILD, "tests", "cgop")
S = SCRATCH
ALLOW_ALL = "default allow\n"
MOVES = "default allow\nallow cgroup\n"
LEAVE_LINK = "/sys/fs/bpf/bpfwarden/links/bw_cg_leave"


def where(r):
    """The cgroup the program ended up in (its last "cgroup PATH" line)."""
    got = [l[len("cgroup "):] for l in r.stdout.splitlines() if l.startswith("cgroup ")]
    check(got, "the program did not say where it ended up: %r (stderr %s)"
          % (r.stdout, r.stderr.strip()))
    return got[-1]


def cgdir(rel):
    return os.path.join(cgroup_root(), rel.lstrip("/"))


def make_cgroup(rel):
    d = cgdir(rel)
    os.makedirs(d, exist_ok=True)
    return d


def remove_cgroups(*rels):
    """Move what is left to the root cgroup, then remove, children first."""
    root = cgroup_root()
    for rel in rels:
        d = cgdir(rel)
        if not os.path.isdir(d):
            continue
        for sub, dirs, _ in sorted(os.walk(d, topdown=False), key=lambda w: -len(w[0])):
            for f in ("cgroup.procs",):
                try:
                    for pid in read(os.path.join(sub, f)).split():
                        try:
                            write(os.path.join(root, "cgroup.procs"), pid + "\n")
                        except OSError:
                            pass
                except OSError:
                    pass
            try:
                os.rmdir(sub)
            except OSError:
                pass


def sandbox(prof, cmd, pass_fds=(), mode=None):
    """bpfwarden run under prof, descriptors pass_fds inherited by cmd."""
    fd, log = tempfile.mkstemp(prefix="bw-", suffix=".log", dir=S)
    os.close(fd)
    proc = subprocess.run([BW, "run", "--profile", prof, "--log", log] +
                          (["--mode", mode] if mode else []) + ["--"] + list(cmd),
                          capture_output=True, text=True, timeout=300, pass_fds=pass_fds)
    return Result(proc, log)


def plain(cmd, pass_fds=()):
    """The control: cmd outside bpfwarden, started in a fresh cgroup nothing governs."""
    start = make_cgroup("bwesc-plain")
    proc = subprocess.run(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', start] +
                          list(cmd), capture_output=True, text=True, timeout=300,
                          pass_fds=pass_fds)
    return Result(proc, os.path.join(S, "no-agent.log"))


def in_run_cgroup(r, what):
    check(re.fullmatch(r"/bpfwarden/run-\d+", where(r)),
          "%s: the process left its run cgroup: it is in %s" % (what, where(r)))


def refused_migration(r, dest, what):
    e = refused(r, "EACCES", dest, what)
    check_eq((e["op"], e["rule"], e["access"]), ("cgroup_migrate", "builtin:cgroup-subtree", "w"),
             what + ": the event")
    return e


def run_cgroup_dir():
    """A shell snippet: $R is the sandbox's own cgroup directory."""
    return 'd=$(sed -n "s/^0:://p" /proc/self/cgroup); R="$0$d"; '


def test_leave_by_writing_cgroup_procs():
    """Root in the sandbox writes its PID to the root cgroup's cgroup.procs, or to a
    cgroup beside its own, outside its subtree: refused at the open, with or without
    `allow cgroup`."""
    sib = make_cgroup("bwesc-sib")
    try:
        for text in (ALLOW_ALL, MOVES):
            p = profile(text)
            for dest, name in ((cgroup_root(), "/"), (sib, "/bwesc-sib")):
                what = "write own PID to %s cgroup.procs (profile %r)" % (name, text)
                r = sandbox(p, [CGOP, "procs", dest])
                refused_migration(r, name, what)
                in_run_cgroup(r, what)
        for dest, name in ((cgroup_root(), "/"), (sib, "/bwesc-sib")):
            what = "write own PID to %s cgroup.procs" % name
            c = plain([CGOP, "procs", dest])
            got_through(c, what)
            check_eq(where(c), name, what + ", control: where it went")
    finally:
        remove_cgroups("bwesc-sib", "bwesc-plain")


def test_leave_by_clone_into_cgroup():
    """clone3(CLONE_INTO_CGROUP) with an O_RDONLY descriptor of an outside cgroup: a child
    starts there without any file being written. Without `allow cgroup` every such clone
    is refused before the kernel resolves the descriptor (the event names no cgroup);
    with it, the kernel's check of the destination refuses this one."""
    sib = make_cgroup("bwesc-sib")
    what = "clone3 into /bwesc-sib"
    try:
        for text, dest in ((ALLOW_ALL, None), (MOVES, "/bwesc-sib")):
            r = sandbox(profile(text), [CGOP, "clone-into", sib])
            w = "%s (profile %r)" % (what, text)
            e = refused(r, "EACCES", dest, w)
            check_eq((e["op"], e["rule"], e["access"]),
                     ("cgroup_migrate", "builtin:cgroup-subtree" if dest else "default", "w"),
                     w + ": the event")
            check("OK child" not in r.stdout, w + ": a child started: " + r.stdout)
            in_run_cgroup(r, w)
        c = plain([CGOP, "clone-into", sib])
        got_through(c, what)
        check("OK child in /bwesc-sib" in c.stdout, what + ", control: " + c.stdout)
    finally:
        remove_cgroups("bwesc-sib", "bwesc-plain")


def test_leave_through_a_descriptor_opened_outside():
    """A cgroup.procs descriptor of an outside cgroup, opened before the sandbox and
    inherited. Without `allow cgroup` nothing in the kernel would see the write (no
    open, and bw_cg_leave is not attached), so `run` refuses to start the command while
    it would inherit one; with `allow cgroup`, the kernel's check of the common ancestor
    of source and destination (the root here) refuses the write, and the event names it."""
    sib = make_cgroup("bwesc-sib")
    what = "write own PID through an inherited descriptor of /bwesc-sib/cgroup.procs"
    fd = os.open(os.path.join(sib, "cgroup.procs"), os.O_WRONLY)
    try:
        os.set_inheritable(fd, True)
        r = sandbox(profile(ALLOW_ALL), [CGOP, "write-fd", str(fd)], pass_fds=(fd,))
        check(r.rc == 125 and not r.stdout and "not starting the command" in r.stderr
              and "cgroup.procs" in r.stderr,
              what + ": run should refuse to start the command (rc %d, stdout %r, stderr %s)"
              % (r.rc, r.stdout, r.stderr.strip()))
        r = sandbox(profile(MOVES), [CGOP, "write-fd", str(fd)], pass_fds=(fd,))
        refused_migration(r, "/", what + " (allow cgroup)")
        in_run_cgroup(r, what)
        c = plain([CGOP, "write-fd", str(fd)], pass_fds=(fd,))
        got_through(c, what)
        check_eq(where(c), "/bwesc-sib", what + ", control: where it went")
    finally:
        os.close(fd)
        remove_cgroups("bwesc-sib", "bwesc-plain")


def test_cgroup_procs_over_scm_rights():
    """A writable descriptor of an outside cgroup's cgroup.procs, opened by a process
    outside the sandbox and sent over a unix socket (SCM_RIGHTS): dropped on receipt,
    so no write through it can be tried."""
    from test_descriptors import Broker, recv
    sib = make_cgroup("bwesc-sib")
    target = os.path.join(sib, "cgroup.procs")
    what = "a writable /bwesc-sib/cgroup.procs descriptor from outside"
    b = Broker()
    try:
        r = sandbox(profile(ALLOW_ALL), recv(b, "cgprocs", target))
        e = refused(r, "CTRUNC", "/bwesc-sib", what)
        check_eq((e["op"], e["rule"]), ("cgroup_migrate", "builtin:cgroup-subtree"),
                 what + ": the event")
        check("moved" not in r.stdout, what + ": it moved: " + r.stdout)
        c = plain(recv(b, "cgprocs", target))
        got_through(c, what)
        check("moved to 0::/bwesc-sib" in c.stdout, what + ", control: " + c.stdout)
    finally:
        b.close()
        remove_cgroups("bwesc-sib", "bwesc-plain")


def test_attach_refuses_a_subtree_holding_a_descriptor():
    """`attach` to a cgroup whose process holds another cgroup's cgroup.procs open for
    writing: in enforce mode, without `allow cgroup`, the subtree is not governed (the
    process could leave through it) and attach says which descriptor."""
    sib, gov = make_cgroup("bwesc-sib"), make_cgroup("bwesc-held")
    holder = None
    try:
        holder = subprocess.Popen(
            ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec 7>"$1/cgroup.procs" && '
             'exec sleep 60', gov, sib])
        wait_for(lambda: read(os.path.join(gov, "cgroup.procs")).strip(), what="holder")
        r = subprocess.run([BW, "attach", "--cgroup", gov, "--profile", profile(ALLOW_ALL)],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and "not governing" in r.stderr and "cgroup.procs" in r.stderr,
              "attach to a subtree holding a cgroup.procs descriptor: rc %d, stderr %s"
              % (r.returncode, r.stderr.strip()))
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        check("bwesc-held" not in st, "the subtree is still governed: " + st)
    finally:
        if holder:
            holder.kill()
            holder.wait()
        remove_cgroups("bwesc-held", "bwesc-sib")


def test_pull_an_outside_process_in():
    """The sandbox writes the PID of a process outside it to its own cgroup.procs: that
    process would come under the sandbox's reach (signals, ptrace, cgroup.kill). Refused
    at the open without `allow cgroup`; with it, by the kernel's check of the common
    ancestor of the process's cgroup and the sandbox's (the root)."""
    out = make_cgroup("bwesc-out")
    victim = None
    try:
        victim = subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec sleep 60',
                                   out])
        wait_for(lambda: read(os.path.join(out, "cgroup.procs")).strip(), what="victim")
        pid = str(victim.pid)
        script = run_cgroup_dir() + 'exec "$1" pull "$R" "$2"'
        for text in (ALLOW_ALL, MOVES):
            what = "pull PID %s into the sandbox's cgroup (profile %r)" % (pid, text)
            r = sandbox(profile(text), ["sh", "-c", script, cgroup_root(), CGOP, pid])
            got = [l for l in r.stdout.splitlines() if l.startswith(("OK", "ERR"))]
            check_eq(got, ["ERR EACCES"], what)
            d = denials(r.events)
            check(len(d) == 1 and d[0]["op"] == "cgroup_migrate",
                  what + ": one cgroup_migrate deny event: %r" % d)
            want = ("builtin:cgroup-subtree", "/") if text == MOVES else ("default", None)
            check_eq((d[0]["rule"], d[0]["path"] if text == MOVES else None), want,
                     what + ": the event's rule and path")
            check_eq(read("/proc/%s/cgroup" % pid).strip(), "0::/bwesc-out",
                     what + ": where the process is")
        c = plain(["sh", "-c", 'exec "$0" pull "$1" "$2"', CGOP, out, pid])
        got_through(c, "pull, control")
    finally:
        if victim:
            victim.kill()
            victim.wait()
        remove_cgroups("bwesc-out", "bwesc-plain")


def test_leave_by_cgroup_threads():
    """A thread moves itself with cgroup.threads. The kernel moves threads only within
    one threaded domain, so the governed cgroup is a threaded one (bwesc-dom/gov,
    attached) and the way out its sibling bwesc-dom/out. The program starts in the
    domain, ungoverned, enters gov (allowed: it is not governed yet), then tries out."""
    dom = make_cgroup("bwesc-dom")
    gov, out = os.path.join(dom, "gov"), os.path.join(dom, "out")
    what = "write own TID to /bwesc-dom/out/cgroup.threads"
    cmd = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', dom,
           CGOP, "threads", gov, "threads", out]
    agent = None
    try:
        for d in (gov, out):
            os.makedirs(d, exist_ok=True)
            write(os.path.join(d, "cgroup.type"), "threaded\n")
        log = os.path.join(S, "threads.log")
        agent = subprocess.Popen([BW, "attach", "--cgroup", gov, "--profile",
                                  profile(ALLOW_ALL), "--log", log])
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        agent.send_signal(signal.SIGTERM)
        check_eq(agent.wait(timeout=30), 0, "attach exit status")
        r = Result(proc, log)
        refused_migration(r, "/bwesc-dom/out", what)
        check_eq(where(r), "/bwesc-dom/gov", what + ": where the thread stayed")
        c = Result(subprocess.run(cmd, capture_output=True, text=True, timeout=60),
                   os.path.join(S, "no-agent.log"))
        got_through(c, what)
        check_eq(where(c), "/bwesc-dom/out", what + ", control: where it went")
    finally:
        if agent and agent.poll() is None:
            agent.kill()
        remove_cgroups("bwesc-dom")


def test_audit_and_learn_modes_let_the_move_through():
    """Audit and learn modes block nothing the profile does not deny: the move out is let
    through, and nothing is learned from it. The open of the destination's cgroup.procs,
    which enforce mode would have refused, is audited."""
    sib = make_cgroup("bwesc-sib")
    try:
        for mode in ("audit", "learn"):
            what = "write own PID to /bwesc-sib/cgroup.procs in %s mode" % mode
            r = sandbox(profile(ALLOW_ALL), [CGOP, "procs", sib], mode=mode)
            got = [l for l in r.stdout.splitlines() if l.startswith(("OK", "ERR"))]
            check_eq(got, ["OK"], what)
            check_eq(where(r), "/bwesc-sib", what + ": where it went")
            check_eq([(e["type"], e["mode"], e["op"], e["path"], e["rule"])
                      for e in r.events if e["type"] != "agent"],
                     [("audit", mode, "cgroup_migrate", "/bwesc-sib", "builtin:cgroup-subtree")],
                     what + ": its events")
    finally:
        remove_cgroups("bwesc-sib")


def test_moves_inside_the_governed_subtree():
    """What a runtime inside the sandbox does: make cgroups below its own and move itself
    and children between them, by cgroup.procs and by clone3. With `allow cgroup` all of
    it is allowed; without it the first move is refused, and learn mode writes the rule."""
    script = (run_cgroup_dir() + 'mkdir "$R/a" "$R/b" && '
              'exec "$1" procs "$R/a" procs "$R/b" clone-into "$R/a"')
    cmd = ["sh", "-c", script, cgroup_root(), CGOP]
    r = sandbox(profile(MOVES), cmd)
    got = [l for l in r.stdout.splitlines() if l.startswith(("OK", "ERR"))]
    check_eq(len(got), 3, "three moves (stdout %r, stderr %s)" % (r.stdout, r.stderr.strip()))
    check(all(l.startswith("OK") for l in got) and not denials(r.events),
          "moves inside the subtree: %r, deny events %r" % (got, denials(r.events)))
    check(re.fullmatch(r"/bpfwarden/run-\d+/b", where(r)), "ended in b: " + where(r))
    check(re.search(r"OK child in /bpfwarden/run-\d+/a$", got[2]), "clone3 into a: " + got[2])

    r = sandbox(profile(ALLOW_ALL), cmd)
    got = [l for l in r.stdout.splitlines() if l.startswith(("OK", "ERR"))]
    check_eq(got, ["ERR EACCES"], "without `allow cgroup`: the first move")
    d = denials(r.events)
    check(len(d) == 1 and d[0]["op"] == "cgroup_migrate" and d[0]["rule"] == "default"
          and re.fullmatch(r"/bpfwarden/run-\d+/a", d[0]["path"]),
          "without `allow cgroup`: one deny event naming a, by the default: %r" % d)

    out = os.path.join(S, "moves-learned.profile")
    p = subprocess.run([BW, "run", "--profile", profile(ALLOW_ALL), "--mode", "learn",
                        "--output", out, "--log", os.path.join(S, "moves-learn.log"), "--"]
                       + cmd, capture_output=True, text=True, timeout=300)
    check_eq(p.returncode, 0, "learn run: " + p.stderr.strip())
    check("\nallow cgroup\n" in read(out), "learned profile: " + read(out))


def test_bw_cg_leave_attached_only_while_wanted():
    """The kernel's check of every move costs every path component of every process a
    BPF program: it is attached while a profile in force says `allow cgroup`, and only
    then."""
    gov = make_cgroup("bwesc-want")
    agent = None
    try:
        check(not os.path.exists(LEAVE_LINK), "bw_cg_leave attached before any profile wants it")
        for text, want in ((ALLOW_ALL, False), (MOVES, True)):
            log = os.path.join(S, "want.log")
            if os.path.exists(log):
                os.unlink(log)
            agent = subprocess.Popen([BW, "attach", "--cgroup", gov, "--profile", profile(text),
                                      "--log", log])
            wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
            check_eq(os.path.exists(LEAVE_LINK), want,
                     "bw_cg_leave attached while %r is in force" % text)
            agent.send_signal(signal.SIGTERM)
            check_eq(agent.wait(timeout=30), 0, "attach exit status")
            agent = None
            check(not os.path.exists(LEAVE_LINK), "bw_cg_leave still attached after detach")
    finally:
        if agent and agent.poll() is None:
            agent.kill()
        remove_cgroups("bwesc-want")


def status_made():
    """`bpfwarden status`: (cgroups made below governed ones, the host's limit, per slot)."""
    st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
    m = re.search(r"made below governed cgroups +(\d+) of at most (\d+) on this host, (\d+) per "
                  r"profile slot", st)
    check(m, "status does not say how full the governed-cgroup map is:\n" + st)
    return tuple(int(x) for x in m.groups())


def test_made_cgroups_stop_at_the_profile_limit():
    """A sandbox makes cgroups below its own until one more would pass its slot's limit
    (1024): that mkdir is refused with EAGAIN and an event, the cgroups made are all
    governed, and meanwhile another sandbox is governed and makes cgroups of its own."""
    write(S + "/secret", "s\n")
    made, go = S + "/made", S + "/go"
    script = ('d=$(sed -n "s/^0:://p" /proc/self/cgroup); "$1" mkdirs "$0$d" 1025; '
              'echo "in $d"; : > "$2"; while [ ! -e "$3" ]; do sleep 0.05; done')
    a_log = S + "/a.log"
    a = subprocess.Popen([BW, "run", "--profile", profile(ALLOW_ALL, name="a"), "--log", a_log,
                          "--", "sh", "-c", script, cgroup_root(), CGOP, made, go],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: os.path.exists(made), timeout=120, what="sandbox A's mkdirs")
        n, host_max, per_slot = status_made()
        check_eq(per_slot, 1024, "the limit per profile slot")
        check_eq(n, 1024, "made cgroups counted while A holds them")
        # Another sandbox is governed (its forbidden read is refused) and makes its own.
        b = sandbox(profile("default allow\ndeny file r %s/secret\n" % S, name="b"),
                    ["sh", "-c", 'd=$(sed -n "s/^0:://p" /proc/self/cgroup); "$1" read "$2"; '
                     '"$3" mkdirs "$0$d" 3', cgroup_root(), FSOP, S + "/secret", CGOP])
        check_eq([l for l in b.stdout.splitlines() if l.startswith(("OK", "ERR"))],
                 ["ERR EACCES", "OK 3"], "sandbox B, governed beside a full sandbox A")
        write(go, "")
        out, err = a.communicate(timeout=120)
    finally:
        if a.poll() is None:
            write(go, "")
            a.kill()
    r = Result(subprocess.CompletedProcess(a.args, a.returncode, out, err), a_log)
    rel = re.search(r"^in (\S+)$", out, re.M)
    check(rel, "sandbox A did not say its cgroup: %r %s" % (out, err))
    check("made 1024" in out, "A made 1024 cgroups first: " + out)
    e = refused(r, "EAGAIN", rel.group(1) + "/c1024", "the 1025th cgroup of a sandbox")
    check_eq((e["op"], e["rule"]), ("cgroup_mkdir", "limit:cgroups-per-profile"), "the event")
    check_eq(status_made()[0], 0, "made cgroups counted after both sandboxes ended")
    check(not os.path.exists(cgroup_root() + rel.group(1)), "run removed A's cgroups")
    try:
        c = plain([CGOP, "mkdirs", cgdir("bwesc-plain"), "1025"])
        got_through(c, "1025 cgroups below a cgroup nothing governs")
    finally:
        subprocess.run([CGOP, "rmdirs", cgdir("bwesc-plain"), "1025"], capture_output=True)
        remove_cgroups("bwesc-plain")


HOST_LIMIT = 2048


def set_limits(per_slot, made):
    """bw_cg_limits (0: the defaults), as an operator would lower them."""
    value = struct.pack("<II", per_slot, made)
    r = subprocess.run(["bpftool", "map", "update", "pinned", "/sys/fs/bpf/bpfwarden/bw_cg_limits",
                        "key", "hex", "00", "00", "00", "00", "value", "hex"] +
                       ["%02x" % b for b in value], capture_output=True, text=True)
    check_eq(r.returncode, 0, "bpftool map update bw_cg_limits: " + r.stderr)


def test_made_cgroups_stop_at_the_host_limit():
    """Cgroups made below governed ones fill their part of the map (8192 on the host,
    lowered here to 2048 in bw_cg_limits, to save time): the next mkdir is refused, by
    anyone (an ungoverned process: ENOMEM at the kernel's check; a governed one: EAGAIN,
    in audit mode too), with an event, and a new sandbox is still governed: the agents'
    part of the map is not theirs to take."""
    write(S + "/secret", "s\n")
    host = make_cgroup("bwesc-host")
    log = S + "/host.log"
    agent = subprocess.Popen([BW, "attach", "--cgroup", host, "--profile",
                              profile(ALLOW_ALL, name="host"), "--log", log])
    try:
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
        check_eq(status_made()[:2], (0, 8192), "made cgroups and the host's limit before")
        set_limits(0, HOST_LIMIT)
        n0, host_max, per_slot = status_made()
        check_eq((n0, host_max, per_slot), (0, HOST_LIMIT, 1024), "the limits lowered")
        fill = subprocess.run([CGOP, "mkdirs", host, str(host_max + 1)], capture_output=True,
                              text=True, timeout=600)
        check("made %d" % host_max in fill.stdout and "ERR ENOMEM" in fill.stdout,
              "an ungoverned process fills the made part: %r %s" % (fill.stdout, fill.stderr))
        check_eq(status_made()[0], host_max, "status: the made part is full")
        # In audit mode, which refuses nothing else: its read is audited, not refused.
        b = sandbox(profile("default allow\ndeny file r %s/secret\n" % S, name="b"),
                    ["sh", "-c", 'd=$(sed -n "s/^0:://p" /proc/self/cgroup); "$1" read "$2"; '
                     'echo "in $d"; exec "$3" mkdirs "$0$d" 1', cgroup_root(), FSOP,
                     S + "/secret", CGOP], mode="audit")
        rel = re.search(r"^in (\S+)$", b.stdout, re.M)
        check(rel, "sandbox B did not say its cgroup: %r %s" % (b.stdout, b.stderr))
        check([(x["op"], x["path"]) for x in b.events if x["type"] == "audit"] ==
              [("open", S + "/secret")], "sandbox B is governed: %r" % b.events)
        e = [x for x in denials(b.events) if x["op"] == "cgroup_mkdir"]
        check(b.stdout.splitlines()[-2] == "ERR EAGAIN" and len(e) == 1 and
              e[0]["path"] == rel.group(1) + "/c0" and e[0]["rule"] == "limit:cgroups-made" and
              e[0]["mode"] == "audit",
              "sandbox B's mkdir against the full host: %r, events %r" % (b.stdout, e))
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=60)
        e = [x for x in denials(events(log)) if x["op"] == "cgroup_mkdir"]
        check(len(e) == 1 and e[0]["path"] == "/bwesc-host/c%d" % host_max and
              e[0]["rule"] == "limit:cgroups-made" and e[0]["cgroup"]["path"] == "/bwesc-host",
              "the refusal of the ungoverned process's mkdir, told to the parent's slot: %r" % e)
    finally:
        set_limits(0, 0)
        if agent.poll() is None:
            agent.kill()
        subprocess.run([CGOP, "rmdirs", host, str(HOST_LIMIT + 1)], capture_output=True)
        remove_cgroups("bwesc-host")
    check_eq(status_made()[:2], (0, 8192), "made cgroups after removal, and the limit restored")


def test_racing_mkdirs_never_pass_the_limit():
    """Eight processes of one sandbox make cgroups at once while its limit runs out: the
    check in path_mkdir is passed by some that the check under cgroup_mutex then refuses
    (ENOMEM). However they interleave, exactly the limit is made, and every refusal has
    its event."""
    script = ('d=$(sed -n "s/^0:://p" /proc/self/cgroup); R="$0$d"; '
              'for i in 0 1 2 3 4 5 6 7; do mkdir "$R/p$i" || exit 1; done; '
              'for i in 0 1 2 3 4 5 6 7; do "$1" mkdirs "$R/p$i" 200 > "$2.$i" & done; wait; '
              'cat "$2".*')
    r = sandbox(profile(ALLOW_ALL), ["sh", "-c", script, cgroup_root(), CGOP, S + "/out"])
    made = sum(int(m) for m in re.findall(r"^made (\d+)$", r.stdout, re.M))
    made += 200 * len(re.findall(r"^OK 200$", r.stdout, re.M))
    refusals = re.findall(r"^ERR (\S+)$", r.stdout, re.M)
    check_eq(made + 8, 1024, "cgroups made by the sandbox (stdout %r, stderr %s)"
             % (r.stdout, r.stderr.strip()))
    check(refusals and set(refusals) <= {"EAGAIN", "ENOMEM"}, "refusals: %r" % refusals)
    ev = [e for e in denials(r.events) if e["op"] == "cgroup_mkdir"]
    check_eq(len(ev), len(refusals), "one event per refused mkdir: %r" % ev)
    check(all(e["rule"] == "limit:cgroups-per-profile" for e in ev), "the limit named: %r" % ev)
    check_eq(status_made()[0], 0, "made cgroups counted after the sandbox ended")


TESTS = [
    test_leave_by_writing_cgroup_procs,
    test_leave_by_clone_into_cgroup,
    test_leave_through_a_descriptor_opened_outside,
    test_cgroup_procs_over_scm_rights,
    test_attach_refuses_a_subtree_holding_a_descriptor,
    test_pull_an_outside_process_in,
    test_leave_by_cgroup_threads,
    test_audit_and_learn_modes_let_the_move_through,
    test_moves_inside_the_governed_subtree,
    test_bw_cg_leave_attached_only_while_wanted,
    test_made_cgroups_stop_at_the_profile_limit,
    test_made_cgroups_stop_at_the_host_limit,
    test_racing_mkdirs_never_pass_the_limit,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
