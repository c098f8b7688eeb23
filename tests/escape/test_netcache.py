#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Escape routes through the network verdict cache (docs/enforcement.md,
"The network verdict cache"): an allow verdict kept for a cgroup's endpoint
must not outlive the policy that gave it, and must never be another
cgroup's or another endpoint's.

A sandbox (a cgroup governed by `attach`, tests/escape/netcache_driver.py
in it) connects and sends until its verdicts are kept (the slot's "verdicts
kept" counter says so); then its profile is replaced by one that forbids
what it reached, and the next attempt must be refused. The control replaces
it by a permissive profile: the same attempt gets through. The races run
the driver's hammer meanwhile and judge only the connects that began after
each change had been made. All of it is cgroup programs: it runs on the
build host too (`make hosttest`).
"""
import collections
import json
import os
import socket
import subprocess
import sys
import threading
import time

from escape import (SCRATCH, ControlBroken, Failure, RouteOpen, check, check_eq, cgroup_root,
                    lsm_active, skip,
                    denials, events, kept_of, main, profile, read, wait_for)
from bwtest import Servers, attach, make_cgroup, remove_cgroup, stop

S = SCRATCH
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netcache_driver.py")
PY = "/usr/bin/python3"
OPEN = "default allow file\ndefault allow exec\n"
PORT = 19410
MAPPED_PORT, BIND_PORT = PORT + 5, PORT + 4
# (driver command, address, port, the event's op and addr): connects and
# datagrams by both families, the IPv4 host by its IPv4-mapped name (an
# entry of its own, the address as the call gave it), and binds.
STEPS = (("tcp", "127.0.0.1", PORT, "connect", "127.0.0.1"),
         ("tcp", "::1", PORT, "connect", "::1"),
         ("tcp", "::ffff:127.0.0.1", MAPPED_PORT, "connect", "127.0.0.1"),
         ("udp", "127.0.0.1", PORT, "sendmsg", "127.0.0.1"),
         ("udp", "::1", PORT, "sendmsg", "::1"),
         ("bind", "127.0.0.1", BIND_PORT, "bind", "127.0.0.1"),
         ("bind", "::1", BIND_PORT, "bind", "::1"))


class Sandbox:
    """A fresh cgroup with the driver in it (on the first CPU this test may
    use, if one_cpu), governed by `attach` with prof."""
    n = 0

    def __init__(self, prof, one_cpu=False, cg=None, event_rate=20):
        Sandbox.n += 1
        self.event_rate = event_rate
        self.cg = cg or make_cgroup("bwtest-nc%d-%d" % (os.getpid(), Sandbox.n))
        self.agents = []
        pin = "taskset -c %d " % min(os.sched_getaffinity(0)) if one_cpu else ""
        # The CPU is set after the move: a cpuset may reset it (test_lifecycle.hammer).
        self.drv = subprocess.Popen(
            ["sh", "-c", 'echo $$ > %s/cgroup.procs && exec %s"$0" "$@"' % (self.cg, pin),
             PY, DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.replace(prof, first=True)

    def log(self):
        return "%s/nc-%s-%d.log" % (S, os.path.basename(self.cg), len(self.agents))

    def replace(self, prof, first=False):
        """Govern the cgroup with prof (attach --replace after the first)."""
        log = self.log()
        agent = attach(self.cg, prof, log, replace=not first, event_rate=self.event_rate)
        if not first:
            check("replaced the profile of policy slot" in read(log),
                  "the new agent took the cgroup over:\n" + read(log))
            check_eq(self.agents[-1].wait(timeout=30), 0, "exit status of the replaced agent")
        self.agents.append(agent)
        self.current_log = log

    def ask(self, line):
        """One command to the driver; its answer (the last line), the '#' lines before it."""
        self.drv.stdin.write(line + "\n")
        self.drv.stdin.flush()
        notes = []
        while True:
            out = self.drv.stdout.readline()
            if not out:
                raise Failure("the driver ended on %r (rc %r)" % (line, self.drv.wait()))
            if out.startswith("#"):
                notes.append(out[1:].strip())
                continue
            return out.strip(), notes

    def close(self):
        if self.drv.poll() is None:
            self.drv.kill()
            self.drv.wait()
        for ag in self.agents:
            stop(ag)
        remove_cgroup(self.cg)


ALLOW = OPEN + "default deny net\nallow net connect tcp localhost:%d\n" \
    "allow net connect tcp localhost:%d\nallow net connect udp localhost:%d\n" \
    "allow net bind tcp localhost:%d\n" % (PORT, MAPPED_PORT, PORT, BIND_PORT)
# Rules, but none for PORT: a profile that forbids it by its default.
FORBID = OPEN + "default deny net\nallow net connect tcp localhost:%d\n" \
    "allow net connect udp localhost:%d\n" % (PORT + 1, PORT + 1)
PERMISSIVE = OPEN + "default allow net\n"


def test_kept_connect_after_the_profile_is_replaced():
    """TCP connects, UDP datagrams and binds on 127.0.0.1 and ::1 (a connect
    by the IPv4-mapped name too), allowed, fifty times each, until their
    verdicts are kept; `attach --replace` then puts a profile in force that
    forbids them: the next of each is refused (EPERM), one deny event naming
    each. The control replaces the profile with a permissive one: each gets
    through."""
    srv = Servers([PORT, MAPPED_PORT])
    try:
        for forbid in (True, False):
            # One CPU: the table is per CPU, the next call must meet the same one.
            sb = Sandbox(profile(ALLOW, name="allow"), one_cpu=True)
            try:
                for kind, addr, port, _, _ in STEPS:
                    out, notes = sb.ask("%s %s %d 50" % (kind, addr, port))
                    check_eq((out, notes), ("OK", ["50 of 50 got through"]),
                             "%s to %s:%d under the allowing profile" % (kind, addr, port))
                kept = kept_of(sb.agents[-1].pid)
                check(len(STEPS) <= kept < 50,
                      "%d verdicts kept for %d x 50 allowed calls: they did not go through the "
                      "cache" % (kept, len(STEPS)))
                sb.replace(profile(FORBID if forbid else PERMISSIVE, name="then"))
                for kind, addr, port, op, ev_addr in STEPS:
                    out, _ = sb.ask("%s %s %d 1" % (kind, addr, port))
                    what = "%s to %s:%d after the replace" % (kind, addr, port)
                    if not forbid:
                        if out != "OK":
                            raise ControlBroken("%s, the control: %s" % (what, out))
                        continue
                    if out != "ERR EPERM":
                        raise (RouteOpen if out == "OK" else Failure)(
                            "%s: should be refused with EPERM; got %s" % (what, out))

                    def named():
                        return [e for e in denials(events(sb.current_log))
                                if e.get("op") == op and e.get("addr") == ev_addr and
                                e.get("port") == port]
                    wait_for(lambda: named(), timeout=30, what="the deny event of " + what)
                    check_eq(len(named()), 1, "deny events naming " + what)
                if not forbid:
                    check_eq(denials(events(sb.current_log)), [], "deny events of the control")
            finally:
                sb.close()
    finally:
        srv.close()


def judge(counts, allowed, denied, what):
    """A quiet phase's counts ({port: [through, eperm, other]}): every connect
    to an allowed port got through, none to a denied one did."""
    through = {p: counts.get(str(p), [0, 0, 0]) for p in list(allowed) + list(denied)}
    leaked = {p: c for p, c in through.items() if p in denied and c[0]}
    if leaked:
        raise RouteOpen("%s: connects to denied ports got through (port: [through, eperm, "
                        "other]): %r" % (what, leaked))
    wrong = {p: c for p, c in through.items() if (p in allowed and (c[1] or c[2])) or c[2]}
    check(not wrong, "%s: allowed ports refused, or other errors: %r" % (what, wrong))
    if not sum(through[p][0] for p in allowed):
        raise ControlBroken("%s: no connect to an allowed port got through: %r" % (what, through))
    check(not denied or sum(through[p][1] for p in denied) > 0,
          "%s: no connect to a denied port was made: %r" % (what, through))


def test_replace_race_against_kept_connects():
    """Two threads connect nonstop to two ports while `attach --replace`
    swaps the cgroup between profile A (both allowed) and B (the first
    denied) twenty times. After each swap has returned, a quiet phase:
    under B no connect to the first port gets through, under A each does
    (A's phases are the control: the port is reachable). Connects racing a
    swap may go either way and are not judged."""
    p1, p2 = PORT + 2, PORT + 3
    a = profile(OPEN + "default deny net\nallow net connect tcp localhost:%d\n"
                "allow net connect tcp localhost:%d\n" % (p1, p2), name="a")
    b = profile(OPEN + "default deny net\nallow net connect tcp localhost:%d\n" % p2, name="b")
    sb = Sandbox(a, one_cpu=True)
    try:
        check_eq(sb.ask("hammer 2 %d %d" % (p1, p2))[0], "OK", "the hammer started")
        time.sleep(0.5)
        swaps = int(os.environ.get("BW_SWAPS", "20"))
        for i in range(1, swaps + 1):
            under_b = i % 2 == 1
            sb.replace(b if under_b else a)
            json.loads(sb.ask("phase")[0])  # begun before the swap returned: not judged
            time.sleep(0.2)
            quiet = json.loads(sb.ask("phase")[0])
            if under_b:
                judge(quiet, [p2], [p1], "swap %d, under B" % i)
            else:
                judge(quiet, [p1, p2], [], "swap %d, under A" % i)
        check(kept_of(sb.agents[-1].pid) > 0, "no verdict was kept under the last profile")
        sb.ask("stop")
    finally:
        sb.close()


NC_MUL, NC_BITS, M64 = 0x9e3779b97f4a7c15, 8, (1 << 64) - 1


def nc_index(cgid, port):
    """Where bw_nc_find (bpf/netcache.bpf.h) puts a TCP connect of cgroup
    cgid to 127.0.0.1:port in a CPU's table."""
    addr1 = 0xffff0000 | (0x0100007f << 32)  # ::ffff:127.0.0.1, its second little-endian word
    tag = port | 1 << 16 | 6 << 24  # BW_NC_TAG(port, BW_NOP_CONNECT, IPPROTO_TCP)
    return (((cgid ^ addr1 ^ tag << 32) * NC_MUL) & M64) >> (64 - NC_BITS)


def colliding_cgroup(xid, ports, want=8, tries=3000):
    """A new cgroup whose connects to at least `want` of ports land where
    cgroup xid's do: the cgroup is part of an entry's place, so two
    sandboxes' entries for one endpoint seldom meet unless chosen so."""
    root = cgroup_root()
    for i in range(tries):
        path = os.path.join(root, "bwtest-ncy%d-%d" % (os.getpid(), i))
        os.mkdir(path)
        yid = os.stat(path).st_ino  # a cgroup2 directory's inode number is its id
        if sum(nc_index(xid, p) == nc_index(yid, p) for p in ports) >= want:
            return path
        os.rmdir(path)
    raise Failure("no cgroup in %d whose entries meet cgroup %d's (has bw_nc_find's hash "
                  "changed? nc_index must follow it)" % (tries, xid))


def test_kept_verdicts_of_two_sandboxes_on_one_cpu():
    """Two sandboxes on one CPU, two threads each, connect nonstop to the
    same 1,024 ports of 127.0.0.1: X may reach the first 512, Y the others.
    Their kept verdicts share one CPU's table (256 entries: the ports
    collide, and Y's cgroup is chosen so that some of its entries take the
    very places of X's for the same ports), so an entry that answered for
    another cgroup, another port, or half of another write would let a
    denied port through. Each sandbox's allowed ports are its control."""
    lo, n = 20000, 1024
    ports = list(range(lo, lo + n))
    half = n // 2
    x = profile(OPEN + "default deny net\nallow net connect tcp 127.0.0.1:%d-%d\n"
                % (lo, lo + half - 1), name="x")
    y = profile(OPEN + "default deny net\nallow net connect tcp 127.0.0.1:%d-%d\n"
                % (lo + half, lo + n - 1), name="y")
    boxes = []
    try:
        boxes = [Sandbox(x, one_cpu=True)]
        ycg = colliding_cgroup(os.stat(boxes[0].cg).st_ino, ports)
        boxes.append(Sandbox(y, one_cpu=True, cg=ycg))
        for sb in boxes:
            check_eq(sb.ask("hammer 2 " + " ".join(map(str, ports)))[0], "OK", "hammer")
        for sb in boxes:
            json.loads(sb.ask("phase")[0])
        time.sleep(float(os.environ.get("BW_HAMMER_SECONDS", "4")))
        counts = [json.loads(sb.ask("phase")[0]) for sb in boxes]
        judge(counts[0], ports[:half], ports[half:], "sandbox X")
        judge(counts[1], ports[half:], ports[:half], "sandbox Y")
        for sb in boxes:
            check(kept_of(sb.agents[-1].pid) > 0, "no verdict was kept")
            sb.ask("stop")
        total = sum(sum(c[0] + c[1] for c in cs.values()) for cs in counts)
        print("  %d connects judged" % total)
    finally:
        for sb in boxes:
            sb.close()


class Receivers:
    """UDP sockets bound to 127.0.0.1:port and [::1]:port outside the
    sandbox: what arrived is counted, by address family."""

    def __init__(self, port):
        self.socks = {}
        for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((addr, port))
            s.setblocking(False)
            self.socks[addr] = s

    def drain(self, replies=0):
        """{address: datagrams received since the last drain}; each answered
        with `replies` datagrams to its sender."""
        time.sleep(0.2)
        got = {}
        for addr, s in self.socks.items():
            got[addr] = 0
            while True:
                try:
                    _, sender = s.recvfrom(64)
                    got[addr] += 1
                except BlockingIOError:
                    break
                for _ in range(replies):
                    s.sendto(b"r", sender)
        return got

    def close(self):
        for s in self.socks.values():
            s.close()


UDP_PORT = PORT + 6
# Connected sockets: by IPv4, by IPv6, and an IPv6 socket by the IPv4-mapped
# name (it reaches the IPv4 receiver; the event names 127.0.0.1).
CONNECTED = (("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("::ffff:127.0.0.1", "127.0.0.1"))
# Every way a datagram leaves a connected socket without an address; on
# kernels before 6.5 sendfile and splice go through UDP's sendpage.
WAYS = ("send", "write", "sendmsg", "sendmmsg", "sendfile", "splice")
# And the ways one from its peer is read.
RECV_WAYS = ("recv", "read", "recvmsg", "recvmmsg")


def test_connected_udp_after_the_profile_is_replaced():
    """UDP sockets connected while the profile allowed their peer (IPv4,
    IPv6, IPv4-mapped) send by every way without an address (send, write,
    sendmsg, sendmmsg, sendfile, splice) and read the peer's answers (recv,
    read, recvmsg, recvmmsg); then `attach --replace` puts a profile in force that
    denies the peer: each way is refused with EPERM, nothing arrives, the
    answers still waiting are not read, and one deny event (op sendmsg or
    recvmsg) names the peer per refusal. The control replaces the profile
    with a permissive one: every datagram arrives, every answer is read.
    Needs BPF LSM (no cgroup program sees these datagrams)."""
    if not lsm_active():
        skip("connected datagrams are decided by BPF LSM (socket_sendmsg)")
    allow = profile(OPEN + "default deny net\nallow net connect udp localhost:%d\n" % UDP_PORT,
                    name="allow")
    forbid = profile(OPEN + "default deny net\nallow net connect udp localhost:%d\n"
                     % (UDP_PORT + 1), name="forbid")
    rx = Receivers(UDP_PORT)
    try:
        for then in (forbid, profile(PERMISSIVE, name="permissive")):
            sb = Sandbox(allow, event_rate=1000)
            try:
                for addr, _ in CONNECTED:
                    check_eq(sb.ask("uconnect %s %d" % (addr, UDP_PORT))[0], "OK",
                             "connect of a UDP socket to %s under the allowing profile" % addr)
                for k, (addr, to) in enumerate(CONNECTED, 1):
                    for way in WAYS:
                        check_eq(sb.ask("usend %d %s" % (k, way))[0], "OK",
                                 "%s to %s under the allowing profile" % (way, addr))
                    # Answers enough for each way to read one now and one after the replace.
                    check_eq(rx.drain(replies=2)[to], len(WAYS), "datagrams from the socket "
                             "connected to %s that arrived under the allowing profile" % addr)
                    for way in RECV_WAYS:
                        check_eq(sb.ask("urecv %d %s" % (k, way))[0], "OK",
                                 "%s of an answer from %s under the allowing profile"
                                 % (way, addr))
                sb.replace(then)
                for k, (addr, to) in enumerate(CONNECTED, 1):
                    outs = {way: sb.ask("usend %d %s" % (k, way))[0] for way in WAYS}
                    outs.update({"r-" + way: sb.ask("urecv %d %s" % (k, way))[0]
                                 for way in RECV_WAYS})
                    arrived = rx.drain()[to]
                    what = "datagrams on the socket connected to %s after the replace" % addr
                    every = WAYS + tuple("r-" + w for w in RECV_WAYS)
                    if then != forbid:
                        if outs != {w: "OK" for w in every} or arrived != len(WAYS):
                            raise ControlBroken("%s, the control: %r, %d arrived"
                                                % (what, outs, arrived))
                        continue
                    if arrived or "OK" in outs.values():
                        raise RouteOpen("%s: %d arrived; the calls said %r" % (what, arrived, outs))
                    check_eq(outs, {w: "ERR EPERM" for w in every}, what)
                if then == forbid:
                    def named(op, to):
                        return [e for e in denials(events(sb.current_log))
                                if e.get("op") == op and e.get("addr") == to and
                                e.get("port") == UDP_PORT and e.get("proto") == "udp"]
                    for op, ways in (("sendmsg", WAYS), ("recvmsg", RECV_WAYS)):
                        for to in ("127.0.0.1", "::1"):
                            n = len(ways) * sum(1 for _, t in CONNECTED if t == to)
                            wait_for(lambda: len(named(op, to)) >= n, timeout=30,
                                     what="the %s deny events naming %s" % (op, to))
                            check_eq(len(named(op, to)), n, "%s deny events naming %s" % (op, to))
                else:
                    check_eq(denials(events(sb.current_log)), [], "deny events of the control")
            finally:
                sb.close()
    finally:
        rx.close()


class TcpPeers:
    """TCP listeners on 127.0.0.1 and ::1 at each port: each connection gets
    PUSH bytes at once (so that a receive always finds one) and has what it
    sends counted, by the client's port."""
    PUSH = 4096

    def __init__(self, ports):
        self.lock = threading.Lock()
        self.got = {}
        self.socks = []
        for addr in ("127.0.0.1", "::1"):
            for p in ports:
                s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((addr, p))
                s.listen(16)
                self.socks.append(s)
                threading.Thread(target=self.accept, args=(s,), daemon=True).start()

    def accept(self, s):
        while True:
            try:
                c, peer = s.accept()
            except OSError:
                return
            self.socks.append(c)
            threading.Thread(target=self.serve, args=(c, peer[1]), daemon=True).start()

    def serve(self, c, port):
        try:
            c.sendall(b"x" * self.PUSH)
            while True:
                data = c.recv(4096)
                if not data:
                    return
                with self.lock:
                    self.got[port] = self.got.get(port, 0) + len(data)
        except OSError:
            return

    def sent_by(self, port):
        with self.lock:
            return self.got.get(port, 0)

    def close(self):
        for s in self.socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


TCP_PORT = PORT + 8
LISTEN_PORT = PORT + 10
# Connections by IPv4, by IPv6, by an IPv6 socket to the IPv4-mapped name,
# and by MPTCP (decided by the tcp rules): (address, its extra, the event's addr).
TCP_PEERS = (("127.0.0.1", "", "127.0.0.1"), ("::1", "", "::1"),
             ("::ffff:127.0.0.1", "", "127.0.0.1"), ("127.0.0.1", " mptcp", "127.0.0.1"))
TCP_SENDS = ("send", "write", "sendmsg", "sendto", "sendfile", "splice")
TCP_RECVS = ("recv", "read", "recvmsg")


def test_tcp_connection_after_the_profile_is_replaced():
    """TCP connections made while the profile allowed their peer (IPv4, IPv6,
    IPv4-mapped, MPTCP) send by every way (send, write, sendmsg, sendto with
    the peer's address, sendfile, splice) and receive (recv, read, recvmsg;
    TCP_ZEROCOPY_RECEIVE asked); then `attach --replace` puts a profile in
    force that denies the peer: each way is refused with EPERM, nothing
    arrives, and each refusal has its deny event (op sendmsg or recvmsg)
    naming the peer. Listeners bound while allowed, on 127.0.0.1 and on [::]
    (which takes IPv4 too: the new profile allows [::] and denies 0.0.0.0),
    may not accept once their bind is denied (EPERM, op accept). Under the
    same profile a connection to a peer it still allows, a listener whose
    bind it still allows, and a connection the sandbox accepted before (a
    client's, which no connect rule names) keep working. On kernels where
    splice goes through sendpage (bw_peer_splice loaded), a splice from the
    connection is refused too. The control replaces the profile with a
    permissive one: everything gets through. Needs BPF LSM (no cgroup
    program sees a connection's traffic)."""
    if not lsm_active():
        skip("a connection's sends and receives are decided by BPF LSM")
    recvs = TCP_RECVS + (("splice",) if os.path.exists("/sys/fs/bpf/bpfwarden/links/"
                                                         "bw_peer_splice") else ())
    rules = "default deny net\nallow net bind tcp 127.0.0.1:%d\n" % LISTEN_PORT
    allow = profile(OPEN + rules + "allow net connect tcp localhost:%d-%d\n"
                    "allow net bind tcp 127.0.0.1:%d\nallow net bind tcp *:%d\n"
                    % (TCP_PORT, TCP_PORT + 1, LISTEN_PORT + 1, LISTEN_PORT + 2), name="allow")
    forbid = profile(OPEN + rules + "allow net connect tcp localhost:%d\n"
                     "allow net bind tcp [::]:%d\ndeny net bind tcp 0.0.0.0:%d\n"
                     % (TCP_PORT + 1, LISTEN_PORT + 2, LISTEN_PORT + 2), name="forbid")
    # Listeners (number, address, port, whether the forbidding profile allows the bind).
    listeners = ((1, "127.0.0.1", LISTEN_PORT, True), (2, "127.0.0.1", LISTEN_PORT + 1, False),
                 (3, "::", LISTEN_PORT + 2, False))
    inbound = []

    def accepts(sb):
        """A connection from outside to each listener, accepted: {listener: answer}."""
        outs = {}
        for n, addr, port, _ in listeners:
            c = socket.create_connection(("127.0.0.1", port), timeout=10)
            inbound.append(c)
            outs[n] = sb.ask("taccept %d" % n)[0]
        return outs
    peers = TcpPeers([TCP_PORT, TCP_PORT + 1])
    try:
        for then in (forbid, profile(PERMISSIVE, name="permissive")):
            # Every refusal's event is counted: more than the default 20 a second.
            sb = Sandbox(allow, event_rate=1000)
            conns = []  # (conn number, address, the event's addr, port, client port)
            try:
                for n, addr, port, _ in listeners:
                    check_eq(sb.ask("tlisten %s %d" % (addr, port))[0], "OK",
                             "the sandbox's listener %d under the allowing profile" % n)
                for port in (TCP_PORT, TCP_PORT + 1):
                    for addr, extra, to in TCP_PEERS:
                        out, notes = sb.ask("tconnect %s %d%s" % (addr, port, extra))
                        check_eq(out, "OK", "connect%s to %s:%d under the allowing profile"
                                 % (extra, addr, port))
                        conns.append((len(conns) + 1, addr + extra, to, port,
                                      int(notes[0].split()[1])))
                # Numbered after the connections: the driver counts accepted ones with them.
                check_eq(accepts(sb), {n: "OK" for n, _, _, _ in listeners},
                         "accepts under the allowing profile")
                c = socket.create_connection(("127.0.0.1", LISTEN_PORT), timeout=10)
                inbound.append(c)
                c.sendall(b"i" * 16)
                out, notes = sb.ask("taccept 1")
                conns.append((int(notes[0].split()[1]), "accepted", None, LISTEN_PORT, None))

                def ways(k):
                    outs = {w: sb.ask("tsend %d %s" % (k, w))[0] for w in TCP_SENDS}
                    outs.update({"r-" + w: sb.ask("trecv %d %s" % (k, w))[0] for w in recvs})
                    zc = sb.ask("tzc %d" % k)[0]
                    outs["zerocopy"] = "ERR EPERM" if zc == "ERR EPERM" else "OK"
                    return outs
                everything = {w: "OK" for w in TCP_SENDS}
                everything.update({"r-" + w: "OK" for w in recvs})
                everything["zerocopy"] = "OK"
                for k, what, _, port, client in conns:
                    check_eq(ways(k), everything, "connection %d (%s:%d) under the allowing "
                             "profile" % (k, what, port))
                    if client:
                        wait_for(lambda: peers.sent_by(client) == len(TCP_SENDS), timeout=10,
                                 what="the bytes of connection %d at its peer" % k)
                sb.replace(then)
                outs = accepts(sb)
                if then != forbid:
                    if outs != {n: "OK" for n, _, _, _ in listeners}:
                        raise ControlBroken("accepts after the replace, the control: %r" % outs)
                else:
                    if any(outs[n] == "OK" for n, _, _, kept in listeners if not kept):
                        raise RouteOpen("accepts on listeners whose bind the new profile "
                                        "denies: %r" % outs)
                    check_eq(outs, {n: "OK" if kept else "ERR EPERM"
                                    for n, _, _, kept in listeners},
                             "accepts after the replace")
                for k, what, _, port, client in conns:
                    outs = ways(k)
                    desc = "connection %d (%s:%d) after the replace" % (k, what, port)
                    if then != forbid or port != TCP_PORT:
                        if outs != everything:
                            raise (ControlBroken if then != forbid else Failure)(
                                "%s, which the profile allows: %r" % (desc, outs))
                        continue
                    time.sleep(0.2)
                    if "OK" in outs.values() or peers.sent_by(client) != len(TCP_SENDS):
                        raise RouteOpen("%s: %d bytes arrived in all; the ways said %r"
                                        % (desc, peers.sent_by(client), outs))
                    check_eq(outs, {w: "ERR EPERM" for w in everything}, desc)
                found = denials(events(sb.current_log))
                if then != forbid:
                    check_eq(found, [], "deny events of the control")
                    continue
                want = collections.Counter()
                for _, _, to in TCP_PEERS:
                    want[("sendmsg", "tcp", to, TCP_PORT)] += len(TCP_SENDS)
                    want[("recvmsg", "tcp", to, TCP_PORT)] += len(recvs) + 1
                want[("accept", "tcp", "127.0.0.1", LISTEN_PORT + 1)] = 1
                want[("accept", "tcp", "0.0.0.0", LISTEN_PORT + 2)] = 1

                def named():
                    return collections.Counter(
                        (e.get("op"), e.get("proto"), e.get("addr"), e.get("port"))
                        for e in denials(events(sb.current_log)))
                try:
                    wait_for(lambda: sum(named().values()) >= sum(want.values()), timeout=30,
                             what="the deny events")
                except Failure:
                    pass
                check_eq(dict(named()), dict(want), "deny events (op, proto, addr, port)")
            finally:
                sb.close()
                for c in inbound:
                    c.close()
                inbound.clear()
    finally:
        peers.close()

BOUND_PORT = PORT + 14
# Listeners never bound: (family, driver's protocol argument).
UNBOUND = (("4", ""), ("6", ""), ("6", " mptcp"))


def test_listener_that_never_bound():
    """listen(2) on a TCP socket never bound binds it to the wildcard
    address at a port the kernel picks, which no bind program sees. Under a
    profile that allows binding one port only, such a listener (IPv4, IPv6
    taking IPv4 too, MPTCP) is refused (EPERM), one bind event (its address,
    port 0) each, while one bound to the allowed port listens. Under one
    that allows `bind tcp *:0` they listen and accept, until `attach
    --replace` puts the first in force: each accept is refused (EPERM, an
    accept event, port 0). The control (a permissive profile, then): every
    listen and accept gets through. Needs BPF LSM (socket_listen)."""
    if not lsm_active():
        skip("listen(2) is decided by BPF LSM (socket_listen)")
    only = profile(OPEN + "default deny net\nallow net bind tcp 127.0.0.1:%d\n" % BOUND_PORT,
                   name="only")
    any0 = profile(OPEN + "default deny net\nallow net bind tcp *:0\n", name="any0")
    permissive = profile(PERMISSIVE, name="permissive")
    inbound = []

    def listen_all(sb):
        """{listener number: (answer, port)} for each of UNBOUND."""
        outs = {}
        for fam, extra in UNBOUND:
            out, notes = sb.ask("tlisten0 %s%s" % (fam, extra))
            outs[len(outs) + 1] = (out, int(notes[0].split()[1]))
        return outs

    def accept_all(sb, ports):
        outs = {}
        for n, port in ports.items():
            inbound.append(socket.create_connection(("127.0.0.1", port), timeout=10))
            outs[n] = sb.ask("taccept %d" % n)[0]
        return outs

    def named(sb):
        return collections.Counter((e.get("op"), e.get("proto"), e.get("addr"), e.get("port"))
                                   for e in denials(events(sb.current_log)))

    def expect_denials(sb, op):
        """One event of op per listener, named by its wildcard address and port 0."""
        want = {(op, "tcp", "0.0.0.0", 0): 1, (op, "tcp", "::", 0): 2}
        try:
            wait_for(lambda: sum(named(sb).values()) >= 3, timeout=30,
                     what="the %s deny events" % op)
        except Failure:
            pass
        check_eq(dict(named(sb)), want, "deny events (op, proto, addr, port)")
    try:
        # Refused at listen.
        for first in (only, permissive):
            sb = Sandbox(first, event_rate=1000)
            try:
                outs = listen_all(sb)
                check_eq(sb.ask("tlisten 127.0.0.1 %d" % BOUND_PORT)[0], "OK",
                         "a listener bound to the port the profile allows")
                if first == permissive:
                    if any(out != "OK" for out, _ in outs.values()):
                        raise ControlBroken("listeners never bound, the control: %r" % outs)
                    check_eq(accept_all(sb, {n: p for n, (_, p) in outs.items()}),
                             {n: "OK" for n in outs}, "accepts of the control")
                    check_eq(dict(named(sb)), {}, "deny events of the control")
                    continue
                if any(out == "OK" for out, _ in outs.values()):
                    raise RouteOpen("listeners never bound listen under a profile that allows "
                                    "binding one port: %r" % outs)
                check_eq({n: out for n, (out, _) in outs.items()},
                         {n: "ERR EPERM" for n in outs}, "listeners never bound")
                expect_denials(sb, "bind")
            finally:
                sb.close()
        # Allowed at listen, decided again at accept.
        for then in (only, permissive):
            sb = Sandbox(any0, event_rate=1000)
            try:
                outs = listen_all(sb)
                check_eq({n: out for n, (out, _) in outs.items()}, {n: "OK" for n in outs},
                         "listeners never bound under a profile that allows `bind tcp *:0`")
                ports = {n: p for n, (_, p) in outs.items()}
                check_eq(accept_all(sb, ports), {n: "OK" for n in outs},
                         "accepts under a profile that allows `bind tcp *:0`")
                sb.replace(then)
                got = accept_all(sb, ports)
                if then == permissive:
                    if got != {n: "OK" for n in outs}:
                        raise ControlBroken("accepts after the replace, the control: %r" % got)
                    check_eq(dict(named(sb)), {}, "deny events of the control")
                    continue
                if "OK" in got.values():
                    raise RouteOpen("accepts on listeners never bound after a replace that "
                                    "denies their bind: %r" % got)
                check_eq(got, {n: "ERR EPERM" for n in outs}, "accepts after the replace")
                expect_denials(sb, "accept")
            finally:
                sb.close()
    finally:
        for c in inbound:
            c.close()


def test_bound_udp_after_the_profile_is_replaced():
    """UDP sockets bound while the profile allowed their endpoint
    (127.0.0.1, [::] which takes IPv4 too, and UDP-Lite) read datagrams
    sent to them (recv, read, recvmsg, recvmmsg); then `attach --replace` puts a
    profile in force that denies those binds ([::] allowed as such, 0.0.0.0
    denied): each receive is refused (EPERM), with one bind event naming
    the endpoint per refusal, while a socket whose
    bind it still allows keeps reading. The control replaces the profile
    with a permissive one: every datagram is read. Needs BPF LSM (no cgroup
    program sees a receive)."""
    if not lsm_active():
        skip("a bound socket's receives are decided by BPF LSM (socket_recvmsg)")
    p = BOUND_PORT + 1
    # (socket number, address, port, driver's protocol argument, still allowed)
    socks = ((1, "127.0.0.1", p, "", True), (2, "127.0.0.1", p + 1, "", False),
             (3, "::", p + 2, "", False), (4, "127.0.0.1", p + 3, " udplite", False))
    allow = profile(OPEN + "default deny net\nallow net bind udp 127.0.0.1:%d-%d\n"
                    "allow net bind udp *:%d\n" % (p, p + 3, p + 2), name="allow")
    forbid = profile(OPEN + "default deny net\nallow net bind udp 127.0.0.1:%d\n"
                     "allow net bind udp [::]:%d\ndeny net bind udp 0.0.0.0:%d\n"
                     % (p, p + 2, p + 2), name="forbid")
    senders = {"": socket.socket(socket.AF_INET, socket.SOCK_DGRAM),
               " udplite": socket.socket(socket.AF_INET, socket.SOCK_DGRAM, 136)}
    try:
        for then in (forbid, profile(PERMISSIVE, name="permissive")):
            sb = Sandbox(allow, event_rate=1000)
            try:
                for n, addr, port, extra, _ in socks:
                    check_eq(sb.ask("ubind %s %d%s" % (addr, port, extra))[0], "OK",
                             "bind of UDP socket %d to %s:%d under the allowing profile"
                             % (n, addr, port))
                    # One for each way now, one for each after the replace.
                    for _ in range(2 * len(RECV_WAYS)):
                        senders[extra].sendto(b"d", ("127.0.0.1", port))
                time.sleep(0.2)
                for n, addr, port, _, _ in socks:
                    for way in RECV_WAYS:
                        check_eq(sb.ask("urecv %d %s" % (n, way))[0], "OK",
                                 "%s on socket %d (%s:%d) under the allowing profile"
                                 % (way, n, addr, port))
                sb.replace(then)
                want = collections.Counter()
                for n, addr, port, _, kept in socks:
                    outs = {way: sb.ask("urecv %d %s" % (n, way))[0] for way in RECV_WAYS}
                    desc = "receives on socket %d (%s:%d) after the replace" % (n, addr, port)
                    if then != forbid or kept:
                        if outs != {w: "OK" for w in RECV_WAYS}:
                            raise (ControlBroken if then != forbid else Failure)(
                                "%s, which the profile allows: %r" % (desc, outs))
                        continue
                    if "OK" in outs.values():
                        raise RouteOpen("%s, whose bind the profile denies: %r" % (desc, outs))
                    check_eq(outs, {w: "ERR EPERM" for w in RECV_WAYS}, desc)
                    want[("bind", "udp", "0.0.0.0" if addr == "::" else addr, port)] += \
                        len(RECV_WAYS)

                def named():
                    return collections.Counter(
                        (e.get("op"), e.get("proto"), e.get("addr"), e.get("port"))
                        for e in denials(events(sb.current_log)))
                if then == forbid:
                    try:
                        wait_for(lambda: sum(named().values()) >= sum(want.values()), timeout=30,
                                 what="the bind deny events")
                    except Failure:
                        pass
                check_eq(dict(named()), dict(want), "deny events (op, proto, addr, port)")
            finally:
                sb.close()
    finally:
        for s in senders.values():
            s.close()


TESTS = [
    test_kept_connect_after_the_profile_is_replaced,
    test_connected_udp_after_the_profile_is_replaced,
    test_tcp_connection_after_the_profile_is_replaced,
    test_listener_that_never_bound,
    test_bound_udp_after_the_profile_is_replaced,
    test_replace_race_against_kept_connects,
    test_kept_verdicts_of_two_sandboxes_on_one_cpu,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
