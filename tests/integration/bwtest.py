# SPDX-License-Identifier: GPL-2.0-only
"""A small harness for integration tests that run as root inside the VM.

Tests are plain functions named test_*; each gets a fresh scratch directory
under /tmp/bwit. A test passes only by reaching its end: every check raises
on a mismatch. A test that cannot run on this kernel calls skip(reason): it
is reported as skipped with the reason, never counted as passed. The runner
prints one line per test and a final "N passed, N failed, N skipped" line,
and exits non-zero when any test failed or when the environment cannot run
them.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BW_BUILD", os.path.join(REPO, "build"))
# `bpfwarden selftest` names itself: an installed agent, helpers from the installed corpus.
BW = os.environ.get("BW_AGENT", os.path.join(BUILD, "bpfwarden"))
FSOP = os.path.join(BUILD, "tests", "fsop")
SCRATCH = "/tmp/bwit"

# What every sandboxed C program or shell needs to start (and be started)
# under `default deny`: its libraries are mapped (`exec lib`), the loader
# among them.
LIB_RULES = """
allow exec lib /usr/lib/**
allow exec lib /lib/**
allow exec lib /lib64/**
"""
RUNTIME_RULES = """
allow file r /usr/**
allow file r /lib/**
allow file r /lib64/**
allow file r /etc/ld.so.cache
allow file r {build}/**
allow file rw /dev/null
allow exec /usr/bin/**
allow exec {build}/**
""".format(build=BUILD) + LIB_RULES


class Failure(Exception):
    pass


class Skipped(Exception):
    pass


def skip(reason):
    """This test cannot run here: say why, and do not count it as passed."""
    raise Skipped(reason)


def lsm_active():
    """Can this kernel run BPF LSM programs (listed, and a trial attach works)?"""
    try:
        with open("/sys/kernel/security/lsm") as f:
            listed = "bpf" in f.read().strip().split(",")
    except OSError:
        listed = False
    st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
    return listed and "BPF LSM program attaches       yes" in st


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def check_eq(got, want, what):
    if got != want:
        raise Failure("%s: got %r, want %r" % (what, got, want))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def profile(text, name="t"):
    """Write a profile file and return its path."""
    fd, path = tempfile.mkstemp(prefix="bw-", suffix=".profile", dir=SCRATCH)
    with os.fdopen(fd, "w") as f:
        f.write("profile %s\n" % name)
        f.write(text)
    return path


# In a checkout every record is checked against the published schema; an
# installed selftest corpus (no docs/) checks what it can without it.
SCHEMA_FILE = os.path.join(REPO, "docs", "events.schema.json")
SCHEMA = None
if os.path.exists(SCHEMA_FILE):
    try:
        import jsonschema
        with open(SCHEMA_FILE, encoding="utf-8") as _f:
            SCHEMA = jsonschema.Draft202012Validator(json.load(_f))
    except ImportError:
        pass


def strict_strings(v, where):
    """Every string of a parsed record is text a strict parser keeps: no lone
    surrogate (json.loads lets "\\udcff" through, serde_json does not)."""
    if isinstance(v, dict):
        for k, x in v.items():
            strict_strings(k, where)
            strict_strings(x, where)
    elif isinstance(v, list):
        for x in v:
            strict_strings(x, where)
    elif isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise Failure("%s: a string that is not UTF-8: %r" % (where, v))


def events(log):
    """The records of a JSON Lines log; every line must parse, strictly."""
    out = []
    if not os.path.exists(log):
        return out
    with open(log, encoding="utf-8", errors="strict") as f:
        for n, line in enumerate(f, 1):
            check(line.endswith("\n"), "%s:%d: partial line %r" % (log, n, line))
            rec = json.loads(line)
            strict_strings(rec, "%s:%d" % (log, n))
            # Every record any suite reads validates against the published schema.
            if SCHEMA is None and os.path.exists(SCHEMA_FILE):
                raise Failure("python3-jsonschema is missing (tools/install-deps.sh): the "
                              "records cannot be checked against docs/events.schema.json")
            err = SCHEMA and next(SCHEMA.iter_errors(rec), None)
            if err:
                raise Failure("%s:%d: not a record of docs/events.schema.json: %s (at %s)\n%s"
                              % (log, n, err.message, "/".join(map(str, err.path)), line))
            out.append(rec)
    return out


def denials(evs):
    return [e for e in evs if e["type"] == "deny"]


class Result:
    def __init__(self, proc, log):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.log = log
        self.events = events(log)

    @property
    def lines(self):
        return self.stdout.splitlines()


def run(prof, cmd, mode=None, stdin=None, timeout=120, extra=(), pass_fds=()):
    """bpfwarden run --profile PROF -- CMD, with the log in its own file;
    pass_fds: descriptors the command inherits."""
    fd, log = tempfile.mkstemp(prefix="bw-", suffix=".log", dir=SCRATCH)
    os.close(fd)
    args = [BW, "run", "--profile", prof, "--log", log]
    if mode:
        args += ["--mode", mode]
    args += list(extra) + ["--"] + list(cmd)
    proc = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout,
                          pass_fds=pass_fds)
    return Result(proc, log)


def fsops(prof, ops, mode=None):
    """Run several fsop operations in one sandbox; returns (result, [outcome...])."""
    text = "".join(" ".join(op) + "\n" for op in ops)
    r = run(prof, [FSOP, "-"], mode=mode, stdin=text)
    got = r.lines
    check(len(got) == len(ops),
          "fsop gave %d results for %d operations (rc %d)\nstdout: %s\nstderr: %s"
          % (len(got), len(ops), r.rc, r.stdout, r.stderr))
    return r, got


def expect_ops(prof, cases, mode=None):
    """cases: [(op tuple, "OK" | "ERR EACCES" ...)]; checks each outcome."""
    r, got = fsops(prof, [c[0] for c in cases], mode=mode)
    bad = ["%s: got %s, want %s" % (" ".join(c[0]), g, c[1]) for c, g in zip(cases, got) if g != c[1]]
    check(not bad, "\n  ".join(["unexpected outcomes:"] + bad) + "\nlog:\n" + read(r.log))
    return r


def rule_of(prof, needle):
    """FILE:LINE of the first line of prof containing needle."""
    with open(prof) as f:
        for n, line in enumerate(f, 1):
            if needle in line:
                return "%s:%d" % (prof, n)
    raise Failure("no line %r in %s" % (needle, prof))


def expect_driver(prof, driver, cases, mode=None):
    """Run a driver script in a sandbox with one argument per case; each case is
    (argument, expected output line). Returns the Result."""
    r = run(prof, ["/usr/bin/python3", driver] + [c[0] for c in cases], mode=mode)
    got = r.stdout.splitlines()
    check(len(got) == len(cases), "driver gave %d results for %d cases (rc %d, stderr %s)"
          % (len(got), len(cases), r.rc, r.stderr))
    bad = ["%s: got %s, want %s" % (c[0], g, c[1]) for c, g in zip(cases, got) if g != c[1]]
    check(not bad, "\n  ".join(["unexpected:"] + bad))
    return r


def wait_for(pred, timeout=30, what="condition"):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.05)
    raise Failure("timed out waiting for " + what)


def cgroup_root():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.startswith("cgroup2 "):
                return left.split()[4]
    raise Failure("no cgroup2 mount")


def make_cgroup(name):
    cg = os.path.join(cgroup_root(), name)
    os.makedirs(cg, exist_ok=True)
    return cg


def remove_cgroup(cg):
    root = cgroup_root()
    if os.path.isdir(cg):
        subprocess.run(["sh", "-c", "cat %s/cgroup.procs | while read p; do echo $p > "
                        "%s/cgroup.procs; done; rmdir %s" % (cg, root, cg)])


def attach(cg, prof, log, replace=False, event_rate=20):
    """Start `attach` for cgroup cg and wait until it governs; returns the process."""
    # Few events by default: the hammer's denials would keep the agents busy logging.
    args = [BW, "attach", "--cgroup", cg, "--profile", prof, "--log", log,
            "--event-rate", str(event_rate)]
    if replace:
        args.append("--replace")
    agent = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def governing():
        if agent.poll() is not None:
            check(False, "attach exited %r: %s" % (agent.returncode, agent.stderr.read()))
        return os.path.exists(log) and "governing" in read(log)
    # The first load after boot verifies every program: slow under emulation.
    wait_for(governing, timeout=180, what="attach --profile %s" % prof)
    return agent


def stop(agent):
    if agent.poll() is None:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)


def run_one(t):
    """Run test t in a fresh scratch directory: (exception or None, seconds)."""
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    start = time.time()
    try:
        t()
    except Exception as e:  # any error fails the test, loudly
        return e, time.time() - start
    return None, time.time() - start


def describe(e):
    """A failure's message: a Failure's own words, else the traceback."""
    if isinstance(e, Failure):
        return "  " + str(e).replace("\n", "\n  ")
    return "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()


def main(tests, argv):
    """argv: test names to run (default all); --skip-unknown: names this suite
    lacks are another suite's; --without NAME: leave NAME out of this run
    (said on its own line, never counted as passed or skipped)."""
    args = list(argv[1:])
    without = set()
    while "--without" in args:
        i = args.index("--without")
        without.add(args[i + 1] if i + 1 < len(args) else "")
        del args[i:i + 2]
    skip_unknown = "--skip-unknown" in args
    only = set(a for a in args if a != "--skip-unknown")
    selected = [t for t in tests if not only or t.__name__ in only or t.__name__[5:] in only]
    for t in [t for t in selected if t.__name__ in without or t.__name__[5:] in without]:
        print("not run here: %s" % t.__name__)
        selected.remove(t)
    if only and not selected:
        if skip_unknown:
            return 0  # run.sh: the named tests are in another suite
        print("no test matches %s" % " ".join(sorted(only)))
        return 2
    for tool in (BW, FSOP):
        if not os.access(tool, os.X_OK):
            print("cannot run the integration tests: %s is missing (run make)" % tool)
            return 2
    passed = failed = skipped = 0
    for t in selected:
        e, took = run_one(t)
        if isinstance(e, Skipped):
            skipped += 1
            print("skip %s: %s" % (t.__name__, e))
        elif e:
            failed += 1
            print("FAIL %s (%.1fs)" % (t.__name__, took))
            print(describe(e))
        else:
            passed += 1
            print("ok   %s (%.1fs)" % (t.__name__, took))
        sys.stdout.flush()
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


class Servers:
    """TCP listeners that accept and drop, on loopback IPv4 and IPv6 unless
    addrs names others ("0.0.0.0" and "::": every address of the host)."""

    def __init__(self, ports, addrs=("127.0.0.1", "::1")):
        self.socks = []
        for addr in addrs:
            fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
            for p in ports:
                s = socket.socket(fam, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if fam == socket.AF_INET6:
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                s.bind((addr, p))
                s.listen(64)
                self.socks.append(s)
                threading.Thread(target=self.serve, args=(s,), daemon=True).start()

    @staticmethod
    def serve(s):
        while True:
            try:
                c, _ = s.accept()
                c.close()
            except OSError:
                return

    def close(self):
        for s in self.socks:
            try:
                s.shutdown(socket.SHUT_RDWR)  # wakes the accept() of its thread
            except OSError:
                pass
            s.close()
