#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Learn mode round trip: learn a workload, enforce the generated profile,
run the same workload again unchanged (no denial), then a variant that opens
a new file, reaches a new address and runs a new program is refused exactly
on those three, with events."""
import os
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwtest import BW, SCRATCH, check, check_eq, denials, main, run, write

S = SCRATCH
HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "learn_workload.py")
PY = "/usr/bin/python3"
PORT, PORT2 = 19280, 19281


def serve(ports):
    socks = []
    for p in ports:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", p))
        s.listen(16)
        socks.append(s)

        def loop(s=s):
            while True:
                try:
                    c, _ = s.accept()
                    c.close()
                except OSError:
                    return
        threading.Thread(target=loop, daemon=True).start()
    return socks


def test_learn_enforce_round_trip():
    for i in range(3):
        write("%s/in/%d.json" % (S, i), '{"n": %d}\n' % i)
    write(S + "/other/new.txt", "new\n")
    os.makedirs(S + "/work")
    socks = serve([PORT, PORT2])
    try:
        out = S + "/learned.profile"
        cmd = [PY, WORKLOAD, S, str(PORT), str(PORT2)]
        log = S + "/learn.log"
        r = subprocess.run([BW, "run", "--mode", "learn", "--output", out, "--log", log, "--"]
                           + cmd, capture_output=True, text=True)
        check_eq(r.returncode, 0, "learning run (stderr %s)" % r.stderr)
        check(os.path.exists(out), "profile written")
        text = open(out).read()
        c = subprocess.run([BW, "check", out], capture_output=True, text=True)
        check_eq(c.returncode, 0, "bpfwarden check of the learned profile: %s\n%s"
                 % (c.stderr, text))
        check("/**" not in [l.split()[-1] for l in text.splitlines() if l.startswith("allow")],
              "no rule for the whole tree")
        for needle in ("allow exec /usr/bin/true", "allow net connect tcp 127.0.0.1:%d" % PORT,
                       S + "/work/out.txt"):
            check(needle in text, "learned %r:\n%s" % (needle, text))
        # The same workload, enforced by what was learned: no denial.
        r = run(out, cmd)
        check_eq(r.rc, 0, "enforced rerun (stdout %s, stderr %s)" % (r.stdout, r.stderr))
        check_eq(denials(r.events), [], "denials on the unchanged workload")
        # The variant: refused on exactly the three new things.
        r = run(out, cmd + ["--variant"])
        check_eq(r.rc, 1, "variant exit status")
        failed = [l.split()[0] for l in r.stdout.splitlines() if "FAILED" in l]
        check_eq(failed, ["new-file", "new-port", "new-program"], "refused steps")
        # A new program is refused when the kernel opens it to run it (file r)
        # or, were it readable, by the exec rules: either event names it.
        d = denials(r.events)
        what = sorted(e.get("path") or "%s:%d" % (e.get("addr"), e.get("port", 0)) for e in d)
        check_eq(what, sorted([S + "/other/new.txt", "127.0.0.1:%d" % PORT2, "/usr/bin/id"]),
                 "deny events")
        check(all(e["op"] in ("open", "connect", "exec") for e in d), "ops: %r" % d)
    finally:
        for s in socks:
            s.shutdown(socket.SHUT_RDWR)
            s.close()


def test_learn_an_existing_cgroup():
    """Twice on the same cgroup: a second session learns afresh, it does not
    inherit what the kernel remembered for the first."""
    from bwtest import FSOP, cgroup_root, read, wait_for
    import signal
    write(S + "/data/x.txt", "x\n")
    root = cgroup_root()
    cg = os.path.join(root, "bwtest-learn-cg")
    os.makedirs(cg, exist_ok=True)
    try:
        for session in (1, 2):
            out, log = S + "/cg%d.profile" % session, S + "/cg%d.log" % session
            agent = subprocess.Popen([BW, "learn", "--cgroup", cg, "--duration", "120",
                                      "--output", out, "--log", log], stderr=subprocess.PIPE,
                                     text=True)
            try:
                wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="learn")
                cmd = "echo $$ > %s/cgroup.procs && exec %s read %s/data/x.txt" % (cg, FSOP, S)
                got = subprocess.run(["sh", "-c", cmd], capture_output=True,
                                     text=True).stdout.strip()
                check_eq(got, "OK", "learn mode does not block")
                agent.send_signal(signal.SIGINT)
                _, err = agent.communicate(timeout=60)
            finally:
                if agent.poll() is None:
                    agent.kill()
            check_eq(agent.returncode, 0, "learn exit status (%s)" % err)
            text = open(out).read()
            check("allow file r %s/data/x.txt" % S in text,
                  "session %d learned the read:\n%s" % (session, text))
            check("allow exec %s" % FSOP in text, "learned the program:\n" + text)
            c = subprocess.run([BW, "check", out], capture_output=True, text=True)
            check_eq(c.returncode, 0, "check: " + c.stderr)
    finally:
        subprocess.run(["sh", "-c", "cat %s/cgroup.procs | while read p; do echo $p > "
                        "%s/cgroup.procs; done; rmdir %s" % (cg, root, cg)])


def test_learn_all_cgroups_of_the_host():
    from bwtest import FSOP, cgroup_root, read, wait_for
    write(S + "/d/y.txt", "y\n")
    root = cgroup_root()
    cg = os.path.join(root, "bwtest-all")
    os.makedirs(cg, exist_ok=True)
    outdir, log = S + "/all", S + "/all.log"
    agent = subprocess.Popen([BW, "learn", "--all", "--duration", "120", "--output", outdir,
                              "--log", log], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        wait_for(lambda: os.path.exists(log) and "learning on" in read(log), what="learn --all")
        cmd = "echo $$ > %s/cgroup.procs && exec %s read %s/d/y.txt" % (cg, FSOP, S)
        got = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True).stdout.strip()
        check_eq(got, "OK", "nothing blocked")
        os.makedirs(cg + "/later")  # created while learning: governed through its parent
        cmd = "echo $$ > %s/later/cgroup.procs && exec %s read %s/d/y.txt" % (cg, FSOP, S)
        subprocess.run(["sh", "-c", cmd], capture_output=True, text=True)
        agent.send_signal(2)
        out, err = agent.communicate(timeout=60)
        check_eq(agent.returncode, 0, "exit status (%s)" % err)
        for name in ("bwtest-all", "bwtest-all-later"):
            text = open("%s/%s.profile" % (outdir, name)).read()
            check("allow file r %s/d/y.txt" % S in text, "%s learned:\n%s" % (name, text))
        check("/bwtest-all/later" in out, "summary lists the new cgroup:\n" + out)
        check("denials" in out.splitlines()[0], "summary header:\n" + out)
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        check("governed cgroups:\n  none" in st, "everything let go:\n" + st)
    finally:
        if agent.poll() is None:
            agent.kill()
        for d in (cg + "/later", cg):
            subprocess.run(["sh", "-c", "cat %s/cgroup.procs | while read p; do echo $p > "
                            "%s/cgroup.procs; done; rmdir %s" % (d, root, d)])


def test_shell_workload_folds_into_the_shell_abstraction():
    out = S + "/sh.profile"
    r = subprocess.run([BW, "run", "--mode", "learn", "--output", out, "--log", "/dev/null",
                        "--", "/bin/sh", "-c", "cat /etc/hostname >/dev/null; true"],
                       capture_output=True, text=True)
    check_eq(r.returncode, 0, "learning run (%s)" % r.stderr)
    text = open(out).read()
    check('include "abstractions/shell"' in text, "a shell workload folds:\n" + text)
    check("allow exec /usr/bin/cat" not in text, "cat comes from the abstraction:\n" + text)
    # and enforcing it runs the same workload
    r = run(out, ["/bin/sh", "-c", "cat /etc/hostname >/dev/null; true"])
    check_eq((r.rc, denials(r.events)), (0, []), "enforced rerun (%s)" % r.stderr)


TESTS = [test_learn_enforce_round_trip, test_learn_an_existing_cgroup,
         test_learn_all_cgroups_of_the_host, test_shell_workload_folds_into_the_shell_abstraction]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
