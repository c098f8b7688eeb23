#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The command line as a person meets it: --help and --usage of every command,
bad options and numbers, --version against the pinned state, and what the
agent says when it lacks a capability. Runs as root, in the VM (run.sh) and
on the build host (make hosttest), where BPF LSM is refused by the kernel:
there the agent must still name a missing capability, never blame the
kernel for it."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwtest import (BW, REPO, Failure, cgroup_root, check, check_eq, events,  # noqa: E402
                    lsm_active, main, make_cgroup, profile, skip, wait_for)

COMMANDS = {
    "run": ["--profile", "--mode", "--log", "--event-rate", "--output", "--min-children",
            "--exact"],
    "attach": ["--cgroup", "--profile", "--mode", "--log", "--event-rate", "--replace"],
    "detach": ["--cgroup"],
    "mode": ["--cgroup"],
    "learn": ["--cgroup", "--all", "--duration", "--output", "--profile", "--log",
              "--min-children", "--exact"],
    "audit": ["--all", "--duration", "--profile", "--log"],
    "status": ["--json"],
    "check": ["--explain"],
    "diff": [],
    "profile": ["--output", "--name", "--min-children", "--exact"],
    "reset": [],
    "daemon": ["--policy-dir", "--log", "--metrics-addr", "--socket", "--runtime-state",
               "--per-pod-metrics", "--bpf-stats"],
    "selftest": ["--list"],
    "upgrade": [],
}

# A profile the cgroup programs enforce alone (no BPF LSM needed).
NET_ONLY = "default allow file\ndefault allow exec\nallow net connect tcp 127.0.0.1:9\n"
# One that needs BPF LSM.
WITH_FILES = "default allow\ndeny file r /etc/shadow\n"


def bw(*args, caps_dropped=None):
    cmd = [BW] + list(args)
    if caps_dropped:
        # For root, the bounding set decides what an exec'd program gets.
        drop = ",".join("-" + c for c in caps_dropped)
        cmd = ["setpriv", "--inh-caps=" + drop, "--bounding-set=" + drop, "--"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_help_and_usage_of_every_command():
    top = bw("--help")
    check_eq(top.returncode, 0, "bpfwarden --help")
    for name, options in COMMANDS.items():
        check(re.search(r"^  %s +\S" % name, top.stdout, re.M),
              "the command list has %s with its summary:\n%s" % (name, top.stdout))
        r = bw(*name.split(), "--help")
        check_eq(r.returncode, 0, "%s --help status (%s)" % (name, r.stderr))
        check(r.stdout.startswith("Usage: bpfwarden %s " % name), "%s --help:\n%s" % (name, r.stdout))
        for opt in options + ["--verbose", "--help", "--usage"]:
            check(opt in r.stdout, "%s --help names %s:\n%s" % (name, opt, r.stdout))
        u = bw(*name.split(), "--usage")
        check_eq(u.returncode, 0, "%s --usage status" % name)
        check(u.stdout.startswith("Usage: bpfwarden %s [-" % name), "%s --usage:\n%s" % (name, u.stdout))
        bad = bw(*name.split(), "--no-such-option")
        check_eq(bad.returncode, 125 if name == "run" else 2, "%s with a bad option" % name)
        check("unrecognized option '--no-such-option'" in bad.stderr
              and "Try `bpfwarden %s --help'" % name in bad.stderr, "%s: %s" % (name, bad.stderr))
    r = bw("frobnicate")
    check_eq(r.returncode, 2, "unknown command")
    check("unknown command 'frobnicate'" in r.stderr, r.stderr)
    check_eq(bw().returncode, 2, "no command")


def test_bad_numbers_and_missing_options():
    cases = [
        (["run", "--event-rate", "12x", "--", "true"], "--event-rate wants events a second"),
        (["run", "--event-rate", "-1", "--", "true"], "--event-rate wants events a second"),
        (["run", "--event-rate", "1000001", "--", "true"], "--event-rate wants"),
        (["learn", "--all", "--output", "o", "--duration", "0"], "--duration wants a whole"),
        (["learn", "--all", "--output", "o", "--duration", " 5"], "--duration wants a whole"),
        (["learn", "--all", "--output", "o", "--min-children", "1"], "--min-children wants"),
        (["run", "--mode", "fast", "--", "true"], "unknown mode 'fast'"),
        (["daemon", "--log", "-"], "--policy-dir is needed"),
        (["mode", "--cgroup", "/", "fast"], "unknown mode 'fast'"),
        (["mode", "--cgroup", "/"], "one MODE is needed"),
        (["run", "--profile", "p"], "no command to run"),
        (["run", "--output", "o", "--", "true"], "--profile is needed"),
        (["run", "--profile", "p", "--output", "o", "--", "true"], "it needs --mode learn"),
        (["attach", "--profile", "p"], "--cgroup is needed"),
        (["learn", "--output", "o"], "either --cgroup or --all"),
        (["learn", "--all"], "--output is needed"),
        (["audit"], "--all is needed"),
        (["status", "extra"], "unexpected argument 'extra'"),
        (["check"], "no profile given"),
    ]
    for args, want in cases:
        r = bw(*args)
        # run's own failures are 125 (CMD's statuses are its own), the others' 2.
        check_eq(r.returncode, 125 if args[0] == "run" else 2,
                 "exit status of %s (%s)" % (" ".join(args), r.stderr))
        check(want in r.stderr, "%s: want %r in:\n%s" % (" ".join(args), want, r.stderr))
        check_eq(r.stdout, "", "nothing on stdout for " + " ".join(args))
    # The hook answers --help and --version instead of reading a state.
    hook = os.path.join(os.path.dirname(BW), "bpfwarden-hook")
    r = subprocess.run([hook, "--help"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    check(r.returncode == 0 and "bpfwarden-hook invoke" in r.stdout, "hook --help: %r" % r.stdout)
    r = subprocess.run([hook, "--version"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    check(r.returncode == 0 and r.stdout.startswith("bpfwarden-hook "), "hook --version: %r"
          % r.stdout)
    # A port past 65535 is refused, not taken modulo 65536.
    work = tempfile.mkdtemp(prefix="bw-addr-")
    r = subprocess.run([BW, "daemon", "--policy-dir", work, "--socket", work + "/s", "--log",
                        work + "/log", "--metrics-addr", "127.0.0.1:80800"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode != 0 and "port from 1 to 65535" in r.stderr,
          "daemon --metrics-addr 127.0.0.1:80800: %d %s" % (r.returncode, r.stderr))
    shutil.rmtree(work)
    # `--log -` is standard output for run as for the daemon: no file named "-".
    p = profile(NET_ONLY)
    cwd = tempfile.mkdtemp(prefix="bw-log-")
    r = subprocess.run([BW, "run", "--profile", p, "--log", "-", "--", "true"], cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    check_eq(r.returncode, 0, "run --log - (%s)" % r.stderr)
    check(any(json.loads(l).get("type") == "agent" for l in r.stdout.splitlines()),
          "the agent's records on standard output: %r" % r.stdout)
    check(not os.path.exists(os.path.join(cwd, "-")), "a file named - was made")
    shutil.rmtree(cwd)
    # After the first argument, the options are the command's own.
    p = profile(NET_ONLY)
    r = bw("run", "--profile", p, "--", "sh", "-c", "echo $0 $1", "--mode", "x")
    check_eq((r.returncode, r.stdout), (0, "--mode x\n"), "CMD's own options (%s)" % r.stderr)


def test_failures_exit_1_and_say_why():
    """Every command but run exits 1 when it fails after a good command line,
    with the reason on standard error and nothing on standard output
    (docs/operations.md, "Exit statuses"); run's own failures are 125."""
    root = cgroup_root()
    missing = os.path.join(root, "bw-no-such-cgroup")
    idle = make_cgroup("bw-cli-idle")
    work = tempfile.mkdtemp(prefix="bw-fail-")
    bad = os.path.join(work, "bad.profile")
    with open(bad, "w") as f:
        f.write("profile bad\nfrob\n")
    net = profile(NET_ONLY)
    # A directory that looks like a cgroup, reached by a path that starts with
    # the cgroup v2 mount: not the cgroup v2 file system.
    open(os.path.join(work, "cgroup.procs"), "w").close()
    outside = root + "/.." * len(root.strip("/").split("/")) + work
    try:
        cases = [
            (["detach", "--cgroup", missing], "bw-no-such-cgroup is not a cgroup v2 directory"),
            (["mode", "--cgroup", missing, "audit"], "is not a cgroup v2 directory"),
            (["attach", "--cgroup", missing, "--profile", net], "is not a cgroup v2 directory"),
            (["attach", "--cgroup", outside, "--profile", net],
             "not a directory of the cgroup v2 file system"),
            (["learn", "--cgroup", missing, "--output", work + "/o", "--duration", "1"],
             "is not a cgroup v2 directory"),
            (["mode", "--cgroup", idle, "audit"], "not governed"),
            (["detach", "--cgroup", idle], "not governed"),
            (["audit", "--all", "--profile", work + "/none", "--duration", "1"],
             "cannot read profile " + work + "/none"),
            (["check", bad], bad + ":2:1: error: unknown keyword 'frob'"),
            (["check", work + "/none"], work + "/none: No such file or directory"),
            (["daemon", "--policy-dir", work + "/none", "--socket", work + "/s", "--log",
              work + "/log"], "cannot watch " + work + "/none"),
        ]
        if not os.path.exists("/sys/fs/bpf/bpfwarden"):
            cases.append((["upgrade"], "nothing to upgrade"))
        for args, want in cases:
            r = bw(*args)
            what = " ".join(args)
            check_eq(r.returncode, 1, "exit status of %s (%s)" % (what, r.stderr))
            check(want in r.stderr, "%s: want %r in:\n%s" % (what, want, r.stderr))
            check_eq(r.stdout, "", "nothing on stdout for " + what)
        # The missing cgroup is named where it was looked for.
        r = bw("detach", "--cgroup", "bw-no-such-cgroup")
        check("(%s taken under the cgroup v2 mount %s)" % (missing, root) in r.stderr, r.stderr)
        # run: its own failures are 125, whatever CMD would have said.
        for args, want in [
                (["--profile", work + "/none", "--", "true"], "cannot read profile"),
                (["--profile", bad, "--", "true"], "unknown keyword 'frob'"),
                (["--profile", net, "--log", work + "/none/log", "--", "true"], work + "/none/log")]:
            r = bw("run", *args)
            check_eq(r.returncode, 125, "exit status of run %s (%s)" % (" ".join(args), r.stderr))
            check(want in r.stderr, "run %s: want %r in:\n%s" % (" ".join(args), want, r.stderr))
    finally:
        shutil.rmtree(work)
        os.rmdir(idle)


def pinned_hash():
    out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned",
                          "/sys/fs/bpf/bpfwarden/bw_version"],
                         capture_output=True, text=True, check=True).stdout
    value = json.loads(out)[0]["value"]
    return "%016x" % int.from_bytes(bytes(int(b, 16) for b in value), "little")


def test_version_is_the_pinned_build():
    r = bw("--version")
    check_eq(r.returncode, 0, "--version status")
    m = re.fullmatch(r"bpfwarden (\S+) \(BPF objects ([0-9a-f]{16})\)\n", r.stdout)
    check(m, "--version prints the version and the build hash: %r" % r.stdout)
    with open(os.path.join(REPO, "VERSION")) as f:
        check(m.group(1).startswith(f.read().strip()), "the version starts with VERSION")
    # Whatever was pinned before, a run leaves this build's hash there.
    run = bw("run", "--profile", profile(NET_ONLY), "--", "true")
    check_eq(run.returncode, 0, "a run to pin the state (%s)" % run.stderr)
    check_eq(pinned_hash(), m.group(2), "the hash the pinned-state check uses")


def expect_refused(drop, text, needs):
    """Without the capabilities in drop, running text is refused with a sentence
    naming the missing capability and the operation that takes it."""
    check_eq(bw("reset").returncode, 0, "reset, so that everything must be loaded")
    p = profile(text)
    r = bw("run", "--profile", p, "--", "true", caps_dropped=drop)
    check_eq(r.returncode, 125, "exit status without %s (%s)" % (drop, r.stderr))
    for want in needs:
        check(want in r.stderr, "want %r without %s, got:\n%s" % (want, drop, r.stderr))
    for wrong in ("refuses", "Operation not permitted", "not permitted"):
        check(wrong not in r.stderr, "blames the kernel without %s:\n%s" % (drop, r.stderr))
    check(not os.path.exists("/sys/fs/bpf/bpfwarden/links/bw_file_open"),
          "no file hook was loaded without %s" % drop)


def test_missing_capabilities_are_named():
    """Without a capability the agent names it, not the kernel; where BPF LSM
    is not active at all (`bpf` not in lsm=), that is what file rules are
    refused for, whatever the capabilities."""
    if not shutil.which("setpriv"):
        skip("setpriv (util-linux) is not installed: no way to drop a capability")
    lacks = "this process lacks "
    with open("/sys/kernel/security/lsm") as f:
        listed = "bpf" in f.read().strip().split(",")
    expect_refused(["perfmon", "sys_admin"], NET_ONLY,
                   [lacks + "CAP_PERFMON", "cgroup tracking programs (tp_btf)"])
    expect_refused(["perfmon", "sys_admin"], WITH_FILES,
                   ["BPF LSM programs cannot be loaded", lacks + "CAP_PERFMON"] if listed else
                   ["file, exec and unix socket rules need BPF LSM: BPF LSM is not active"])
    expect_refused(["net_admin", "sys_admin"], NET_ONLY,
                   [lacks + "CAP_NET_ADMIN", "cgroup network programs"])
    expect_refused(["bpf", "sys_admin"], NET_ONLY,
                   [lacks + "CAP_BPF", "create BPF maps"])
    # CAP_SYS_ADMIN alone stands in for the other three, as in the kernel.
    check_eq(bw("reset").returncode, 0, "reset")
    r = bw("run", "--profile", profile(NET_ONLY), "--", "true",
           caps_dropped=["bpf", "perfmon", "net_admin"])
    check_eq(r.returncode, 0, "CAP_SYS_ADMIN stands in (%s)" % r.stderr)

    # status says the same, and its trial lines do not blame the kernel either.
    check_eq(bw("reset").returncode, 0, "reset")
    r = bw("status", caps_dropped=["perfmon", "sys_admin"])
    check(re.search(r"CAP_PERFMON +no", r.stdout), "status lists CAP_PERFMON:\n" + r.stdout)
    if listed:
        check(re.search(r"BPF LSM program attaches +no +not known: this process lacks",
                        r.stdout), "the LSM trial is not the kernel's answer:\n" + r.stdout)
        check(re.search(r"file rules +no +BPF LSM programs cannot be loaded: this process "
                        r"lacks CAP_PERFMON", r.stdout), "file rules line:\n" + r.stdout)
    else:
        check(re.search(r"file rules +no +BPF LSM is not active", r.stdout),
              "file rules line, BPF LSM not in lsm=:\n" + r.stdout)
    check(re.search(r"net rules \(tcp, udp\) +no .*lacks CAP_PERFMON", r.stdout),
          "net rules line:\n" + r.stdout)
    check("refuses" not in r.stdout, "status blames the kernel:\n" + r.stdout)
    # With every capability, what it says is the kernel's own answer.
    r = bw("status")
    check("lacks" not in r.stdout and re.search(r"CAP_PERFMON +yes", r.stdout),
          "status with every capability:\n" + r.stdout)
    lsm = re.search(r"BPF LSM program attaches +(yes|no) +(.*)", r.stdout)
    check(lsm, "status has the LSM trial:\n" + r.stdout)
    if lsm.group(1) == "no":
        check(re.search(r"file rules +no +BPF LSM is listed but this kernel refuses|"
                        r"file rules +no +BPF LSM is not active", r.stdout),
              "without BPF LSM, the kernel is named:\n" + r.stdout)


FAKE_ROUTES = """
import sys
from escape import got_through, main, refused, skip


class Ran:
    def __init__(self, said, events=()):
        self.stdout, self.rc, self.stderr, self.events = said + "\\n", 0, "", list(events)


def test_closed():
    \"\"\"Refused, with its one event.\"\"\"
    refused(Ran("ERR EPERM", [{"type": "deny", "path": "/x"}]), "EPERM", "/x", "closed")
    got_through(Ran("OK"), "closed's control")


def test_open():
    refused(Ran("OK"), "EPERM", "/x", "open")


def test_broken():
    got_through(Ran("ERR EPERM"), "broken's control")


def test_wrong_errno():
    refused(Ran("ERR EACCES"), "EPERM", "/x", "wrong errno")


def test_skipped():
    skip("nothing to try here")


TESTS = [test_closed, test_open, test_broken, test_wrong_errno, test_skipped]
if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
"""


def unknown_route(r):
    check_eq(r.returncode, 2, "selftest of an unknown route")
    check(not r.stdout and "no route named test_nosuch" in r.stderr,
          "an unknown route is named on standard error: %r %r" % (r.stdout, r.stderr))


def test_selftest_says_each_route_verdict():
    """bpfwarden selftest over a corpus of stand-in routes, one per verdict:
    the verdict of each, the count line, and the exit status (1 when any
    route is open, broken or failed; 0 when all are refused or skipped; 2 for
    an unknown route, and on a kernel that cannot run BPF LSM, like the build
    host's, where it runs no route)."""
    # Not in the scratch directory, which each route's run empties.
    corpus = tempfile.mkdtemp(prefix="bw-corpus-")
    try:
        selftest_verdicts(corpus)
    finally:
        shutil.rmtree(corpus)


def selftest_verdicts(corpus):
    for rel in ("tests/escape/selftest.py", "tests/escape/escape.py",
                "tests/integration/bwtest.py"):
        os.makedirs(os.path.dirname(os.path.join(corpus, rel)), exist_ok=True)
        shutil.copy(os.path.join(REPO, rel), os.path.join(corpus, rel))
    with open(os.path.join(corpus, "tests/escape/test_fake.py"), "w") as f:
        f.write(FAKE_ROUTES)
    env = dict(os.environ, BPFWARDEN_SELFTEST_DIR=corpus)

    def selftest(*args):
        return subprocess.run([BW, "selftest"] + list(args), capture_output=True, text=True,
                              env=env, timeout=120)

    r = selftest()
    if not lsm_active():
        # The build host: no route can be refused, and it says so instead of passing.
        check_eq(r.returncode, 2, "selftest without BPF LSM:\n" + r.stdout + r.stderr)
        check("this kernel cannot run BPF LSM programs" in r.stderr and not r.stdout,
              "the reason, on standard error: %r %r" % (r.stdout, r.stderr))
        check_eq(selftest("--list").returncode, 0, "selftest --list")
        unknown_route(selftest("test_nosuch"))
        return
    check_eq(r.returncode, 1, "selftest with open routes (stderr %s)" % r.stderr)
    verdicts = dict((m.group(2), m.group(1)) for m in
                    re.finditer(r"^(\S+) +(test_\w+)", r.stdout, re.M))
    check_eq(verdicts, {"test_closed": "refused", "test_open": "OPEN", "test_broken": "broken",
                        "test_wrong_errno": "failed", "test_skipped": "skipped"},
             "verdicts:\n" + r.stdout)
    check("skipped  test_skipped: nothing to try here" in r.stdout, r.stdout)
    check("5 routes: 1 refused, 1 OPEN, 1 broken, 1 failed, 1 skipped" in r.stdout, r.stdout)
    r = selftest("test_closed", "skipped")
    check_eq(r.returncode, 0, "selftest of a refused and a skipped route:\n" + r.stdout + r.stderr)
    r = selftest("--list")
    check_eq(r.returncode, 0, "selftest --list")
    check(re.search(r"^test_closed +Refused, with its one event$", r.stdout, re.M), r.stdout)
    unknown_route(selftest("test_nosuch"))


def test_status_json_names_profiles():
    """status --json is one object: the tier (lsm in the VM, network on the
    build host), and each governed cgroup with its profile's name, mode and
    slot, and each slot with the same name and its counters."""
    p = profile(NET_ONLY, name="status-json")
    run = subprocess.Popen([BW, "run", "--profile", p, "--", "sleep", "60"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while True:
            r = bw("status", "--json")
            st = json.loads(r.stdout)
            mine = [g for g in st["governed"] if g["profile"] == "status-json"]
            if mine:
                break
            check(run.poll() is None and time.monotonic() < deadline,
                  "the run is not listed by its profile's name: %r" % st)
            time.sleep(0.5)
        check_eq(st["tier"], "lsm" if lsm_active() else "network", "the tier")
        check_eq(r.returncode, 0 if lsm_active() else 3, "status --json exit status")
        check_eq((mine[0]["mode"], mine[0]["cgroup"].startswith("/bpfwarden/run-")),
                 ("enforce", True), "the governed cgroup: %r" % mine[0])
        slots = [s for s in st["slots"] if s["slot"] == mine[0]["slot"]]
        check(len(slots) == 1 and slots[0]["profile"] == "status-json" and
              slots[0]["agent_pid"] == mine[0]["agent_pid"], "its slot: %r" % st["slots"])
        check(st["enforcement"]["net"], "tcp and udp rules are enforced here: %r" % st)
    finally:
        run.terminate()
        run.wait(timeout=60)


METRICS_PORT = 19471


class Hostile:
    """Clients of the metrics port that never let a request end: idle ones,
    ones that trickle a request a byte at a time, and ones that send a whole
    request and never read the answer (a small receive buffer). Each kind
    keeps its count of connections open, opening again what the daemon
    closes, until stop()."""

    def __init__(self, per_kind):
        self.done = False
        self.opened = 0
        self.threads = [threading.Thread(target=self.keep, args=(kind, per_kind), daemon=True)
                        for kind in ("idle", "trickle", "noread")]
        for t in self.threads:
            t.start()

    def connect(self, kind):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if kind == "noread":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        s.settimeout(2)
        s.connect(("127.0.0.1", METRICS_PORT))
        if kind == "noread":
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        self.opened += 1
        return s

    def keep(self, kind, n):
        socks = []
        while not self.done:
            while len(socks) < n and not self.done:
                try:
                    socks.append(self.connect(kind))
                except OSError:
                    time.sleep(0.05)
            for s in list(socks):
                try:
                    if kind == "trickle":
                        s.send(b"G")
                    elif s.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b"" and kind == "idle":
                        raise OSError("closed")
                except BlockingIOError:
                    pass
                except OSError:
                    socks.remove(s)
                    s.close()
            time.sleep(0.2)
        for s in socks:
            s.close()

    def stop(self):
        self.done = True
        for t in self.threads:
            t.join()


def hook_answer(sock):
    """One request on the hook socket (an unreadable one: the daemon says so at
    once); the answer and the seconds it took."""
    start = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(sock)
        return ask(s, b"not a request\n\n"), time.monotonic() - start


def ask(s, request):
    """Send request on connected socket s; all it answers, until it closes."""
    s.sendall(request)
    out = b""
    while True:
        b = s.recv(4096)
        if not b:
            return out.decode(errors="replace")
        out += b


def healthz(timeout=5):
    with socket.create_connection(("127.0.0.1", METRICS_PORT), timeout=timeout) as s:
        return ask(s, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")


def test_metrics_clients_cannot_hold_the_hook():
    """The daemon answers bpfwarden-hook and its metrics clients from one
    loop. 64 hostile clients hold the metrics port (idle, trickling a
    request, never reading the answer), reopening what the daemon closes;
    meanwhile 20 requests on the hook socket are each answered within 1 s
    (before the metrics server stopped waiting on its clients, five idle
    ones held a request 10 s). Once they stop, /healthz answers again."""
    work = tempfile.mkdtemp(prefix="bw-daemon-")
    policy, sock, log = work + "/policy", work + "/hook.sock", work + "/daemon.log"
    os.makedirs(policy)
    with open(policy + "/idle.profile", "w") as f:
        f.write("profile idle\ndefault allow\nmatch cgroup=bwtest-nothing-*\n")
    d = subprocess.Popen([BW, "daemon", "--policy-dir", policy, "--log", log, "--metrics-addr",
                          "127.0.0.1:%d" % METRICS_PORT, "--socket", sock],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    hostile = None
    try:
        deadline = time.monotonic() + 180
        while not os.path.exists(sock):
            if d.poll() is not None:
                check(False, "the daemon ended: %s" % d.stderr.read())
            check(time.monotonic() < deadline, "the daemon did not start")
            time.sleep(0.2)
        check("ok" in healthz(), "/healthz before the clients")
        hostile = Hostile(per_kind=22)
        time.sleep(2)
        times = []
        for _ in range(20):
            ans, secs = hook_answer(sock)
            check(ans.startswith("fail"), "the hook's answer: %r" % ans)
            times.append(secs)
            time.sleep(0.1)
        times.sort()
        print("  hook answers under %d hostile metrics connections: p50 %.3f s, max %.3f s"
              % (hostile.opened, times[len(times) // 2], times[-1]))
        check(hostile.opened >= 64, "the hostile clients connected %d times" % hostile.opened)
        check(times[-1] < 1.0, "a hook answer took %.2f s with metrics clients holding on"
              % times[-1])
        hostile.stop()
        hostile = None
        deadline = time.monotonic() + 10
        while True:
            try:
                if "ok" in healthz(timeout=3):
                    break
            except OSError:
                pass
            check(time.monotonic() < deadline, "/healthz after the clients left")
            time.sleep(0.2)
        check(d.poll() is None, "the daemon is still running")
    finally:
        if hostile:
            hostile.stop()
        d.terminate()
        d.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


def notify_daemon(work, env):
    """A daemon of an idle profile, started with env added; its Popen."""
    policy = work + "/policy"
    os.makedirs(policy, exist_ok=True)
    with open(policy + "/idle.profile", "w") as f:
        f.write("profile idle\ndefault allow\nmatch cgroup=bwtest-nothing-*\n")
    return subprocess.Popen([BW, "daemon", "--policy-dir", policy, "--log", work + "/daemon.log",
                             "--socket", work + "/hook.sock"],
                            env=dict(os.environ, **env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def test_daemon_tells_the_service_manager():
    """Type=notify: READY=1 comes once the hook socket answers, WATCHDOG=1
    twice per WATCHDOG_USEC from the loop, STOPPING=1 on SIGTERM; no
    watchdog when WATCHDOG_PID names another process; a NOTIFY_SOCKET that
    is not an address is refused at start."""
    work = tempfile.mkdtemp(prefix="bw-notify-")
    addr = work + "/notify"
    mgr = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    mgr.bind(addr)
    d = None
    try:
        mgr.settimeout(180)
        d = notify_daemon(work, {"NOTIFY_SOCKET": addr, "WATCHDOG_USEC": "400000"})
        first = mgr.recv(4096).decode()
        check(first.startswith("READY=1\n"), "the first notification: %r" % first)
        check("STATUS=1 profiles" in first, "the status line: %r" % first)
        ans, _ = hook_answer(work + "/hook.sock")
        check(ans.startswith("fail"), "the hook answers once READY=1 is sent: %r" % ans)
        mgr.settimeout(5)
        start, pings = time.monotonic(), 0
        while time.monotonic() - start < 1.0:
            check_eq(mgr.recv(4096), b"WATCHDOG=1", "a notification while running")
            pings += 1
        check(4 <= pings <= 8, "%d WATCHDOG=1 in 1 s with WATCHDOG_USEC=400000" % pings)
        d.send_signal(signal.SIGTERM)
        while True:
            m = mgr.recv(4096)
            if m != b"WATCHDOG=1":
                break
        check_eq(m, b"STOPPING=1", "the notification on SIGTERM")
        check_eq(d.wait(timeout=60), 0, "the daemon's exit status")

        shutil.rmtree(work + "/policy")
        d = notify_daemon(work, {"NOTIFY_SOCKET": addr, "WATCHDOG_USEC": "100000",
                                 "WATCHDOG_PID": "1"})
        mgr.settimeout(180)
        check(mgr.recv(4096).startswith(b"READY=1\n"), "READY=1 again")
        mgr.settimeout(1)
        try:
            m = mgr.recv(4096)
            check(False, "a notification for another process's watchdog: %r" % m)
        except socket.timeout:
            pass
        d.send_signal(signal.SIGTERM)
        d.wait(timeout=60)

        d = notify_daemon(work, {"NOTIFY_SOCKET": "relative/notify"})
        check_eq(d.wait(timeout=60), 1, "the exit status with a bad NOTIFY_SOCKET")
        err = d.stderr.read()
        check("NOTIFY_SOCKET=relative/notify: want an absolute path or @name" in err,
              "the reason: %r" % err)
    finally:
        if d and d.poll() is None:
            d.terminate()
            d.wait(timeout=60)
        mgr.close()
        shutil.rmtree(work, ignore_errors=True)


def test_explain_and_diff():
    """check --explain and diff as a reviewer runs them: the deciding rule
    quoted from the file, and diff's statuses as diff(1)'s."""
    work = tempfile.mkdtemp(prefix="bw-review-")
    try:
        old, new = work + "/old.profile", work + "/new.profile"
        with open(old, "w") as f:
            f.write("profile web\ndefault deny\nallow file r /srv/www/**\n")
        with open(new, "w") as f:
            f.write("profile web\ndefault deny\n# wider\nallow file r /srv/** as content\n")
        r = subprocess.run([BW, "check", new, "--explain", "/srv/www/index.html"],
                           capture_output=True, text=True)
        check_eq(r.returncode, 0, "check --explain's status (%s)" % r.stderr)
        check("  file r     allow by %s:4: allow file r /srv/** as content\n" % new in r.stdout,
              "the deciding rule, quoted: %r" % r.stdout)
        check("  file w     deny  by default (%s:2: default deny)\n" % new in r.stdout,
              "the default, quoted: %r" % r.stdout)
        r = subprocess.run([BW, "diff", old, old], capture_output=True, text=True)
        check_eq((r.returncode, r.stdout.count("\n")), (0, 2), "diff of a profile with itself")
        r = subprocess.run([BW, "diff", old, new], capture_output=True, text=True)
        check_eq(r.returncode, 1, "diff's status when they differ")
        check_eq(r.stdout.splitlines()[2:],
                 ["> %s:4: allow file r /srv/** as content (was %s:3: allow file r /srv/www/**)"
                  % (new, old)], "the difference")
        r = subprocess.run([BW, "diff", old, work + "/none"], capture_output=True, text=True)
        check_eq((r.returncode, r.stdout), (2, ""), "diff with a missing profile")
        check("none: No such file or directory" in r.stderr, "why: %r" % r.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_profile_merge_and_diff():
    """profile merge as an operator runs it on the profiles of two learn runs: written
    and valid; inputs whose settings disagree, or one that does not load, refused with
    nothing written; profile diff is diff."""
    work = tempfile.mkdtemp(prefix="bw-merge-")
    try:
        a, b, c, out = (work + "/" + n for n in ("a.profile", "b.profile", "c.profile", "m.profile"))
        with open(a, "w") as f:
            f.write("profile web\ndefault deny\n" + "".join(
                "# seen 2 times, by /usr/sbin/nginx\nallow file r /srv/www/%d.html\n" % i
                for i in range(4)))
        with open(b, "w") as f:
            f.write("profile web-2\ndefault deny\n" + "".join(
                "allow file r /srv/www/%d.html\n" % i for i in range(4, 8)))
        with open(c, "w") as f:
            f.write("profile web\ndefault deny file\ndefault allow exec\ndefault deny net\n")
        r = subprocess.run([BW, "profile", "merge", a, b, "-o", out], capture_output=True,
                           text=True)
        check_eq(r.returncode, 0, "merge status (%s)" % r.stderr)
        text = open(out).read()
        check("\nprofile web\n" in text and "\nallow file r /srv/www/**\n" in text,
              "merged, generalised over both:\n" + text)
        check_eq(subprocess.run([BW, "check", out], capture_output=True).returncode, 0,
                 "the merged profile checks")
        r = subprocess.run([BW, "profile", "merge", a, b, "-o", out, "--name", "site"],
                           capture_output=True, text=True)
        check("\nprofile site\n" in open(out).read(), "--name: " + r.stderr)
        os.unlink(out)
        r = subprocess.run([BW, "profile", "merge", a, c, "-o", out], capture_output=True,
                           text=True)
        check_eq(r.returncode, 1, "merge of profiles whose defaults disagree")
        check("default allow exec, where %s has default deny exec" % a in r.stderr, r.stderr)
        r = subprocess.run([BW, "profile", "merge", a, work + "/none", "-o", out],
                           capture_output=True, text=True)
        check_eq(r.returncode, 1, "merge with a missing input")
        check("none: No such file or directory" in r.stderr, r.stderr)
        check(not os.path.exists(out), "nothing written when merge failed")
        r = subprocess.run([BW, "profile", "merge", a], capture_output=True, text=True)
        check_eq(r.returncode, 2, "merge without --output")
        r = subprocess.run([BW, "profile", "diff", a, a], capture_output=True, text=True)
        check_eq((r.returncode, r.stdout.count("\n")), (0, 2), "profile diff of a profile with itself")
        r = subprocess.run([BW, "profile", "diff", a, b], capture_output=True, text=True)
        check_eq(r.returncode, 1, "profile diff's status when they differ")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_learning_from_a_network_only_profile():
    """learn from a START that governs the network only keeps its defaults, so the
    result loads where START does (the host here has no BPF LSM) and allows the new
    endpoint the run used."""
    work = tempfile.mkdtemp(prefix="bw-start-")
    try:
        start, out = work + "/net.profile", work + "/learned.profile"
        with open(start, "w") as f:
            f.write("profile netonly\n" + NET_ONLY)
        probe = ("import socket, sys\nfor p in sys.argv[1:]:\n    s = socket.socket()\n"
                 "    try:\n        s.connect(('127.0.0.1', int(p)))\n"
                 "    except OSError as e:\n        print(p, e.errno)\n")
        cmd = ["/usr/bin/python3", "-c", probe, "9", "19998"]
        r = subprocess.run([BW, "run", "--mode", "learn", "--profile", start, "--output", out,
                            "--log", work + "/learn.log", "--"] + cmd,
                           capture_output=True, text=True, timeout=120)
        check_eq(r.returncode, 0, "learning run (%s)" % r.stderr)
        lines = open(out).read().splitlines()
        for want in ("profile netonly", "default allow file", "default allow exec",
                     "allow net connect tcp 127.0.0.1:9", "allow net connect tcp 127.0.0.1:19998"):
            check(want in lines, "%r in the learned profile:\n%s" % (want, "\n".join(lines)))
        r = subprocess.run([BW, "run", "--profile", out, "--log", work + "/run.log", "--"] + cmd,
                           capture_output=True, text=True, timeout=120)
        check_eq((r.returncode, sorted(r.stdout.split())), (0, ["111", "111", "19998", "9"]),
                 "enforced: both connects reach the kernel (refused by no listener, not by "
                 "us): %s" % r.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def unit_capabilities():
    """The unit's CapabilityBoundingSet, as setpriv names them."""
    with open(os.path.join(REPO, "deploy/systemd/bpfwarden.service")) as f:
        for line in f:
            if line.startswith("CapabilityBoundingSet="):
                return [c[4:].lower() for c in line.split("=", 1)[1].split()]
    raise AssertionError("the unit has no CapabilityBoundingSet=")


def test_daemon_works_with_the_units_capabilities():
    """The daemon under the systemd unit's capability bounding set, from a
    reset (every program loaded again): it loads a profile (file rules where
    BPF LSM runs), says it is ready, answers the hook and stops cleanly."""
    if not shutil.which("setpriv"):
        skip("setpriv (util-linux) is not installed: no way to bound the capabilities")
    caps = unit_capabilities()
    check("sys_admin" not in caps and "bpf" in caps, "the unit's set: %r" % caps)
    check_eq(bw("reset").returncode, 0, "reset, so that everything must be loaded")
    work = tempfile.mkdtemp(prefix="bw-unitcaps-")
    addr = work + "/notify"
    mgr = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    mgr.bind(addr)
    policy, log = work + "/policy", work + "/daemon.log"
    os.makedirs(policy)
    rules = "deny file r /etc/shadow\n" if lsm_active() else "deny net connect tcp 10.9.9.9:1\n"
    with open(policy + "/caps.profile", "w") as f:
        f.write("profile unitcaps\ndefault allow\n%smatch cgroup=bwtest-nothing-*\n" % rules)
    bounding = "-all," + ",".join("+" + c for c in caps)
    d = subprocess.Popen(["setpriv", "--inh-caps=-all", "--bounding-set=" + bounding, "--", BW,
                          "daemon", "--policy-dir", policy, "--log", log, "--socket",
                          work + "/hook.sock"], env=dict(os.environ, NOTIFY_SOCKET=addr),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        mgr.settimeout(1)
        first, deadline = "", time.monotonic() + 180
        while not first and d.poll() is None and time.monotonic() < deadline:
            try:
                first = mgr.recv(4096).decode()
            except socket.timeout:
                pass
        check(first.startswith("READY=1\n"),
              "the daemon's first notification: %r (exit %s: %s)"
              % (first, d.poll(), d.stderr.read() if d.poll() is not None else ""))
        with open("/proc/%d/status" % d.pid) as f:
            eff = [line for line in f if line.startswith("CapBnd:")][0]
        check(int(eff.split()[1], 16) & (1 << 21) == 0, "CAP_SYS_ADMIN is out of its set: " + eff)
        with open(log) as f:
            text = f.read()
        check("profile unitcaps loaded" in text and "not loaded" not in text,
              "the profile loaded: %s" % text)
        ans, _ = hook_answer(work + "/hook.sock")
        check(ans.startswith("fail"), "the hook's answer: %r" % ans)
        d.send_signal(signal.SIGTERM)
        check_eq(d.wait(timeout=60), 0, "the exit status (%s)" % d.stderr.read())
    finally:
        if d.poll() is None:
            d.terminate()
            d.wait(timeout=60)
        mgr.close()
        shutil.rmtree(work, ignore_errors=True)


SERVICE_PORT = 19473
CONNECT = ("import socket\ns = socket.socket()\ns.settimeout(5)\ntry:\n"
           "    s.connect(('127.0.0.1', %d))\n    print('OK')\n"
           "except OSError as e:\n    print('ERR', e.errno)\n" % SERVICE_PORT)


def start_in(cg, argv, **kw):
    """argv started the way systemd starts a unit's process: forked outside,
    moved into cg, then exec'ed (its first exec in cg)."""
    return subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg] + argv,
                            stdout=subprocess.PIPE, text=True, **kw)


def connect_from(cg, port=SERVICE_PORT):
    """What a connect to port (nothing listens) gets from a process whose
    first exec is in cg: "through" a connect refused by the peer
    (ECONNREFUSED), "EPERM" one refused here."""
    p = start_in(cg, [sys.executable, "-c", CONNECT.replace(str(SERVICE_PORT), str(port))])
    out = p.communicate(timeout=60)[0].strip()
    return {"ERR 111": "through", "ERR 1": "EPERM"}.get(out, out)


def clear_policy_dir(policy, log, d):
    """Empty a running daemon's policy directory and wait until it has taken
    its service selectors out: a selector keeps its slot in use after the
    daemon stops."""
    if d is None or d.poll() is not None:
        return
    for name in os.listdir(policy):
        os.unlink(os.path.join(policy, name))
    try:
        wait_for(lambda: any(e.get("msg") == "service selectors in force: none"
                             for e in events(log) if e.get("type") == "agent"),
                 timeout=30, what="the daemon to take its selectors out")
    except Exception:
        pass


def daemon_up(policy, sock, log, *extra):
    """The daemon on policy (its hook on sock, its log in log, then extra
    options), once it listens; killed if it does not start."""
    d = subprocess.Popen([BW, "daemon", "--policy-dir", policy, "--log", log, "--socket", sock]
                         + list(extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        deadline = time.monotonic() + 180
        while not os.path.exists(sock):
            check(d.poll() is None, "the daemon ended: %s" % (d.stderr.read()
                                                              if d.poll() is not None else ""))
            check(time.monotonic() < deadline, "the daemon did not start")
            time.sleep(0.2)
    except BaseException:
        if d.poll() is None:
            d.kill()
            d.wait()
        raise
    return d


def daemon_down(policy, log, d):
    """Its selectors out of the kernel (they keep their slot), then the daemon stopped."""
    clear_policy_dir(policy, log, d)
    if d is not None and d.poll() is None:
        d.terminate()
        d.wait(timeout=60)


def kill_cgroup(cg):
    if not os.path.isdir(cg):
        return
    with open(cg + "/cgroup.kill", "w") as f:
        f.write("1")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.rmdir(cg)
            return
        except OSError:
            time.sleep(0.1)


def test_daemon_governs_services_as_they_are_made():
    """`match cgroup=GLOB` selects services: a cgroup made the way systemd
    makes a unit's (mkdir, the process moved in, then its exec) whose path
    matches is governed from that exec, without any hook: its connect to a
    denied port gets EPERM and one deny event naming its cgroup and the
    profile, while a cgroup that does not match gets through. The kernel
    matches as fnmatch does ('?', '*' across '/') and takes the first
    profile by name when two select a cgroup. It keeps selecting while the
    daemon is down (SIGKILL): a cgroup made then is governed by the last
    profile; the restarted daemon takes it over, logs the deny event it made
    meanwhile (left in the former slot's ring buffer, read with its rule's
    place), and governs the next one.
    A matching cgroup that existed before the daemon started (with a
    process in it, and empty) is governed once the daemon starts. Once the
    profiles leave the directory, new cgroups are not selected, and those
    governed stay governed."""
    work = tempfile.mkdtemp(prefix="bw-svc-")
    policy, sock, log = work + "/policy", work + "/hook.sock", work + "/daemon.log"
    os.makedirs(policy)
    tag = "bwtest-svc%d" % os.getpid()
    root = cgroup_root()

    def cg(name):
        return os.path.join(root, "%s-%s" % (tag, name))
    deny = "default allow\ndeny net connect tcp 127.0.0.1:%d\n" % SERVICE_PORT
    with open(policy + "/svc.profile", "w") as f:
        f.write("profile svc\n%smatch cgroup=/%s-*.service\n" % (deny, tag))
    # Sorts before svc: where both select a cgroup, it is this one's.
    with open(policy + "/asvc.profile", "w") as f:
        f.write("profile asvc\n%smatch cgroup=/%s-order.*\nmatch cgroup=/%s-g?ob/*/deep*.service\n"
                % (deny, tag, tag))
    names = ("running.service", "empty.service", "first.service", "first.scope", "order.service",
             "glob/a/b/deep1.service", "glob/a/b/deep1.scope", "down.service", "after.service",
             "gone.service", "split.service", "split.service/supervisor")
    procs, daemons = [], []

    def start_daemon():
        daemons.append(daemon_up(policy, sock, log))
        return daemons[-1]

    def agent_msgs():
        return [e.get("msg", "") for e in events(log) if e.get("type") == "agent"]

    def denials(name):
        """The profiles of the connect deny events naming cgroup name."""
        rel = "/%s-%s" % (tag, name)
        return [e.get("profile") for e in events(log)
                if e.get("type") == "deny" and e.get("op") == "connect" and
                e.get("port") == SERVICE_PORT and (e.get("cgroup") or {}).get("path") == rel]

    def governed_by(name, prof, logged=True):
        check_eq(connect_from(cg(name)), "EPERM", "a connect from %s" % name)
        if not logged:
            return
        wait_for(lambda: denials(name), timeout=30, what="the deny event of %s" % name)
        check_eq(denials(name), [prof], "the profiles of the deny events of %s" % name)
    try:
        # Before the daemon: one with a process in it, one empty.
        os.mkdir(cg("running.service"))
        os.mkdir(cg("empty.service"))
        procs.append(start_in(cg("running.service"), ["sleep", "600"]))
        check_eq(connect_from(cg("running.service")), "through",
                 "a connect from the running service's cgroup before the daemon started")
        d = start_daemon()
        check("service selectors in force: /{0}-order.* (asvc), /{0}-g?ob/*/deep*.service "
              "(asvc), /{0}-*.service (svc)".format(tag) in agent_msgs(),
              "the daemon says which selectors are in force: %r" % agent_msgs())
        # Without BPF LSM no exec hook starts a waiting cgroup: governed at once.
        for name, how in (("running", "from now"),
                          ("empty", "from its first exec" if lsm_active() else "from now")):
            rel = "/%s-%s.service" % (tag, name)
            check(any(m.startswith("service %s governed by profile svc %s" % (rel, how))
                      for m in agent_msgs()),
                  "the daemon says it governs %s %s: %r" % (rel, how, agent_msgs()))
        governed_by("running.service", "svc")
        governed_by("empty.service", "svc")
        # Made while the daemon runs, as units' cgroups are.
        for name in names[2:7]:
            os.makedirs(cg(name))
        governed_by("first.service", "svc")
        governed_by("order.service", "asvc")
        governed_by("glob/a/b/deep1.service", "asvc")
        for name in ("first.scope", "glob/a/b/deep1.scope", "glob/a/b"):
            check_eq(connect_from(cg(name)), "through",
                     "a connect from %s, which no glob selects (the control)" % name)
        # A unit split before its first exec (systemd's DelegateSubgroup=): its
        # first exec in the subgroup, which no glob names, is governed all the same.
        os.mkdir(cg("split.service"))
        os.mkdir(cg("split.service/supervisor"))
        governed_by("split.service/supervisor", "svc")
        # status lists the selectors in the kernel, in order, with their profiles.
        st = json.loads(subprocess.run([BW, "status", "--json"], capture_output=True,
                                       text=True).stdout)
        check_eq([(e["glob"], e["profile"], e["from_first_exec"])
                  for e in st["service_selectors"]],
                 [("/%s-order.*" % tag, "asvc", lsm_active()),
                  ("/%s-g?ob/*/deep*.service" % tag, "asvc", lsm_active()),
                  ("/%s-*.service" % tag, "svc", lsm_active())],
                 "the service selectors in `status --json`")
        # The daemon killed: the kernel still selects.
        d.kill()
        d.wait(timeout=30)
        os.unlink(sock)
        os.mkdir(cg("down.service"))
        # Its event waits in the former slot's ring buffer, which no one reads now.
        governed_by("down.service", "svc", logged=False)
        d = start_daemon()
        rel = "/%s-down.service" % tag
        check(any(m.startswith("service %s governed before this daemon started: now with "
                               "profile svc" % rel) for m in agent_msgs()),
              "the restarted daemon took the service over: %r" % agent_msgs())
        # What it did meanwhile is read from the former slot, with the rule's place.
        wait_for(lambda: denials("down.service"), timeout=30,
                 what="the deny event made while the daemon was down")
        check_eq(denials("down.service"), ["svc"], "the deny events of down.service")
        downs = [e for e in events(log) if e.get("type") == "deny" and
                 (e.get("cgroup") or {}).get("path") == "/%s-down.service" % tag]
        check(downs[0].get("rule", "").endswith("svc.profile:3") and downs[0].get("rule_id"),
              "the drained event names its rule: %r" % downs[0])
        check(any(re.match(r"read 1 record a former agent left in slot \d+ \(profile svc\)",
                           m) for m in agent_msgs()),
              "the daemon says it read the former slot: %r" % agent_msgs())
        check_eq(connect_from(cg("down.service")), "EPERM",
                 "a connect from that service after the restart")
        os.mkdir(cg("after.service"))
        governed_by("after.service", "svc")
        # The profiles gone: nothing new is selected; what they govern stays governed.
        os.unlink(policy + "/svc.profile")
        os.unlink(policy + "/asvc.profile")
        wait_for(lambda: "service selectors in force: none" in agent_msgs(),
                 timeout=30, what="the daemon to take the selectors out")
        os.mkdir(cg("gone.service"))
        check_eq(connect_from(cg("gone.service")), "through",
                 "a connect from a matching cgroup made after the profiles left")
        check_eq(connect_from(cg("first.service")), "EPERM",
                 "a connect from a service governed before the profiles left")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        for name in reversed(names):
            kill_cgroup(cg(name))
        for name in ("glob/a/b", "glob/a", "glob"):
            kill_cgroup(cg(name))
        clear_policy_dir(policy, log, daemons[-1] if daemons else None)
        for d in daemons:
            if d.poll() is None:
                d.terminate()
                d.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


def connect_to(port):
    return CONNECT.replace(str(SERVICE_PORT), str(port))


def test_daemon_learns_each_service():
    """A profile of the policy directory in `mode learn` with a `match
    cgroup=` line: each service it selects gets a learned profile of its own
    in --learn-dir, written once its cgroup is gone, started from that
    profile (its name and match line kept). Two services that connected to
    different ports get one each, each allowing its own port only; merged
    (`profile merge`) and put in force in enforce mode, the same programs
    run again in a new service with nothing refused, and a port neither
    used is refused (EPERM). Host and guest: without BPF LSM the network
    is what is learned and enforced."""
    work = tempfile.mkdtemp(prefix="bw-dlearn-")
    policy, sock, log = work + "/policy", work + "/hook.sock", work + "/daemon.log"
    learned = work + "/learned"
    os.makedirs(policy)
    tag = "bwtest-dl%d" % os.getpid()
    root = cgroup_root()
    port_a, port_b, port_c = SERVICE_PORT, SERVICE_PORT + 1, SERVICE_PORT + 2

    def cg(name):
        return os.path.join(root, "%s-%s" % (tag, name))
    with open(policy + "/learner.profile", "w") as f:
        # Without BPF LSM file and exec rules (and defaults) cannot be enforced.
        f.write("profile learner\nmode learn\n%smatch cgroup=/%s-*.service\n"
                % ("default deny\n" if lsm_active() else
                   "default allow file\ndefault allow exec\ndefault deny net\n", tag))
    d = None

    def agent_msgs():
        return [e.get("msg", "") for e in events(log) if e.get("type") == "agent"]

    def run_in(name, port):
        p = start_in(cg(name), [sys.executable, "-c", connect_to(port)])
        out = p.communicate(timeout=60)[0].strip()
        return {"ERR 111": "through", "ERR 1": "EPERM"}.get(out, out)
    made = []
    try:
        d = daemon_up(policy, sock, log, "--learn-dir", learned)
        for name, port in (("a.service", port_a), ("b.service", port_b)):
            os.mkdir(cg(name))
            made.append(name)
            check_eq(run_in(name, port), "through", "a connect from %s, learning" % name)
        files = {}
        for name, port in (("a.service", port_a), ("b.service", port_b)):
            kill_cgroup(cg(name))
            files[name] = os.path.join(learned, "%s-%s.profile" % (tag, name))
            wait_for(lambda: os.path.exists(files[name]), timeout=30,
                     what="the learned profile of %s" % name)
            text = open(files[name]).read()
            check("profile learner\n" in text and "match cgroup=/%s-*.service" % tag in text,
                  "the learned profile of %s keeps its start's name and match: %s"
                  % (name, text))
            nets = [line for line in text.splitlines()
                    if line.startswith("allow net connect tcp")]
            other = port_b if port == port_a else port_a
            check(any(line.endswith(":%d" % port) for line in nets) and
                  not any(line.endswith(":%d" % other) for line in nets),
                  "the learned connect rules of %s: %r" % (name, nets))
            r = subprocess.run([BW, "check", files[name]], capture_output=True, text=True)
            check_eq(r.returncode, 0, "bpfwarden check of the learned profile of %s (%s)"
                     % (name, r.stdout + r.stderr))
        check(any(m.startswith("learned profile %s written" % files["a.service"])
                  for m in agent_msgs()), "the daemon says what it wrote: %r" % agent_msgs())
        merged = work + "/merged.profile"
        r = subprocess.run([BW, "profile", "merge", files["a.service"], files["b.service"],
                            "--name", "learned", "-o", merged], capture_output=True, text=True)
        check_eq(r.returncode, 0, "profile merge (%s)" % (r.stdout + r.stderr))
        text = open(merged).read().replace("mode learn\n", "mode enforce\n")
        check("mode enforce\n" in text, "the merged profile's mode line: %s" % text)
        with open(policy + "/learned.profile", "w") as f:
            f.write(text)
        os.unlink(policy + "/learner.profile")
        wait_for(lambda: "service selectors in force: /%s-*.service (learned)" % tag
                 in agent_msgs(), timeout=30, what="the merged profile in force")
        os.mkdir(cg("m.service"))
        made.append("m.service")
        for port, want in ((port_a, "through"), (port_b, "through"), (port_c, "EPERM")):
            check_eq(run_in("m.service", port), want,
                     "a connect to port %d under the merged profile, enforcing" % port)

        def denied():
            return [(e.get("op"), e.get("port")) for e in events(log)
                    if e.get("type") == "deny" and
                    (e.get("cgroup") or {}).get("path") == "/%s-m.service" % tag]
        wait_for(denied, timeout=30, what="the deny event under the merged profile")
        time.sleep(1)
        check_eq(denied(), [("connect", port_c)], "what the merged profile refused the same "
                 "programs")
    finally:
        for name in made:
            kill_cgroup(cg(name))
        daemon_down(policy, log, d)
        shutil.rmtree(work, ignore_errors=True)


def test_daemon_on_deny_kill_ends_the_service():
    """`on-deny kill` in a profile the daemon puts in force by `match
    cgroup=`: a denied connect from a cgroup below a selected service ends
    the whole service (its cgroup.kill: the process that asked, the other
    in the service's own cgroup, SIGKILL), with an agent record naming the
    service's cgroup; another service of the same profile that did nothing
    denied keeps running, and so does the daemon. Host and guest."""
    work = tempfile.mkdtemp(prefix="bw-dkill-")
    policy, sock, log = work + "/policy", work + "/hook.sock", work + "/daemon.log"
    os.makedirs(policy)
    tag = "bwtest-dk%d" % os.getpid()
    root = cgroup_root()

    def cg(name):
        return os.path.join(root, "%s-%s" % (tag, name))
    with open(policy + "/killer.profile", "w") as f:
        f.write("profile killer\ndefault allow\ndeny net connect tcp 127.0.0.1:%d\n"
                "on-deny kill\nmatch cgroup=/%s-*.service\n" % (SERVICE_PORT, tag))
    names, procs, d = ["bad.service", "bad.service/sub", "good.service"], [], None
    try:
        d = daemon_up(policy, sock, log)
        for name in names:
            os.mkdir(cg(name))
        bystander = start_in(cg("bad.service"), ["sleep", "600"])
        other = start_in(cg("good.service"), ["sleep", "600"])
        procs += [bystander, other]
        asker = start_in(cg("bad.service/sub"), [sys.executable, "-c", CONNECT + "import time\n"
                                                 "time.sleep(600)\n"])
        procs.append(asker)
        for p, what in ((asker, "the process whose connect was denied"),
                        (bystander, "the other process of the service")):
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                raise Failure("%s still runs a minute after the denial" % what)
            check_eq(p.returncode, -signal.SIGKILL, "how %s ended" % what)
        msg = "on-deny kill: killed every process of the governed cgroup /%s-bad.service" % tag
        wait_for(lambda: any(e.get("msg") == msg for e in events(log)), timeout=30,
                 what="the agent record of the kill")
        time.sleep(1)
        check(other.poll() is None, "the other service was killed too")
        check(d.poll() is None, "the daemon ended")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for name in reversed(names):
            kill_cgroup(cg(name))
        daemon_down(policy, log, d)
        shutil.rmtree(work, ignore_errors=True)


STORM_CONTAINERS = int(os.environ.get("BW_STORM_CONTAINERS", "200"))


def storm_version(policy, k):
    """Version k of the storm's profile, replaced whole (rename), as kubelet
    swaps a ConfigMap's files: every version refuses the service port; the
    last one (k None) the next port too."""
    tmp = "%s/.storm.%s" % (policy, k)
    with open(tmp, "w") as f:
        f.write("profile storm\n# version %s\ndefault allow\ndeny net connect tcp 127.0.0.1:%d\n"
                "deny net connect tcp 127.0.0.1:%d\nmatch namespace=storm\n"
                % (k, SERVICE_PORT, SERVICE_PORT + 1 if k is None else 20000 + k))
    os.rename(tmp, policy + "/storm.profile")


# Asks the daemon on socket argv[1] about an unselected container every 0.1 s
# until its standard input closes; prints each answer's seconds and words.
STORM_PROBE = r"""
import os, select, socket, sys, time
req = ("bpfwarden-hook 1\nop create\nvia hook\ncgroup /\nnamespace probe\npod probe\n"
       "container c\npid %d\ncgroup_id 1\n\n" % os.getpid()).encode()
while not select.select([sys.stdin], [], [], 0.1)[0]:
    start = time.monotonic()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.settimeout(30)
            c.connect(sys.argv[1])
            c.sendall(req)
            ans = b""
            while True:
                b = c.recv(4096)
                if not b:
                    break
                ans += b
    except OSError:
        continue
    if ans:
        print("%.6f %s" % (time.monotonic() - start, ans.decode().split("\n")[0]), flush=True)
"""


def storm_container(work, cg, i, sock):
    """One container started as runc does it: its init in its cgroup, stopped
    before its first exec while the hook asks the daemon; released (exec) when
    the hook lets it start. Returns (process or None, seconds the hook took,
    the hook's stderr)."""
    # Where containerd's shim keeps it, for a restarted daemon to take it over.
    bundle = "%s/state/k8s.io/storm-%d" % (work, i)
    os.makedirs(bundle + "/rootfs", exist_ok=True)
    ann = {"io.kubernetes.cri.sandbox-namespace": "storm",
           "io.kubernetes.cri.sandbox-name": "pod-%d" % i,
           "io.kubernetes.cri.container-name": "c",
           "io.kubernetes.cri.container-type": "container"}
    with open(bundle + "/config.json", "w") as f:
        json.dump({"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "annotations": ann,
                   "linux": {"cgroupsPath": cg[len(cgroup_root()):]}}, f)
    # "in" once cgroup.procs is closed again: a descriptor of it open for
    # writing would let the container leave, and the daemon refuses that.
    p = subprocess.Popen(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && echo in && read x && '
                          'exec sleep 900', cg], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    check_eq(p.stdout.readline(), "in\n", "container %d's init in its cgroup" % i)
    with open(bundle + "/init.pid", "w") as f:
        f.write("%d" % p.pid)
    state = {"ociVersion": "1.0.2", "id": "storm-%d" % i, "status": "creating", "pid": p.pid,
             "bundle": bundle, "annotations": ann}
    env = dict(os.environ, BW_HOOK_SOCKET=sock, BW_SELECTORS=work + "/selectors")
    start = time.monotonic()
    r = subprocess.run([os.path.join(os.path.dirname(BW), "bpfwarden-hook")],
                       input=json.dumps(state), capture_output=True, text=True, env=env,
                       timeout=120)
    secs = time.monotonic() - start
    if r.returncode:
        p.kill()
        p.wait()
        return None, secs, r.stderr
    p.stdin.write("go\n")
    p.stdin.close()
    return p, secs, r.stderr


def test_a_start_storm_with_an_attacker_in_it():
    """200 containers start, 8 at a time, through bpfwarden-hook, while 66
    hostile clients hold the metrics port (idle, trickling, never reading)
    and the profile they select is replaced ten times a second; half way the
    daemon is killed (SIGKILL) and started again. While it is down the hook
    refuses what it selects (the runtime retries); while it is up no start
    is refused, and the daemon answers within 1 s (p99) as a client of its
    socket times it. At the end every container runs governed by the
    profile's last version, whole: all in its one slot, and a connect from
    the first and the last container to the ports that version refuses gets
    EPERM. The figures are in docs/performance.md, "A start storm"."""
    work = tempfile.mkdtemp(prefix="bw-storm-")
    policy, sock, log = work + "/policy", work + "/hook.sock", work + "/daemon.log"
    os.makedirs(policy)
    top = os.path.join(cgroup_root(), "bwtest-storm%d" % os.getpid())
    os.makedirs(top)
    storm_version(policy, 0)
    opts = ("--metrics-addr", "127.0.0.1:%d" % METRICS_PORT, "--runtime-state", work + "/state")
    daemons = [daemon_up(policy, sock, log, *opts)]
    hostile, procs, lock = None, [], threading.Lock()
    times, refused_up, refused_down, probes = [], [], 0, []
    done = threading.Event()
    started = [0]

    def rewrite():
        k = 1
        while not done.wait(0.1):
            storm_version(policy, k)
            k += 1
        return k

    def restart():
        while started[0] < STORM_CONTAINERS // 2 and not done.is_set():
            time.sleep(0.1)
        daemons[-1].kill()
        daemons[-1].wait()
        with lock:
            daemons.append(None)
        time.sleep(1)
        d = daemon_up(policy, sock, log, *opts)
        with lock:
            daemons[-1] = d

    def probe():
        """The daemon's answer time, as a client of its socket sees it: an
        unselected container's request every 0.1 s while the daemon is up,
        from a process of its own (the threads here share one interpreter)."""
        p = subprocess.Popen([sys.executable, "-c", STORM_PROBE, sock], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        done.wait()
        out = p.communicate(timeout=60)[0]
        for line in out.splitlines():
            secs, ans = line.split(" ", 1)
            probes.append((float(secs), ans))

    def one(i):
        nonlocal refused_down
        cg = "%s/c%d" % (top, i)
        os.mkdir(cg)
        while True:
            with lock:
                up = daemons[-1] is not None
            p, secs, err = storm_container(work, cg, i, sock)
            with lock:
                if p:
                    procs.append(p)
                    started[0] += 1
                    if up:
                        times.append(secs)
                    return
                if "cannot be reached" in err:
                    refused_down += 1
                else:
                    refused_up.append(err.strip())
                    return
            time.sleep(0.2)

    try:
        hostile = Hostile(per_kind=22)
        wait_for(lambda: hostile.opened >= 64, timeout=60, what="the hostile clients")
        writer = threading.Thread(target=rewrite, daemon=True)
        killer = threading.Thread(target=restart, daemon=True)
        prober = threading.Thread(target=probe, daemon=True)
        writer.start()
        killer.start()
        prober.start()
        queue = list(range(STORM_CONTAINERS))

        def worker():
            while True:
                with lock:
                    if not queue:
                        return
                    i = queue.pop(0)
                one(i)
        storm_start = time.monotonic()
        workers = [threading.Thread(target=worker) for _ in range(8)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        done.set()
        writer.join()
        killer.join()
        prober.join()
        check(daemons[-1] is not None and daemons[-1].poll() is None, "the daemon runs")
        with open("/proc/%d/stat" % daemons[-1].pid) as f:
            cpu = sum(int(x) for x in f.read().rsplit(")", 1)[1].split()[11:13])
        cpu /= os.sysconf("SC_CLK_TCK")
        opened = hostile.opened
        hostile.stop()
        hostile = None
        with socket.create_connection(("127.0.0.1", METRICS_PORT), timeout=30) as c:
            text = ask(c, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        inside = dict(re.findall(r'^bpfwarden_hook_request_seconds_(sum|count) (\S+)$', text, re.M))
        print("  the restarted daemon: %.2f s of CPU; %s hook requests answered in %.1f ms on "
              "average inside it; the storm took %.1f s"
              % (cpu, inside.get("count"), 1000 * float(inside.get("sum", 0)) /
                 max(1, float(inside.get("count", 1))), time.monotonic() - storm_start))
        def pct(v, q):
            return v[min(len(v) - 1, int(len(v) * q))]
        times.sort()
        answers = sorted(t for t, _ in probes)
        msgs = [e.get("msg", "") for e in events(log) if e.get("type") == "agent"]
        reloads = sum(1 for m in msgs if m.startswith("profile storm reloaded"))
        taken = [int(m.group(1)) for m in (re.search(r", (\d+) containers taken over", x)
                                           for x in msgs) if m]
        print("  %d starts, %d hostile metrics connections, %d profile versions loaded, %d "
              "containers taken over at the restart, %d starts refused while the daemon was "
              "down" % (len(procs), opened, reloads, taken[-1] if taken else -1, refused_down))
        print("  the daemon's answers (%d requests on its socket, 10 a second): p50 %.3f s, "
              "p99 %.3f s, max %.3f s; a whole bpfwarden-hook run, started while the daemon "
              "was up: p50 %.3f s, p99 %.3f s, max %.3f s"
              % (len(answers), pct(answers, 0.5), pct(answers, 0.99), answers[-1],
                 pct(times, 0.5), pct(times, 0.99), times[-1]))
        check_eq(refused_up, [], "starts refused while the daemon was up")
        check_eq(len(procs), STORM_CONTAINERS, "containers started")
        check(opened >= 64, "the hostile clients connected %d times" % opened)
        check(reloads > 0, "the profile was replaced during the storm")
        check(len(taken) == 2 and taken[-1] > 0, "the restarted daemon took containers over: "
              "%r" % taken)
        check(all(a.split()[:2] == ["ok", "unselected"] for _, a in probes), "the daemon's answers to "
              "an unselected container: %r" % sorted({a for _, a in probes}))
        check(len(answers) >= 5 and pct(answers, 0.99) <= 1.0,
              "the daemon's p99 answer time: %.2f s" % pct(answers, 0.99))

        # The last version; while the containers move to it, or to one
        # before it, they are split between two slots.
        storm_version(policy, None)

        def settled():
            st = json.loads(bw("status", "--json").stdout)
            mine = [g for g in st["governed"] if g["cgroup"].startswith(top[len(cgroup_root()):]
                                                                       + "/c")]
            return mine if (len(mine) == STORM_CONTAINERS and
                            len({g["slot"] for g in mine}) == 1 and
                            {g["profile"] for g in mine} == {"storm"}) else None

        def last_slot():
            slot = None
            for e in events(log):
                m = re.match(r"profile storm (?:loaded|reloaded) from storm.profile .*\(slot "
                             r"(?:\d+ -> )?(\d+)", e.get("msg", "")) if e.get("type") == "agent" \
                    else None
                slot = int(m.group(1)) if m else slot
            return slot
        deadline = time.monotonic() + 120
        while True:
            mine = settled()
            if mine and mine[0]["slot"] == last_slot() and \
                    connect_from("%s/c0" % top, SERVICE_PORT + 1) == "EPERM":
                break
            check(time.monotonic() < deadline, "every container under the last version: %r"
                  % sorted({(g["slot"], g["profile"]) for g in
                            json.loads(bw("status", "--json").stdout)["governed"]}))
            time.sleep(1)
        for i in (0, STORM_CONTAINERS - 1):
            check_eq([connect_from("%s/c%d" % (top, i), port)
                      for port in (SERVICE_PORT, SERVICE_PORT + 1)], ["EPERM", "EPERM"],
                     "connects from container %d to the ports the last version refuses" % i)
    finally:
        done.set()
        if hostile:
            hostile.stop()
        for p in procs:
            p.kill()
            p.wait()
        for name in os.listdir(top) if os.path.isdir(top) else []:
            kill_cgroup(os.path.join(top, name))
        kill_cgroup(top)
        for d in daemons[:-1]:
            if d is not None and d.poll() is None:
                d.kill()
                d.wait()
        daemon_down(policy, log, daemons[-1])
        if os.environ.get("BW_STORM_KEEP"):
            shutil.copy(log, os.environ["BW_STORM_KEEP"])
        shutil.rmtree(work, ignore_errors=True)


def test_example_service_and_its_profile():
    """deploy/systemd/example: the unit's ExecStart, started in a cgroup
    made as systemd makes the unit's (its directory and port taken to the
    test's), selected by the example profile through the daemon: it serves
    its page with no refusal; a process of the same unit that reads
    /etc/shadow is refused (EACCES), one that runs another program is
    refused at the exec, each with its deny event. Needs BPF LSM (file and
    exec rules)."""
    if not lsm_active():
        skip("the example profile has file and exec rules: BPF LSM")
    example = os.path.join(REPO, "deploy", "systemd", "example")
    work = tempfile.mkdtemp(prefix="bw-demo-")
    policy, sock, log = work + "/policy", work + "/hook.sock", work + "/daemon.log"
    srv = work + "/srv"
    os.makedirs(policy)
    os.makedirs(srv)
    with open(srv + "/index.html", "w") as f:
        f.write("hello from http-demo\n")
    slice_ = os.path.join(cgroup_root(), "bwtest-demo%d.slice" % os.getpid())
    unit = slice_ + "/http-demo.service"
    port = SERVICE_PORT + 1
    with open(example + "/http-demo.profile") as f:
        text = f.read()
    check("match cgroup=/system.slice/http-demo.service\n" in text and "/srv/http-demo" in text
          and "127.0.0.1:8080" in text, "the example profile names the unit, its directory "
          "and its port")
    text = text.replace("/system.slice/", "/" + os.path.basename(slice_) + "/") \
        .replace("/srv/http-demo", srv).replace("127.0.0.1:8080", "127.0.0.1:%d" % port)
    with open(policy + "/http-demo.profile", "w") as f:
        f.write(text)
    with open(example + "/http-demo.service") as f:
        start = [ln.split("=", 1)[1].split() for ln in f if ln.startswith("ExecStart=")][0]
    start = [srv if a == "/srv/http-demo" else str(port) if a == "8080" else a for a in start]
    d = server = None

    def denied():
        return sorted((e.get("op"), e.get("path")) for e in events(log)
                      if e.get("type") == "deny")
    try:
        d = subprocess.Popen([BW, "daemon", "--policy-dir", policy, "--log", log, "--socket",
                              sock], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
        deadline = time.monotonic() + 180
        while not os.path.exists(sock):
            check(d.poll() is None, "the daemon ended")
            check(time.monotonic() < deadline, "the daemon did not start")
            time.sleep(0.2)
        os.makedirs(unit)
        # systemd's default WorkingDirectory= for a system service.
        server = start_in(unit, start, stderr=subprocess.DEVNULL, cwd="/")
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                    c.sendall(b"GET /index.html HTTP/1.0\r\n\r\n")
                    page = b""
                    while True:
                        chunk = c.recv(4096)
                        if not chunk:
                            break
                        page += chunk
                break
            except OSError:
                check(server.poll() is None, "the example service ended; refused: %r; the "
                      "daemon said: %r" % (denied(), [e.get("msg") for e in events(log)
                                                      if e.get("type") == "agent"][-6:]))
                check(time.monotonic() < deadline, "the example service did not listen")
                time.sleep(0.3)
        check(page.startswith(b"HTTP/1.0 200") and b"hello from http-demo" in page,
              "the page served under the example profile: %r; refused: %r"
              % (page[:200], denied()))
        out = start_in(unit, ["/usr/bin/python3.11", "-c",
                              "try:\n open('/etc/shadow')\n print('read')\n"
                              "except OSError as e:\n print(e.errno)"]).communicate(timeout=60)[0]
        check_eq(out.strip(), "13", "/etc/shadow read by a process of the unit")
        p = start_in(unit, ["/bin/cat", "/etc/hostname"], stderr=subprocess.DEVNULL)
        out = p.communicate(timeout=60)[0]
        check(p.returncode != 0 and not out, "another program run in the unit: rc %d, %r"
              % (p.returncode, out))
        wait_for(lambda: len(denied()) >= 2, timeout=30, what="the deny events")
        check_eq(denied(), [("exec", "/usr/bin/cat"), ("open", "/etc/shadow")],
                 "deny events of the example service (none while it served)")
    finally:
        if server:
            server.kill()
            server.wait()
        kill_cgroup(unit)
        kill_cgroup(slice_)
        clear_policy_dir(policy, log, d)
        if d and d.poll() is None:
            d.terminate()
            d.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)

TESTS = [
    test_help_and_usage_of_every_command,
    test_bad_numbers_and_missing_options,
    test_failures_exit_1_and_say_why,
    test_version_is_the_pinned_build,
    test_missing_capabilities_are_named,
    test_selftest_says_each_route_verdict,
    test_metrics_clients_cannot_hold_the_hook,
    test_status_json_names_profiles,
    test_daemon_tells_the_service_manager,
    test_explain_and_diff,
    test_profile_merge_and_diff,
    test_learning_from_a_network_only_profile,
    test_daemon_works_with_the_units_capabilities,
    test_daemon_governs_services_as_they_are_made,
    test_daemon_learns_each_service,
    test_daemon_on_deny_kill_ends_the_service,
    test_a_start_storm_with_an_attacker_in_it,
    test_example_service_and_its_profile,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
