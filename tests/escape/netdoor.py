# SPDX-License-Identifier: GPL-2.0-only
"""The hostile program of test_netdoors.py: runs in a sandbox, tries each
network door named on the command line and prints one line per attempt, "OK"
or "ERR <errno name>" (escape.py). Steps that only prepare print nothing.

    tcp:ADDR:PORT       connect a TCP socket
    udp:ADDR:PORT       one unconnected UDP datagram
    udplite:ADDR:PORT   one unconnected UDP-Lite datagram
    udpliteconn:ADDR:PORT   connect a UDP-Lite socket, then send
    ping:ADDR           one ICMP echo request from an unconnected ping socket
    sctp:ADDR:PORT      one SCTP message, sendto without connect
    family:NAME         create a socket of another family (xdp, vsock)
    cd:DIR              chdir (prints nothing)
    addaddr:ADDR/LEN    add an address to lo with ip(8), as root in the sandbox
    unixbind:NAME       bind a unix stream socket to NAME as written
    tcpbind:ADDR:PORT   bind a TCP socket to ADDR:PORT and listen, then
                        connect to it over IPv4 loopback (what a dual-stack
                        [::] listener accepts)
    nladdr:ADDR         add ADDR/32 to lo by an rtnetlink request of our own
    nlheld:ADDR         the same on a netlink socket opened before a change of
                        credentials (setgroups): the kernel asks with the opener's
    mtu:IFACE           set IFACE's MTU to what it is (SIOCSIFMTU)
    tc:IFACE            tc qdisc add dev IFACE root pfifo (the tc program; a qdisc
                        built into the kernel)
    userns:IFACE        in a new user and network namespace of our own, set its
                        IFACE up (SIOCSIFFLAGS)
"""
import ctypes
import fcntl
import errno
import os
import socket
import struct
import subprocess
import sys

IPPROTO_UDPLITE = 136
IPPROTO_SCTP = 132
FAMILIES = {"xdp": (44, socket.SOCK_RAW), "vsock": (40, socket.SOCK_STREAM)}


def fam(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def tcp(a, p):
    with socket.socket(fam(a), socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect((a, p))


def udp(a, p, proto=0):
    with socket.socket(fam(a), socket.SOCK_DGRAM, proto) as s:
        s.sendto(b"x", (a, p))


def udplite(a, p):
    udp(a, p, IPPROTO_UDPLITE)


def udplite_connected(a, p):
    with socket.socket(fam(a), socket.SOCK_DGRAM, IPPROTO_UDPLITE) as s:
        s.connect((a, p))
        s.send(b"x")


def ping(a, _):
    v6 = fam(a) == socket.AF_INET6
    proto = socket.IPPROTO_ICMPV6 if v6 else socket.IPPROTO_ICMP
    with socket.socket(fam(a), socket.SOCK_DGRAM, proto) as s:
        # type, code, checksum (the kernel fills it), id (the kernel's), sequence
        s.sendto(struct.pack("!BBHHH", 128 if v6 else 8, 0, 0, 0, 1) + b"data", (a, 0))


def sctp(a, p):
    with socket.socket(fam(a), socket.SOCK_SEQPACKET, IPPROTO_SCTP) as s:
        s.sendto(b"x", (a, p))


def family(name):
    af, kind = FAMILIES[name]
    socket.socket(af, kind, 0).close()


def addaddr(spec):
    r = subprocess.run(["ip", "addr", "add", spec, "dev", "lo"], capture_output=True, text=True)
    if r.returncode:
        raise OSError(errno.EIO, "ip addr add %s: %s" % (spec, r.stderr.strip()))


def unixbind(name):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(name)


def tcpbind(a, p):
    with socket.socket(fam(a), socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a, p))
        s.listen(1)
        with socket.create_connection(("127.0.0.1", p), timeout=5):
            pass


RTM_NEWADDR, NLM_F_REQUEST, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL = 20, 1, 4, 0x400, 0x200
IFA_LOCAL, IFA_ADDRESS = 2, 1
SIOCGIFMTU, SIOCSIFMTU, SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8921, 0x8922, 0x8913, 0x8914


def nl_newaddr(s, addr):
    """RTM_NEWADDR of addr/32 on lo on netlink socket s; the kernel's answer as an errno."""
    ip = socket.inet_aton(addr)
    attrs = b"".join(struct.pack("HH", 8, t) + ip for t in (IFA_LOCAL, IFA_ADDRESS))
    body = struct.pack("BBBBI", socket.AF_INET, 32, 0, 0, socket.if_nametoindex("lo")) + attrs
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL
    s.send(struct.pack("IHHII", 16 + len(body), RTM_NEWADDR, flags, 1, 0) + body)
    ack = s.recv(4096)
    err = struct.unpack_from("i", ack, 16)[0]
    if err:
        raise OSError(-err, os.strerror(-err))


def nladdr(addr):
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as s:
        nl_newaddr(s, addr)


def nlheld(addr):
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as s:
        os.setgroups(os.getgroups())  # new credentials, the same privileges
        nl_newaddr(s, addr)


def mtu(iface):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16si", iface.encode(), 0)
        cur = struct.unpack_from("i", fcntl.ioctl(s, SIOCGIFMTU, req), 16)[0]
        fcntl.ioctl(s, SIOCSIFMTU, struct.pack("16si", iface.encode(), cur))


def tc(iface):
    r = subprocess.run(["tc", "qdisc", "add", "dev", iface, "root", "pfifo"],
                       capture_output=True, text=True)
    if r.returncode:
        e = errno.EPERM if "Operation not permitted" in r.stderr else errno.EIO
        raise OSError(e, "tc: " + r.stderr.strip())


def userns(iface):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000 | 0x40000000):  # CLONE_NEWUSER | CLONE_NEWNET
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH", iface.encode(), 0)
        flags = struct.unpack_from("H", fcntl.ioctl(s, SIOCGIFFLAGS, req), 16)[0]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH", iface.encode(), flags | 1))


NAMED_OPS = {"nladdr": nladdr, "nlheld": nlheld, "mtu": mtu, "tc": tc, "userns": userns}


def attempt(fn, *args):
    try:
        fn(*args)
        return "OK"
    except OSError as e:
        return "ERR " + errno.errorcode.get(e.errno, str(e.errno))


ADDR_OPS = {"tcp": tcp, "udp": udp, "udplite": udplite, "udpliteconn": udplite_connected,
            "sctp": sctp, "tcpbind": tcpbind}

for spec in sys.argv[1:]:
    kind, _, rest = spec.partition(":")
    if kind == "cd":
        os.chdir(rest)
        continue
    if kind == "addaddr":
        addaddr(rest)
        continue
    if kind == "ping":
        out = attempt(ping, rest.strip("[]"), 0)
    elif kind == "family":
        out = attempt(family, rest)
    elif kind == "unixbind":
        out = attempt(unixbind, rest)
    elif kind in NAMED_OPS:
        out = attempt(NAMED_OPS[kind], rest)
    else:
        addr, port = rest.rsplit(":", 1)
        out = attempt(ADDR_OPS[kind], addr.strip("[]"), int(port))
    print(out)
    sys.stdout.flush()
