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
"""
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
    else:
        addr, port = rest.rsplit(":", 1)
        out = attempt(ADDR_OPS[kind], addr.strip("[]"), int(port))
    print(out)
    sys.stdout.flush()
