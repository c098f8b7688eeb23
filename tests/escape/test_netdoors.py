#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every network door: protocols the rules did not see, the local host by
another of its addresses, a unix socket's name spelled another way.

Each route runs tests/escape/netdoor.py twice (escape.py): under a profile
that forbids what it reaches (refused, errno asserted, exactly one deny event
naming the real object) and under a permissive one (it gets through). The
network parts that cgroup programs enforce run on the build host too (`make
hosttest`); the parts that need BPF LSM (other socket families, unix bind)
say "skip" there.
"""
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading

from escape import (need_modules, BUILD, SCRATCH, Failure, check, check_eq, denials, lsm_active,
                    main, profile, run, skip)
from bwtest import Servers

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netdoor.py")
PY = "/usr/bin/python3"
OPEN = "default allow file\ndefault allow exec\n"
PORT = 19390
# `net admin`: root in the sandbox adds addresses to lo in some routes.
ALLOW_ALL = OPEN + "default allow net\nallow net admin\n"
PING_RANGE = "/proc/sys/net/ipv4/ping_group_range"


def door(prof, *steps):
    return run(prof, [PY, DRIVER] + list(steps))


def outcomes(r, n, what):
    got = [l for l in r.stdout.splitlines() if l.startswith(("OK", "ERR"))]
    check(len(got) == n, "%s: %d outcomes for %d routes: %r (rc %d, stderr %s)"
          % (what, len(got), n, got, r.rc, r.stderr.strip()))
    return got


def routes(forbid, cases, what, between=None):
    """Each case is (steps, match, name): steps end in one attempt; match is
    the fields of the one deny event that must name its object. All routes
    run in one sandbox under forbid, then in one under a permissive profile
    (the VMs are slow: two runs per test, not two per route). Under forbid
    each attempt fails with EPERM and exactly one deny event matches it;
    under the control each gets through and nothing is denied. between()
    runs after the forbidding run (to check and undo what it changed)."""
    steps = [s for c in cases for s in c[0]]
    r = door(forbid, *steps)
    got = outcomes(r, len(cases), what)
    d = denials(r.events)
    for (_, match, name), out in zip(cases, got):
        check(out == "ERR EPERM", "%s, %s: the attempt should fail with EPERM; it said %s "
              "(stderr %s)" % (what, name, out, r.stderr.strip()))
        named = [e for e in d if all(e.get(k) == v for k, v in match.items())]
        check(len(named) == 1, "%s, %s: exactly one deny event should match %r; deny events: %r"
              % (what, name, match, d))
    if between:
        between()
    c = door(profile(ALLOW_ALL), *steps)
    got = outcomes(c, len(cases), what + " (control)")
    bad = [name for (_, _, name), out in zip(cases, got) if not out.startswith("OK")]
    check(not bad and not denials(c.events), "%s: the control under a permissive profile must "
          "get through (a route that no longer works is a broken test): %r failed (%r), deny "
          "events %r" % (what, bad, got, denials(c.events)))
    return r


@contextlib.contextmanager
def ping_allowed():
    """Ping sockets for every group (the default "1 0" lets nobody make one)."""
    with open(PING_RANGE) as f:
        old = f.read().strip()
    with open(PING_RANGE, "w") as f:
        f.write("0 2147483647\n")
    try:
        yield
    finally:
        with open(PING_RANGE, "w") as f:
            f.write(old.replace("\t", " ") + "\n")


# An interface for the guest, which has lo only (test_local_host_by_its_interface_addresses).
DUMMY, DUMMY4, DUMMY6 = "bwdummy0", "10.213.7.1", "fd00:bd::1"


def ip(*args, check_rc=True):
    r = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    if check_rc and r.returncode:
        raise Failure("ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r


def host_addresses():
    """The host's addresses on interfaces other than lo (global and link-local scope)."""
    out = []
    for link in json.loads(ip("-j", "addr", "show").stdout):
        if link.get("ifname") == "lo":
            continue
        for a in link.get("addr_info", []):
            if a.get("tentative") or a.get("dadfailed"):
                continue
            if a["family"] == "inet6" and a.get("scope") == "link":
                continue  # needs a scope id, which the rules do not see; the others suffice
            out.append(a["local"])
    return out


# -- UDP-Lite ---------------------------------------------------------------

def udplite_routes(kind, op):
    prof = profile(OPEN + "default allow net\ndeny net connect udp localhost:%d\n" % PORT)
    routes(prof, [(["%s:%s:%d" % (kind, addr, PORT)],
                   {"op": op, "proto": "udp", "addr": addr.strip("[]"), "port": PORT}, addr)
                  for addr in ("127.0.0.1", "[::1]")], kind)


def test_udplite_datagram_meets_udp_rules():
    """UDP-Lite is UDP with partial checksums: `udp` rules decide each
    unconnected datagram (the cgroup sendmsg programs)."""
    udplite_routes("udplite", "sendmsg")


def test_udplite_connect_meets_udp_rules():
    """A connected UDP-Lite socket: no cgroup program sees its connect (the
    protocol has no pre_connect hook), the LSM socket_connect program decides
    it by the `udp` rules."""
    if not lsm_active():
        skip("UDP-Lite's connect is decided by a BPF LSM hook; this kernel has no BPF LSM")
    udplite_routes("udpliteconn", "connect")


# -- protocols no rule names ------------------------------------------------

DENY_NET = OPEN + "default deny net\nallow net connect tcp *:*\nallow net connect udp *:*\n"


def test_ping_socket_unconnected_sendto():
    """An ICMP echo from an unconnected ping socket reaches any peer; no
    address rule names ICMP, so `net raw` (here the net default) decides
    the socket itself, and `allow net raw` lets it through."""
    with ping_allowed():
        routes(profile(DENY_NET), [
            (["ping:127.0.0.1"], {"op": "socket", "family": "ipv4", "socket_type": "dgram",
                                  "protocol": 1}, "ICMP"),
            (["ping:[::1]"], {"op": "socket", "family": "ipv6", "socket_type": "dgram",
                              "protocol": 58}, "ICMPv6")], "ping")
        r = door(profile(DENY_NET + "allow net raw\n"), "ping:127.0.0.1")
        check_eq(r.stdout.split(), ["OK"], "ping under allow net raw (%s)" % r.stderr.strip())


def test_sctp_sendto():
    """SCTP's sendto sets up an association no connect program sees: the
    socket is decided when it is made."""
    try:
        socket.socket(socket.AF_INET, socket.SOCK_SEQPACKET, 132).close()
    except OSError as e:
        if not os.environ.get("BW_VM_KERNEL"):
            skip("this kernel has no SCTP (%s): the sctp module is not loaded" % e.strerror)
        need_modules("sctp")
    routes(profile(DENY_NET), [(["sctp:127.0.0.1:%d" % PORT],
                                {"op": "socket", "family": "ipv4", "protocol": 132}, "SCTP")],
           "sctp sendto")


def test_other_socket_families():
    """A family with no rules of its own (AF_XDP, AF_VSOCK...) is decided
    like a packet socket: `net raw`, else the net default."""
    if not lsm_active():
        skip("other families are refused by the BPF LSM socket_create hook; this kernel has "
             "no BPF LSM")
    cases = []
    for name, af, kind in (("xdp", 44, socket.SOCK_RAW), ("vsock", 40, socket.SOCK_STREAM)):
        try:
            socket.socket(af, kind, 0).close()
        except OSError:
            continue
        cases.append((["family:" + name], {"op": "socket", "family": name}, name))
    if not cases:
        skip("this kernel makes neither AF_XDP nor AF_VSOCK sockets")
    routes(profile(DENY_NET), cases, "other families")


# -- the local host by another address --------------------------------------

LOCAL4, LOCAL6 = "198.51.100.77", "fd00:b0f::77"


def remove_added():
    ip("addr", "del", LOCAL4 + "/32", "dev", "lo", check_rc=False)
    ip("addr", "del", LOCAL6 + "/128", "dev", "lo", check_rc=False)


def bracket(a):
    return "[%s]" % a if ":" in a else a


FORBID_LOCAL = OPEN + "default allow net\nallow net admin\n" \
    "deny net connect tcp localhost:%d\ndeny net connect udp localhost:%d\n" % (PORT, PORT)


def test_local_host_by_its_interface_addresses():
    """`localhost` rules cover every address of the host: its addresses on
    other interfaces reach the same listener, and each is refused, its event
    naming the address used. (127.0.0.2, ::1, ::ffff:127.0.0.1, 0.0.0.0 and
    :: are in tests/integration/test_net.py.)"""
    addrs = host_addresses()
    made = False
    if not addrs and os.environ.get("BW_VM_KERNEL"):
        # The guest has lo only: an interface of its own, as a host has eth0.
        need_modules("dummy")
        ip("link", "add", DUMMY, "type", "dummy")
        made = True
    try:
        if made:
            ip("addr", "add", DUMMY4 + "/24", "dev", DUMMY)
            ip("-6", "addr", "add", DUMMY6 + "/64", "dev", DUMMY, "nodad")
            ip("link", "set", DUMMY, "up")
            addrs = host_addresses()
            check_eq(sorted(addrs), sorted([DUMMY4, DUMMY6]), "the dummy interface's addresses")
        if not addrs:
            skip("this machine has no address on an interface other than lo (the address "
                 "added in the sandbox is the next test)")
        srv = Servers([PORT], ("0.0.0.0", "::"))
        try:
            routes(profile(FORBID_LOCAL),
                   [(["tcp:%s:%d" % (bracket(a), PORT)],
                     {"op": "connect", "addr": a, "port": PORT}, a) for a in addrs],
                   "the host's addresses")
        finally:
            srv.close()
    finally:
        if made:
            ip("link", "del", DUMMY, check_rc=False)


def test_local_host_by_an_address_added_in_the_sandbox():
    """Root in the sandbox adds addresses to lo, then connects through them:
    the kernel's address lists are read at each decision, so a new address
    is the local host from the moment it exists, and stops being it when it
    is gone."""
    srv = Servers([PORT], ("0.0.0.0", "::"))
    remove_added()
    try:
        cases = [(["addaddr:" + spec, "tcp:%s:%d" % (bracket(a), PORT)],
                  {"op": "connect", "addr": a, "port": PORT}, a)
                 for spec, a in ((LOCAL4 + "/32", LOCAL4), (LOCAL6 + "/128", LOCAL6))]
        forbid = profile(FORBID_LOCAL)
        routes(forbid, cases, "an address added in the sandbox", between=remove_added)
        remove_added()
        # Gone: a datagram to them is no longer the local host's.
        r = door(forbid, "udp:%s:%d" % (LOCAL4, PORT), "udp:[%s]:%d" % (LOCAL6, PORT))
        check(not [l for l in r.stdout.split("\n") if l == "ERR EPERM"] and
              not denials(r.events), "removed, they are not the local host any more: %r, "
              "events %r" % (r.stdout, denials(r.events)))
        # An allow for the local host lets its other addresses through a default deny.
        allow = profile(OPEN + "default deny net\nallow net admin\n"
                        "allow net connect tcp localhost:%d\n" % PORT)
        r = door(allow, "addaddr:" + LOCAL4 + "/32", "tcp:%s:%d" % (LOCAL4, PORT))
        check_eq(r.stdout.split(), ["OK"], "allowed local host by another address (%s, %r)"
                 % (r.stderr.strip(), denials(r.events)))
    finally:
        remove_added()
        srv.close()


def test_local_host_by_an_address_it_gets_after_datagrams_to_it():
    """Datagrams to an address that is not the host's pass the rules (sent,
    or unroutable), five times, on one CPU (the network verdict cache is
    per CPU); then the address is
    added to lo, and the next datagram to it is the local host's, refused
    by the `localhost` deny rule: a verdict that depended on the host's
    addresses is never kept. The control sends all six under a permissive
    profile."""
    remove_added()
    cpu = str(min(os.sched_getaffinity(0)))
    try:
        for forbid in (True, False):
            steps = ["udp:%s:%d" % (LOCAL4, PORT)] * 5 + ["addaddr:%s/32" % LOCAL4,
                                                          "udp:%s:%d" % (LOCAL4, PORT)]
            prof = profile(FORBID_LOCAL if forbid else ALLOW_ALL)
            r = run(prof, ["taskset", "-c", cpu, PY, DRIVER] + steps)
            remove_added()
            got = outcomes(r, 6, "datagrams before and after the address is added")
            # Past the rules, a host without a route to it (the guest) says ENETUNREACH.
            check(all(g in ("OK", "ERR ENETUNREACH") for g in got[:5]),
                  "datagrams to %s before it is the host's should pass the rules: %r (stderr %s)"
                  % (LOCAL4, got, r.stderr.strip()))
            if not forbid:
                check(got[5] == "OK" and not denials(r.events), "the control must get through "
                      "(%r, deny events %r)" % (got, denials(r.events)))
                continue
            check_eq(got[5], "ERR EPERM", "the datagram once %s is the host's" % LOCAL4)
            named = [e for e in denials(r.events) if e.get("addr") == LOCAL4]
            check_eq(len(named), 1, "deny events naming %s: %r" % (LOCAL4, denials(r.events)))
    finally:
        remove_added()


def test_dual_stack_bind_is_an_ipv4_bind_too():
    """A TCP socket bound to [::] accepts IPv4 connections too (the kernel's
    default, net.ipv6.bindv6only=0), so `deny net bind tcp 0.0.0.0:P` refuses
    it: the bind is decided as [::] and as 0.0.0.0. The control's listener
    takes an IPv4 connection."""
    port = PORT + 7
    forbid = profile(OPEN + "default allow net\ndeny net bind tcp 0.0.0.0:%d\n" % port)
    routes(forbid, [(["tcpbind:[::]:%d" % port],
                     {"op": "bind", "family": "ipv4", "addr": "0.0.0.0", "port": port},
                     "[::] bind")], "dual-stack bind")


# -- a unix socket's name ---------------------------------------------------

def test_unix_bind_every_spelling():
    """bind(2) is decided on the socket file the kernel makes, so a relative
    name, "//", "/./", ".." and a symlinked directory meet the rule of the
    file. Each spelling binds its own file, denied by its own rule."""
    if not lsm_active():
        skip("unix rules need BPF LSM; this kernel has none")
    d = os.path.realpath(SCRATCH)
    os.makedirs(d + "/sock", exist_ok=True)
    os.makedirs(d + "/other", exist_ok=True)
    os.symlink(d + "/sock", d + "/link")
    spellings = [
        (lambda n: ["cd:" + d + "/sock", "unixbind:" + n], "relative to the cwd"),
        (lambda n: ["cd:" + d, "unixbind:sock/" + n], "relative, in a subdirectory"),
        (lambda n: ["unixbind:/" + d + "/sock/" + n], "a doubled slash in front"),
        (lambda n: ["unixbind:" + d + "//sock/" + n], "a doubled slash inside"),
        (lambda n: ["unixbind:" + d + "/./sock/" + n], "/./"),
        (lambda n: ["unixbind:" + d + "/other/../sock/" + n], ".."),
        (lambda n: ["unixbind:" + d + "/link/" + n], "a symlinked directory"),
        (lambda n: ["cd:" + d + "/other", "unixbind:../link/" + n], "relative, .. and a link"),
        (lambda n: ["unixbind:" + d + "/sock/" + n], "as the rule writes it"),
    ]
    targets = [d + "/sock/s%d.sock" % i for i in range(len(spellings))]
    forbid = profile(OPEN + "default allow net\n" +
                     "".join("deny net bind unix %s\n" % t for t in targets))
    cases = [(f(os.path.basename(t)), {"op": "bind", "unix": t}, what)
             for (f, what), t in zip(spellings, targets)]

    def none_made():
        made = [t for t in targets if os.path.exists(t)]
        check(not made, "socket files made under the forbidding profile: %r" % made)

    routes(forbid, cases, "unix bind", between=none_made)
    missing = [t for t in targets if not os.path.exists(t)]
    check(not missing, "the control made no socket file at %r" % missing)


def unix_server(path, stop):
    """Accept connections on a unix stream socket at path, each told "hello"."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(8)
    srv.settimeout(0.2)

    def serve():
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            c.sendall(b"hello\n")
            c.close()
        srv.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def test_unix_socket_renamed_away_from_its_rule():
    """`deny net connect unix PATH` names a server's socket; its socket file
    is renamed, then the directory above it: connecting by the new names
    reaches the same server. Decided by the path it was bound at too, which
    no rename changes."""
    if not lsm_active():
        skip("unix rules need BPF LSM; this kernel has none")
    d = os.path.realpath(SCRATCH)
    os.makedirs(d + "/run")
    bound = d + "/run/x.sock"
    stop = threading.Event()
    t = unix_server(bound, stop)
    try:
        os.rename(bound, d + "/run/y.sock")
        os.rename(d + "/run", d + "/moved")
        mountop = os.path.join(BUILD, "tests", "mountop")
        route = [mountop, "?connect", d + "/moved/y.sock"]
        forbid = profile(OPEN + "default allow net\ndeny net connect unix %s\n" % bound)
        r = run(forbid, route)
        check_eq(r.stdout.split("\n")[0], "ERR EPERM",
                 "connect by the renamed names (stderr %s)" % r.stderr.strip())
        named = [e for e in denials(r.events) if e.get("unix") == bound]
        check(len(named) == 1, "one deny event naming %s: %r" % (bound, denials(r.events)))
        r = run(profile(ALLOW_ALL), route)
        check_eq(r.stdout.split("\n")[0], "OK hello", "the control reaches the server")
        check(not denials(r.events), "the control: no denial: %r" % denials(r.events))
    finally:
        stop.set()
        t.join()


def relative_unix_server(directory, name, stop):
    """unix_server bound by a relative name (its cwd is directory): the
    address the kernel keeps says nothing of where the socket file is."""
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        return unix_server(name, stop)
    finally:
        os.chdir(cwd)


def test_unix_socket_bound_by_a_relative_name_renamed():
    """`deny net connect unix` names two servers' sockets, each bound by a
    relative name: one before the profile was loaded, one after (made at
    the rule's place while the sandbox runs). The sandbox renames both
    socket files and then their directory, and connects by the new names.
    Neither the names now nor the names given to bind say where they were:
    the socket files are pinned (at load, and by the kernel when the second
    is made at the rule's place), EPERM for both, one event each naming the
    socket by its name now and the rule that pinned it. The control reaches
    both servers."""
    if not lsm_active():
        skip("unix rules need BPF LSM; this kernel has none")

    def attempt(d, rules):
        os.makedirs(d + "/run")
        stop = threading.Event()
        threads = [relative_unix_server(d + "/run", "early.sock", stop)]

        def late():
            for _ in range(1200):
                if os.path.exists(d + "/ready") or stop.is_set():
                    break
                stop.wait(0.05)
            threads.append(relative_unix_server(d + "/run", "late.sock", stop))
        waiter = threading.Thread(target=late, daemon=True)
        waiter.start()
        mountop = os.path.join(BUILD, "tests", "mountop")
        script = ("touch {d}/ready; i=0; while [ ! -S {d}/run/late.sock ] && [ $i -lt 600 ]; "
                  "do sleep 0.05; i=$((i+1)); done; mv {d}/run/early.sock {d}/run/e2.sock && "
                  "mv {d}/run/late.sock {d}/run/l2.sock && mv {d}/run {d}/moved && "
                  "{m} ?connect {d}/moved/e2.sock \\; ?connect {d}/moved/l2.sock"
                  ).format(d=d, m=mountop)
        try:
            return run(profile(OPEN + "default allow net\n" + rules), ["sh", "-c", script])
        finally:
            stop.set()
            waiter.join()
            for t in threads:
                t.join()

    base = os.path.realpath(SCRATCH)
    d = base + "/relative"
    rules = ("deny net connect unix %s/run/early.sock\ndeny net connect unix %s/run/late.sock\n"
             % (d, d))
    r = attempt(d, rules)
    check_eq([l for l in r.stdout.split("\n") if l], ["ERR EPERM", "ERR EPERM"],
             "connect by the renamed names (stderr %s)" % r.stderr.strip())
    for now, bound in (("/moved/e2.sock", "/run/early.sock"), ("/moved/l2.sock", "/run/late.sock")):
        named = [e for e in denials(r.events) if e.get("unix") == d + now]
        check(len(named) == 1, "one deny event naming %s: %r" % (d + now, denials(r.events)))
        where, _, line = named[0].get("rule", "").rpartition(":")
        with open(where) as f:
            said = f.read().split("\n")[int(line) - 1]
        check_eq(said, "deny net connect unix " + d + bound, now + ": the rule in the event")
        check_eq(named[0].get("by_inode"), True, now + ": decided by the socket file's pin")
    r = attempt(base + "/relative-control", "")
    check_eq([l for l in r.stdout.split("\n") if l], ["OK hello", "OK hello"],
             "the control reaches both servers (stderr %s)" % r.stderr.strip())
    check(not denials(r.events), "the control: no denial: %r" % denials(r.events))


def test_unix_subtree_rules():
    """`deny net connect unix D/svc/**` with `allow net connect unix
    D/svc/public/**` inside it, and `deny net bind unix D/spool/**`: the
    sandbox connects to servers bound (outside) in D/svc, deeper in it, in
    D/svc/public and elsewhere, and binds in D/spool, deeper in it and
    elsewhere. The nearest directory's rule decides: EPERM in D/svc and
    D/spool at any depth, one event each naming the socket and its rule;
    D/svc/public and the rest get through, and everything does under the
    control."""
    if not lsm_active():
        skip("unix rules need BPF LSM; this kernel has none")
    d = os.path.realpath(SCRATCH) + "/subtree"
    for sub in ("svc/deep", "svc/public", "spool/deeper"):
        os.makedirs(d + "/" + sub)
    servers = [d + "/svc/a.sock", d + "/svc/deep/b.sock", d + "/svc/public/c.sock",
               d + "/other.sock"]
    binds = [d + "/spool/x.sock", d + "/spool/deeper/y.sock", d + "/elsewhere.sock"]
    mountop = os.path.join(BUILD, "tests", "mountop")
    route = [mountop]
    for path in servers:
        route += ([";"] if len(route) > 1 else []) + ["?connect", path]
    for path in binds:
        route += [";", "?listen", path]
    rules = ("deny net connect unix {d}/svc/**\nallow net connect unix {d}/svc/public/**\n"
             "deny net bind unix {d}/spool/**\n").format(d=d)
    stop = threading.Event()
    threads = [unix_server(path, stop) for path in servers]
    try:
        for prof, want in (
                (profile(OPEN + "default allow net\n" + rules),
                 ["ERR EPERM", "ERR EPERM", "OK hello", "OK hello", "ERR EPERM", "ERR EPERM",
                  "OK"]),
                (profile(ALLOW_ALL), ["OK hello"] * 4 + ["OK"] * 3)):
            for path in binds:
                if os.path.exists(path):
                    os.unlink(path)
            r = run(prof, route)
            got = [l for l in r.stdout.split("\n") if l.startswith(("OK", "ERR"))]
            check_eq(got, want, "connects and binds (stderr %s)" % r.stderr.strip())
            refused = [p for p, w in zip(servers + binds, want) if w.startswith("ERR")]
            for path in refused:
                named = [e for e in denials(r.events) if e.get("unix") == path]
                check(len(named) == 1, "one deny event naming %s: %r" % (path, denials(r.events)))
                where, _, line = named[0].get("rule", "").rpartition(":")
                with open(where) as f:
                    said = f.read().split("\n")[int(line) - 1]
                top = "svc" if "/svc/" in path else "spool"
                check(said.startswith("deny net ") and said.endswith("%s/%s/**" % (d, top)),
                      "%s: the rule in the event: %r" % (path, said))
            check_eq(len(denials(r.events)), len(refused), "no other denial")
    finally:
        stop.set()
        for t in threads:
            t.join()


NETCONF = "10.213.8.1"


def undo_netconf():
    ip("addr", "del", NETCONF + "/32", "dev", "lo", check_rc=False)
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)


def test_network_configuration_of_the_host():
    """Root in a sandbox under `default allow` changes the host's network:
    an address added by an rtnetlink request of its own, the same on a
    netlink socket opened before its credentials changed (the kernel asks
    with the opener's), lo's MTU set by ioctl, and a tc qdisc on lo (where
    a tc rule would rewrite an allowed port into a denied one after the
    connect programs decided). Without `allow net admin` each is refused
    with EPERM, one deny event naming CAP_NET_ADMIN, and nothing changed;
    with it (the control) each gets through. A process in a user and
    network namespace of its own sets its lo up under the first profile:
    its own network is not the host's. Learn mode writes `allow net
    admin`."""
    if not lsm_active():
        skip("the network configuration is decided by BPF LSM (capable)")
    attempts = (("nladdr:" + NETCONF, "an rtnetlink address"),
                ("nlheld:" + NETCONF, "an rtnetlink address, the socket older than the creds"),
                ("mtu:lo", "lo's MTU by ioctl"), ("tc:lo", "a tc qdisc on lo"))
    forbid = profile("default allow\nallow userns\n", name="no-netadmin")
    control = profile("default allow\nallow net admin\n", name="netadmin")
    undo_netconf()
    try:
        for step, what in attempts:
            r = door(forbid, step)
            check_eq(outcomes(r, 1, what), ["ERR EPERM"], what + " without `allow net admin`")
            named = [e for e in denials(r.events) if e.get("op") == "capability" and
                     e.get("capability") == "CAP_NET_ADMIN"]
            check_eq(len(named), 1, what + ": deny events naming CAP_NET_ADMIN (%r)"
                     % denials(r.events))
            check_eq(named[0]["rule"], "default", what + ": the rule")
            check(NETCONF not in ip("addr", "show", "dev", "lo").stdout,
                  what + ": the address was added")
            check("pfifo" not in subprocess.run(["tc", "qdisc", "show", "dev", "lo"],
                                                capture_output=True, text=True).stdout,
                  what + ": the qdisc was added")
            r = door(control, step)
            got = outcomes(r, 1, what + ", the control")
            check(got == ["OK"] and not denials(r.events), "%s: the control must get through: "
                  "%r (stderr %s, deny events %r)" % (what, got, r.stderr.strip(),
                                                      denials(r.events)))
            undo_netconf()
        r = door(forbid, "userns:lo")
        check(outcomes(r, 1, "its own namespace") == ["OK"] and not denials(r.events),
              "lo of a network namespace of its own: %r (stderr %s, deny events %r)"
              % (r.stdout, r.stderr.strip(), denials(r.events)))
        out = os.path.join(SCRATCH, "netadmin-learned.profile")
        r = run(profile("default allow\n", name="learn-netadmin"), [PY, DRIVER, "mtu:lo"],
                mode="learn", extra=["--output", out])
        check_eq(outcomes(r, 1, "mtu in learn mode"), ["OK"], "lo's MTU in learn mode")
        check("allow net admin" in open(out).read().splitlines(),
              "the learned profile allows the network configuration:\n" + open(out).read())
    finally:
        undo_netconf()


TESTS = [
    test_udplite_datagram_meets_udp_rules,
    test_udplite_connect_meets_udp_rules,
    test_ping_socket_unconnected_sendto,
    test_sctp_sendto,
    test_other_socket_families,
    test_local_host_by_its_interface_addresses,
    test_local_host_by_an_address_added_in_the_sandbox,
    test_local_host_by_an_address_it_gets_after_datagrams_to_it,
    test_dual_stack_bind_is_an_ipv4_bind_too,
    test_unix_bind_every_spelling,
    test_unix_socket_renamed_away_from_its_rule,
    test_unix_socket_bound_by_a_relative_name_renamed,
    test_unix_subtree_rules,
    test_network_configuration_of_the_host,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
