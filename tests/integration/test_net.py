#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Network enforcement end to end, against loopback servers this test starts.
Runs in the VM (with BPF LSM) and natively on the build host, whose kernel
has no usable BPF LSM: the cgroup programs enforce network rules alone."""
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwtest import (expect_driver, rule_of, BUILD, BW, Servers, check, check_eq, denials, events,
                    lsm_active, main, profile, run, skip, wait_for, cgroup_root, read)

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "net_driver.py")
URING = os.path.join(BUILD, "tests", "uring_connect")
PY = "/usr/bin/python3"
EPERM = "ERR EPERM"
OPEN = "default allow file\ndefault allow exec\n"
ALLOWED, DENIED, OTHER = 19080, 19090, 19100


def expect(prof, cases):
    return expect_driver(prof, DRIVER, cases)


def test_allowed_and_denied_tcp():
    srv = Servers([ALLOWED, DENIED])
    try:
        p = profile(OPEN + "default deny net\nallow net connect tcp 127.0.0.1:%d\n" % ALLOWED)
        r = expect(p, [("tcp:127.0.0.1:%d" % ALLOWED, "OK"), ("tcp:127.0.0.1:%d" % DENIED, EPERM),
                       ("tcp:[::1]:%d" % ALLOWED, EPERM), ("ctypes:127.0.0.1:%d" % DENIED, EPERM),
                       ("ctypes:127.0.0.1:%d" % ALLOWED, "OK")])
        d = [(e["op"], e["family"], e["proto"], e["addr"], e["port"], e["rule"])
             for e in denials(r.events)]
        check_eq(d, [("connect", "ipv4", "tcp", "127.0.0.1", DENIED, "default"),
                     ("connect", "ipv6", "tcp", "::1", ALLOWED, "default"),
                     ("connect", "ipv4", "tcp", "127.0.0.1", DENIED, "default")], "events")
    finally:
        srv.close()


def test_every_route_to_a_denied_local_port():
    srv = Servers([ALLOWED, DENIED])
    try:
        p = profile(OPEN + "default allow net\ndeny net connect tcp localhost:%d\n" % DENIED)
        rule = rule_of(p, "deny net connect")
        r = expect(p, [
            ("tcp:127.0.0.1:%d" % ALLOWED, "OK"),
            ("tcp:127.0.0.1:%d" % DENIED, EPERM),
            ("tcp:[::ffff:127.0.0.1]:%d" % DENIED, EPERM),
            ("tcp:0.0.0.0:%d" % DENIED, EPERM),
            ("tcp:127.0.0.2:%d" % DENIED, EPERM),
            ("tcp:[::1]:%d" % DENIED, EPERM),
            ("tcp:[::]:%d" % DENIED, EPERM),
            ("tfo:127.0.0.1:%d" % DENIED, EPERM),
        ])
        d = denials(r.events)
        check_eq(len(d), 7, "deny events")
        check(all(e["rule"] == rule for e in d), "deciding rule %s: %r" % (rule, d))
        check_eq([e["addr"] for e in d],
                 ["127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.2", "::1", "::1", "127.0.0.1"],
                 "addresses as decided")
        out = subprocess.run([os.path.join(BUILD, "bpfwarden"), "run", "--profile", p, "--log",
                              "/dev/null", "--", URING, "127.0.0.1", str(DENIED)],
                             capture_output=True, text=True)
        check_eq(out.stdout.strip(), EPERM, "io_uring connect (%s)" % out.stderr)
        out = subprocess.run([os.path.join(BUILD, "bpfwarden"), "run", "--profile", p, "--log",
                              "/dev/null", "--", URING, "127.0.0.1", str(ALLOWED)],
                             capture_output=True, text=True)
        check_eq(out.stdout.strip(), "OK", "io_uring connect to an allowed port")
    finally:
        srv.close()


def test_udp_sendto_and_bind():
    p = profile(OPEN + "default deny net\nallow net connect udp 127.0.0.0/8:%d\n" % ALLOWED +
                "allow net bind tcp 127.0.0.1:%d\n" % OTHER)
    r = expect(p, [("udp:127.0.0.1:%d" % ALLOWED, "OK"), ("udp:127.0.0.1:%d" % DENIED, EPERM),
                   ("udp:[::ffff:127.0.0.9]:%d" % ALLOWED, "OK"),
                   ("bind:127.0.0.1:%d" % OTHER, "OK"), ("bind:127.0.0.1:%d" % (OTHER + 1), EPERM),
                   ("bind:0.0.0.0:%d" % OTHER, EPERM)])
    ops = [(e["op"], e["proto"], e["port"]) for e in denials(r.events)]
    check_eq(ops, [("sendmsg", "udp", DENIED), ("bind", "tcp", OTHER + 1), ("bind", "tcp", OTHER)],
             "events")


def test_most_specific_prefix_and_port_range():
    srv = Servers([ALLOWED, DENIED, OTHER])
    try:
        p = profile(OPEN + "default deny net\n"
                    "allow net connect tcp 127.0.0.0/8:*\n"
                    "deny net connect tcp 127.0.0.1:%d-%d\n" % (DENIED - 5, DENIED + 5) +
                    "allow net connect tcp 127.0.0.1:%d\n" % DENIED)
        r = expect(p, [("tcp:127.0.0.1:%d" % DENIED, "OK"),           # narrowest range wins
                       ("tcp:127.0.0.1:%d" % (DENIED + 1), EPERM),
                       ("tcp:127.0.0.2:%d" % (DENIED + 1), "ERR ECONNREFUSED"),  # the /8 allows
                       ("tcp:127.0.0.1:%d" % OTHER, "OK")])           # back to the /8
        check_eq([e["rule"] for e in denials(r.events)],
                 [rule_of(p, "deny net connect tcp 127.0.0.1")], "deciding rule")
    finally:
        srv.close()


def test_audit_mode_connects_and_logs():
    srv = Servers([DENIED])
    try:
        p = profile(OPEN + "default deny net\n")
        r = run(p, [PY, DRIVER, "tcp:127.0.0.1:%d" % DENIED], mode="audit")
        check_eq(r.stdout.strip(), "OK", "audit mode does not block")
        check_eq([(e["type"], e["op"], e["port"]) for e in r.events if e["type"] == "audit"],
                 [("audit", "connect", DENIED)], "audit events")
    finally:
        srv.close()


def test_raw_and_packet_sockets():
    p = profile(OPEN + "default deny net\n")
    if lsm_active():
        r = expect(p, [("raw4", EPERM), ("raw6", EPERM), ("packet", EPERM)])
        got = [(e["op"], e["family"], e["socket_type"]) for e in denials(r.events)]
        check_eq(got, [("socket", "ipv4", "raw"), ("socket", "ipv6", "raw"),
                       ("socket", "packet", "raw")], "events")
    else:
        # Without BPF LSM packet sockets cannot be refused, and the agent says so.
        r = expect(p, [("raw4", EPERM), ("raw6", EPERM), ("packet", "OK")])
        msgs = [e["msg"] for e in r.events if e["type"] == "agent"]
        check(any("packet and unix sockets are not refused" in m for m in msgs), "said: %r" % msgs)
    p = profile(OPEN + "default deny net\nallow net raw\n")
    expect(p, [("raw4", "OK"), ("raw6", "OK"), ("packet", "OK")])
    p = profile(OPEN + "default allow net\ndeny net raw\n")
    r = expect(p, [("raw4", EPERM)])
    check_eq([e["rule"] for e in denials(r.events)], [rule_of(p, "deny net raw")],
             "rule (log: %s)" % open(r.log).read())


def test_unix_sockets():
    S = "/tmp/bwit"
    p = profile(OPEN + "default deny net\n"
                "allow net connect unix %s/app.sock\n" % S +
                "allow net connect unix @bw-app\n"
                "allow net bind unix %s/mine.sock\n" % S)
    if not lsm_active():
        skip("unix socket rules need BPF LSM, which this kernel cannot run")
    socks = []
    for name, kind in (("%s/app.sock" % S, socket.SOCK_STREAM), ("%s/other.sock" % S,
                       socket.SOCK_STREAM), ("\0bw-app", socket.SOCK_STREAM),
                       ("\0bw-other", socket.SOCK_STREAM), ("%s/dg.sock" % S, socket.SOCK_DGRAM)):
        s = socket.socket(socket.AF_UNIX, kind)
        s.bind(name)
        if kind == socket.SOCK_STREAM:
            s.listen(8)
        socks.append(s)
    os.symlink(S + "/other.sock", S + "/innocent.sock")
    try:
        r = expect(p, [("unix:%s/app.sock" % S, "OK"), ("unix:%s/other.sock" % S, EPERM),
                       ("unix:%s/innocent.sock" % S, EPERM), ("unix:@bw-app", "OK"),
                       ("unix:@bw-other", EPERM), ("unixdg:%s/dg.sock" % S, EPERM),
                       ("unixbind:%s/mine.sock" % S, "OK"), ("unixbind:%s/x.sock" % S, EPERM),
                       ("unixbind:@bw-x", EPERM)])
        got = [(e["op"], e["family"], e["unix"]) for e in denials(r.events)]
        check_eq(got, [("connect", "unix", S + "/other.sock"),
                       ("connect", "unix", S + "/other.sock"),
                       ("connect", "unix", "@bw-other"), ("sendmsg", "unix", S + "/dg.sock"),
                       ("bind", "unix", S + "/x.sock"), ("bind", "unix", "@bw-x")], "events")
    finally:
        for s in socks:
            s.close()


def test_unix_rules_refused_without_lsm():
    """On a kernel without BPF LSM a profile with unix rules is refused with
    the reason, never run with those rules silently ignored."""
    if lsm_active():
        skip("this kernel runs BPF LSM: unix rules are enforced (test_unix_sockets)")
    p = profile(OPEN + "default deny net\nallow net connect unix /tmp/bwit/app.sock\n")
    r = run(p, ["true"])
    check_eq(r.rc, 125, "unix rules without BPF LSM are refused, not ignored")
    check("need BPF LSM" in r.stderr, "says why: " + r.stderr)


def test_learn_sends_each_access_once_per_cgroup():
    """Learn mode reports each (cgroup, operation, object) once, for every
    hook: a unix peer and a packet socket used again and again in one
    cgroup give one event each, and the same again in a sibling cgroup is
    that cgroup's own first sight."""
    if not lsm_active():
        skip("unix and packet sockets are decided by BPF LSM, which this kernel cannot run")
    S = "/tmp/bwit"
    root = cgroup_root()
    parent = os.path.join(root, "bwtest-learn-net")
    kids = [os.path.join(parent, k) for k in ("a", "b")]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(S + "/app.sock")
    srv.listen(64)
    for d in [parent] + kids:
        os.makedirs(d, exist_ok=True)
    p = profile(OPEN + "default deny net\n")
    log = S + "/learn.log"
    agent = subprocess.Popen([BW, "attach", "--cgroup", parent, "--profile", p, "--mode", "learn",
                              "--log", log])

    def in_cgroup(cg, *cases):
        cmd = "echo $$ > %s/cgroup.procs && exec %s %s %s" % (cg, PY, DRIVER, " ".join(cases))
        return subprocess.run(["sh", "-c", cmd], capture_output=True, text=True).stdout.split()

    try:
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
        unix = "unix:%s/app.sock" % S
        check_eq(in_cgroup(kids[0], unix, unix, "packet", "packet", "packet"), ["OK"] * 5,
                 "learn mode lets everything through (a)")
        check_eq(in_cgroup(kids[1], unix, "packet"), ["OK"] * 2,
                 "learn mode lets everything through (b)")
        wait_for(lambda: sum(1 for e in events(log) if e["type"] == "learn") >= 4, what="events")
        subprocess.run([BW, "detach", "--cgroup", parent], capture_output=True)
        agent.wait(timeout=30)
        got = sorted((e["cgroup"]["path"].rsplit("/", 1)[-1], e["op"], e["family"])
                     for e in events(log) if e["type"] == "learn")
        check_eq(got, [("a", "connect", "unix"), ("a", "socket", "packet"),
                       ("b", "connect", "unix"), ("b", "socket", "packet")],
                 "one learn event per cgroup and object")
    finally:
        if agent.poll() is None:
            agent.terminate()
            agent.wait(timeout=30)
        srv.close()
        for d in kids + [parent]:
            subprocess.run(["sh", "-c", "cat %s/cgroup.procs 2>/dev/null | while read p; do "
                            "echo $p > %s/cgroup.procs; done; rmdir %s" % (d, root, d)])


def test_named_rule_keeps_its_identity():
    """`as NAME` reaches the events, and rule_id outlives an edit of the rule itself."""
    srv = Servers([ALLOWED, DENIED])
    try:
        ids = []
        for ep in ("127.0.0.1:%d" % DENIED, "localhost:%d-%d" % (DENIED, DENIED + 1)):
            p = profile(OPEN + "default allow net\n# moved down a line by this comment\n"
                        "deny net connect tcp %s as local-denied\n" % ep)
            r = expect(p, [("tcp:127.0.0.1:%d" % ALLOWED, "OK"),
                           ("tcp:127.0.0.1:%d" % DENIED, EPERM)])
            d = denials(r.events)
            check_eq([(e["rule"], e.get("rule_name")) for e in d],
                     [(rule_of(p, "deny net connect"), "local-denied")], "the named rule's event")
            ids.append(d[0]["rule_id"])
        p = profile(OPEN + "default allow net\ndeny net connect tcp 127.0.0.1:%d\n" % DENIED)
        r = expect(p, [("tcp:127.0.0.1:%d" % DENIED, EPERM)])
        d = denials(r.events)
        check("rule_name" not in d[0], "an unnamed rule's event has no rule_name: %r" % d[0])
        ids.append(d[0]["rule_id"])
        check(ids[0] == ids[1] != ids[2], "rule_id: named, edited, unnamed: %r" % ids)
    finally:
        srv.close()


TESTS = [
    test_unix_sockets,
    test_unix_rules_refused_without_lsm,
    test_learn_sends_each_access_once_per_cgroup,
    test_raw_and_packet_sockets,
    test_allowed_and_denied_tcp,
    test_every_route_to_a_denied_local_port,
    test_udp_sendto_and_bind,
    test_most_specific_prefix_and_port_range,
    test_audit_mode_connects_and_logs,
    test_named_rule_keeps_its_identity,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
