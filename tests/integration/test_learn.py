#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Learn mode round trip: learn a workload, enforce the generated profile,
run the same workload again unchanged (no denial), then a variant that opens
a new file, reaches a new address and runs a new program is refused exactly
on those three, with events. Generalisation both ways round: a job that
names its files after the run (PID, time, mkstemp, hex) runs again and
again under what was learned, while a directory of keys read eight files at
a time never gives the profile a file that was not read."""
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
PERRUN = os.path.join(HERE, "perrun_workload.py")
READER = os.path.join(HERE, "read_driver.py")
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


def test_learned_once_per_cgroup_with_the_decision_cache():
    """Learn records are per cgroup: an access learned (and kept by the
    decision cache) in one cgroup is learned again, once, in a child cgroup
    of the same session; repeats in either make no more records."""
    from bwtest import FSOP, cgroup_root, events, read, wait_for
    import signal
    write(S + "/data/x.txt", "x\n")
    root = cgroup_root()
    cg = os.path.join(root, "bwtest-learn-kept")
    os.makedirs(cg, exist_ok=True)
    out, log = S + "/kept.profile", S + "/kept.log"
    agent = subprocess.Popen([BW, "learn", "--cgroup", cg, "--duration", "120", "--output", out,
                              "--log", log], stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="learn")
        reads = "; ".join(["%s read %s/data/x.txt" % (FSOP, S)] * 5)
        for where in (cg, cg + "/child"):
            os.makedirs(where, exist_ok=True)
            got = subprocess.run(["sh", "-c", "echo $$ > %s/cgroup.procs && %s" % (where, reads)],
                                 capture_output=True, text=True).stdout.split()
            check_eq(got, ["OK"] * 5, "learn mode does not block (in %s)" % where)
        agent.send_signal(signal.SIGINT)
        _, err = agent.communicate(timeout=60)
    finally:
        if agent.poll() is None:
            agent.kill()
        subprocess.run(["sh", "-c", "for c in %s/child %s; do cat $c/cgroup.procs | while read p; "
                        "do echo $p > %s/cgroup.procs; done; rmdir $c; done" % (cg, cg, root)])
    check_eq(agent.returncode, 0, "learn exit status (%s)" % err)
    learned = [e for e in events(log) if e["type"] == "learn" and e.get("path") == S + "/data/x.txt"]
    check_eq(sorted(e["cgroup"]["path"] for e in learned),
             sorted(p[len(root):] for p in (cg, cg + "/child")),
             "one learn record of the read per cgroup: %r" % learned)


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


def learn(out, cmd):
    """bpfwarden run --mode learn --output OUT -- CMD; the run, and the profile `check` accepts."""
    r = subprocess.run([BW, "run", "--mode", "learn", "--output", out, "--log", out + ".log",
                        "--"] + cmd, capture_output=True, text=True)
    check_eq(r.returncode, 0, "learning run (stdout %s, stderr %s)" % (r.stdout, r.stderr))
    text = open(out).read()
    c = subprocess.run([BW, "check", out], capture_output=True, text=True)
    check_eq(c.returncode, 0, "bpfwarden check of the learned profile: %s\n%s" % (c.stderr, text))
    return r, text


def rules(text):
    return [l for l in text.splitlines() if l.startswith("allow ")]


def made(stdout):
    return set(l.split()[1] for l in stdout.splitlines() if l.startswith("made "))


def failed(stdout):
    return dict((l.split()[0], " ".join(l.split()[1:])) for l in stdout.splitlines()
                if " FAILED" in l)


def objects(evs, kind):
    """The objects of the events of one type; each once for audit (a program
    allowed to run is opened, then executed: two events)."""
    got = [e.get("path") or "%s:%d" % (e.get("addr"), e.get("port", 0))
           for e in evs if e["type"] == kind]
    return sorted(set(got) if kind == "audit" else got)


def learn_reads(out, paths, extra=(), want_rc=0):
    """Learn fsop reading each path; returns what each read gave and the profile's text.
    fsop's status is its last operation's errno."""
    from bwtest import FSOP
    r = subprocess.run([BW, "run", "--mode", "learn", "--output", out, "--log", out + ".log"]
                       + list(extra) + ["--", FSOP, "-"],
                       input="".join("read %s\n" % p for p in paths), capture_output=True,
                       text=True, timeout=120)
    check_eq(r.returncode, want_rc, "learning run (stdout %s, stderr %s)" % (r.stdout, r.stderr))
    return r.stdout.splitlines(), open(out).read()


def test_merge_two_halves_of_a_workload():
    """Two learn runs, each reading half of a site's pages (5, under the fan-out
    threshold of 8): `profile merge` generalises over both, so the whole workload and
    a page added later run with no denial, while a file elsewhere is still refused."""
    from bwtest import fsops
    site = S + "/site"
    pages = ["%s/page%d.html" % (site, i) for i in range(10)]
    for p in pages + [site + "/later.html", S + "/elsewhere.txt"]:
        write(p, "x\n")
    halves = (S + "/half-a.profile", S + "/half-b.profile")
    for out, part in zip(halves, (pages[:5], pages[5:])):
        _, text = learn_reads(out, part)
        check(site + "/**" not in text, "one half alone generalised:\n" + text)
    merged = S + "/site.profile"
    m = subprocess.run([BW, "profile", "merge", halves[0], halves[1], "-o", merged],
                       capture_output=True, text=True)
    check_eq(m.returncode, 0, "profile merge: " + m.stderr)
    check("rules allow more than was seen" in m.stderr
          and "\n  allow file r %s/**\n    generalised from 10 learned files" % site in m.stderr,
          "the widening listed for review: " + m.stderr)
    text = open(merged).read()
    check("allow file r %s/**" % site in rules(text), "merged:\n" + text)
    c = subprocess.run([BW, "check", merged], capture_output=True, text=True)
    check_eq(c.returncode, 0, "check of the merged profile: " + c.stderr)
    cases = [("read", p) for p in pages + [site + "/later.html", S + "/elsewhere.txt"]]
    r, got = fsops(merged, cases)
    check_eq(got, ["OK"] * 11 + ["ERR EACCES"], "reads under the merged profile")
    check_eq([e.get("path") for e in denials(r.events)], [S + "/elsewhere.txt"], "denials")


def test_learning_starts_from_the_operators_profile():
    """`run --mode learn --profile START`: START's name, deny rule and allow rule are
    kept as written, its deny still blocks while learning, and only what was used
    beyond START is added; enforced, the result reads what was used and nothing else."""
    from bwtest import fsops
    d = S + "/start"
    for n in ("a.txt", "b.txt", "secret.txt", "other.txt"):
        write("%s/%s" % (d, n), n + "\n")
    start = S + "/start.profile"
    write(start, "profile web-start\ndefault deny\nallow file r %s/a.txt\n"
          "deny file r %s/secret.txt as no-secrets\n" % (d, d))
    out = S + "/started.profile"
    got, text = learn_reads(out, ["%s/%s" % (d, n) for n in ("a.txt", "b.txt", "secret.txt")],
                            extra=["--profile", start], want_rc=13)
    check_eq(got, ["OK", "OK", "ERR EACCES"], "learning: START's deny still blocks")
    lines = text.splitlines()
    check("profile web-start" in lines, "START's name kept:\n" + text)
    check_eq(lines.count("allow file r %s/a.txt" % d), 1, "START's rule once:\n" + text)
    check("deny file r %s/secret.txt as no-secrets" % d in lines, "START's deny:\n" + text)
    check("allow file r %s/b.txt" % d in lines, "what was used beyond START:\n" + text)
    check(not [l for l in rules(text) if "secret.txt" in l], "the denied file allowed")
    c = subprocess.run([BW, "check", out], capture_output=True, text=True)
    check_eq(c.returncode, 0, "check of the learned profile: " + c.stderr)
    r, got = fsops(out, [("read", "%s/%s" % (d, n))
                         for n in ("a.txt", "b.txt", "secret.txt", "other.txt")])
    check_eq(got, ["OK", "OK", "ERR EACCES", "ERR EACCES"], "enforced")
    check_eq(sorted(e.get("rule_name", "") for e in denials(r.events)), ["", "no-secrets"],
             "the deny names START's rule")


def test_per_run_names_run_again():
    """Python: learned once, the job runs twice more under the profile with new
    PIDs and new temporary names; a variant reaching anything new is refused."""
    job, inputs = S + "/job", S + "/in"
    for i in range(3):
        write("%s/%d.json" % (inputs, i), "{}\n")
    write(S + "/other/new.txt", "new\n")
    os.makedirs(job)
    socks = serve([PORT, PORT2])
    try:
        cmd = [PY, PERRUN, job, inputs, str(PORT)]
        out = S + "/perrun.profile"
        r, text = learn(out, cmd)
        seen = made(r.stdout)
        check_eq(len(seen), 6, "per-run names made while learning (%s)" % r.stdout)
        check("allow file rw %s/**" % job in rules(text), "the job directory:\n" + text)
        for n in seen:
            check(not any(n in l for l in rules(text)), "a rule names %s:\n%s" % (n, text))
        for i in (1, 2):
            r = run(out, cmd)
            check_eq((r.rc, denials(r.events)), (0, []),
                     "enforced run %d (stdout %s, stderr %s)" % (i, r.stdout, r.stderr))
            now = made(r.stdout)
            check(len(now) == 6 and not now & seen, "run %d made new names: %r (before: %r)"
                  % (i, sorted(now), sorted(seen)))
            seen |= now
        # One new thing each: a file read and one written outside the job
        # directory, another port, another program.
        variant = cmd + ["--read", S + "/other/new.txt", "--write", S + "/other/out.txt",
                         "--port", str(PORT2), "--program", "/usr/bin/id"]
        new = sorted([S + "/other/new.txt", S + "/other/out.txt", "127.0.0.1:%d" % PORT2,
                      "/usr/bin/id"])
        r = run(out, variant)
        check_eq(r.rc, 1, "variant exit status (%s)" % r.stdout)
        check_eq(failed(r.stdout), {"new-read": "FAILED EACCES", "new-write": "FAILED EACCES",
                                    "new-port": "FAILED EPERM", "new-program": "FAILED EACCES"},
                 "refused steps")
        check_eq(objects(r.events, "deny"), new, "deny events")
        check(not os.path.exists(S + "/other/out.txt"), "nothing written outside")
        # Control: the same variant in audit mode does all four (the routes
        # are real), and the profile would have refused those four; the rest
        # is what the new program did once it ran.
        r = run(out, variant, mode="audit")
        check_eq((r.rc, failed(r.stdout)), (0, {}), "audit control (%s)" % r.stdout)
        check(os.path.exists(S + "/other/out.txt"), "the control wrote outside")
        a = [e for e in r.events if e["type"] == "audit"]
        check(set(new) <= set(objects(a, "audit")), "audit events of the control: %r" % a)
        # comm, recorded by the kernel: exe is read from /proc afterwards, and
        # a program as short-lived as id is often gone by then.
        check(all(e["proc"]["comm"] == "id" for e in a
                  if (e.get("path") or "%s:%d" % (e.get("addr"), e.get("port", 0))) not in new),
              "audit events beyond the four come from the new program: %r" % a)
    finally:
        for s in socks:
            s.shutdown(socket.SHUT_RDWR)
            s.close()


# A shell job: its PID, the time, mktemp, a hex name; then what it is told to
# write or run (the variant).
SH_JOB = r"""set -e
J=$1; shift
echo $$ > "$J/out-$$.txt"; cat "$J/out-$$.txt" > /dev/null; echo "made out-$$.txt"
d=$(date +%s%N); echo t > "$J/log-$d.txt"; echo "made log-$d.txt"
t=$(mktemp -p "$J"); echo y > "$t"; cat "$t" > /dev/null; rm "$t"; echo "made ${t##*/}"
h=$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo z > "$J/blob-$h.bin"; echo "made blob-$h.bin"
for a in "$@"; do
	case $a in
	/usr/bin/*) "$a" > /dev/null ;;
	*) echo new > "$a" ;;
	esac
done
"""


def test_per_run_names_run_again_shell():
    job = S + "/shjob"
    os.makedirs(job)
    os.makedirs(S + "/other")
    cmd = ["/bin/sh", "-c", SH_JOB, "sh", job]
    out = S + "/sh-perrun.profile"
    r, text = learn(out, cmd)
    seen = made(r.stdout)
    check_eq(len(seen), 4, "names made while learning (%s)" % r.stdout)
    check("allow file rw %s/**" % job in rules(text), "the job directory:\n" + text)
    for i in (1, 2):
        r = run(out, cmd)
        check_eq((r.rc, denials(r.events)), (0, []),
                 "enforced run %d (stdout %s, stderr %s)" % (i, r.stdout, r.stderr))
        now = made(r.stdout)
        check(len(now) == 4 and not now & seen, "run %d: new names %r" % (i, sorted(now)))
        seen |= now
    # Variants, each with its control in audit mode: a file written outside
    # the job directory, a program the shell abstraction does not give.
    for target, status, path in ((S + "/other/sh-out.txt", 2, S + "/other/sh-out.txt"),
                                 ("/usr/bin/whoami", 126, "/usr/bin/whoami")):
        r = run(out, cmd + [target])
        check_eq(r.rc, status, "variant %s: exit status (stderr %s)" % (target, r.stderr))
        check("Permission denied" in r.stderr, "variant %s: %s" % (target, r.stderr))
        check_eq(objects(r.events, "deny"), [path], "variant %s: deny events" % target)
        r = run(out, cmd + [target], mode="audit")
        check_eq(r.rc, 0, "control %s (stderr %s)" % (target, r.stderr))
        check_eq(objects(r.events, "audit"), [path], "control %s: audit events" % target)
    check(os.path.exists(S + "/other/sh-out.txt"), "the control wrote outside")


def make_dir(path, mode, files):
    """files: {name: mode}; the directory's mode is set last."""
    os.makedirs(path, exist_ok=True)
    for name, m in files.items():
        write(os.path.join(path, name), "key material %s\n" % name)
        os.chmod(os.path.join(path, name), m)
    os.chmod(path, mode)


def test_keys_never_generalised():
    """Eight files read in each of four directories of secrets, recognised by
    a name (.ssh), key-like file names (*.pem), a private directory and
    private files (modes on disk). None becomes DIR/**: enforced, the files
    read still pass and every unread one is refused. The ordinary directory
    read the same way is generalised: that is what would have happened."""
    os.makedirs(S + "/home", mode=0o755)
    os.makedirs(S + "/srv", mode=0o755)
    ssh, vault, shared = S + "/home/.ssh", S + "/srv/vault", S + "/srv/shared"
    certs, data = S + "/srv/certs", S + "/srv/data"
    make_dir(ssh, 0o700, {"authorized_keys": 0o644, "config": 0o644, "known_hosts": 0o644,
                          "id_rsa": 0o600, "id_rsa.pub": 0o644, "id_ed25519": 0o600,
                          "id_ed25519.pub": 0o644, "id_ecdsa.pub": 0o644,
                          "id_ecdsa": 0o600, "deploy_key": 0o600, "deploy_key.pub": 0o644,
                          "backup_key": 0o600})
    make_dir(vault, 0o700, dict(("k%02d.dat" % i, 0o600) for i in range(1, 11)))
    make_dir(shared, 0o755, dict([("d%02d.dat" % i, 0o644) for i in range(1, 9)]
                                 + [("s09.dat", 0o600), ("s10.dat", 0o600)]))
    make_dir(certs, 0o755, dict(("c%02d.pem" % i, 0o644) for i in range(1, 11)))
    make_dir(data, 0o755, dict(("f%02d.txt" % i, 0o644) for i in range(1, 11)))
    read = ([ssh + "/" + n for n in ("authorized_keys", "config", "known_hosts", "id_rsa",
                                     "id_rsa.pub", "id_ed25519", "id_ed25519.pub",
                                     "id_ecdsa.pub")]
            + ["%s/k%02d.dat" % (vault, i) for i in range(1, 9)]
            + ["%s/d%02d.dat" % (shared, i) for i in range(1, 9)]
            + ["%s/c%02d.pem" % (certs, i) for i in range(1, 9)]
            + ["%s/f%02d.txt" % (data, i) for i in range(1, 9)])
    unread = sorted([ssh + "/id_ecdsa", ssh + "/deploy_key", ssh + "/deploy_key.pub",
                     ssh + "/backup_key", vault + "/k09.dat", vault + "/k10.dat",
                     shared + "/s09.dat", shared + "/s10.dat", certs + "/c09.pem",
                     certs + "/c10.pem"])
    out = S + "/keys.profile"
    r, text = learn(out, [PY, READER] + read)
    check_eq(r.stdout.split(), ["OK"] * len(read), "learning reads")
    for d in (ssh, vault, shared, certs):
        check(not any(l.endswith(" %s/**" % d) or l.endswith(" %s/**" % os.path.dirname(d))
                      for l in rules(text)), "a subtree over %s:\n%s" % (d, text))
        check("not generalised: %s is a directory of secrets" % d in text,
              "the reviewer is told about %s:\n%s" % (d, text))
    check("allow file r %s/**" % data in rules(text), "the ordinary directory:\n" + text)
    # Enforced: what was read passes, every unread key is refused with its event.
    r = run(out, [PY, READER] + read)
    check_eq((r.stdout.split(), denials(r.events)), (["OK"] * len(read), []), "the same reads")
    r = run(out, [PY, READER] + unread + [data + "/f09.txt", data + "/f10.txt"])
    got = r.stdout.splitlines()
    check_eq(got, ["ERR EACCES"] * len(unread) + ["OK", "OK"],
             "unread keys refused, the ordinary directory's new files not")
    check_eq(objects(r.events, "deny"), unread, "deny events")
    check(all(e["op"] == "open" for e in denials(r.events)), "ops: %r" % denials(r.events))
    # Control: in audit mode every unread key is opened (the route is real),
    # and each is one the profile refuses.
    r = run(out, [PY, READER] + unread, mode="audit")
    check_eq(r.stdout.split(), ["OK"] * len(unread), "audit control")
    check_eq(objects(r.events, "audit"), unread, "audit events of the control")


TESTS = [test_learn_enforce_round_trip, test_learn_an_existing_cgroup,
         test_learned_once_per_cgroup_with_the_decision_cache,
         test_learn_all_cgroups_of_the_host, test_shell_workload_folds_into_the_shell_abstraction,
         test_per_run_names_run_again, test_per_run_names_run_again_shell,
         test_keys_never_generalised, test_merge_two_halves_of_a_workload,
         test_learning_starts_from_the_operators_profile]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
