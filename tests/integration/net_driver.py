# SPDX-License-Identifier: GPL-2.0-only
"""Runs inside a sandbox: tries each network operation named on the command
line and prints one line per attempt, "OK" or "ERR <errno name>".

    tcp:ADDR:PORT   connect(2)        tfo:ADDR:PORT    sendto(MSG_FASTOPEN)
    udp:ADDR:PORT   unconnected sendto  bind:ADDR:PORT  bind a TCP socket
    ctypes:ADDR:PORT  libc connect() through ctypes (IPv4)
    raw4 | raw6 | packet   create a raw IPv4/IPv6 (ICMP) or a packet socket
    unix:PATH | unix:@NAME       connect a stream socket
    unixdg:PATH | unixdg:@NAME   send one datagram, unconnected
    unixbind:PATH | unixbind:@NAME
"""
import ctypes
import errno
import socket
import struct
import sys


def fam(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def attempt(fn):
    try:
        fn()
        return "OK"
    except OSError as e:
        return "ERR " + errno.errorcode.get(e.errno, str(e.errno))


def tcp(a, p):
    s = socket.socket(fam(a), socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((a, p))
    s.close()


def tfo(a, p):
    s = socket.socket(fam(a), socket.SOCK_STREAM)
    s.sendto(b"x", socket.MSG_FASTOPEN, (a, p))
    s.close()


def udp(a, p):
    s = socket.socket(fam(a), socket.SOCK_DGRAM)
    s.sendto(b"x", (a, p))
    s.close()


def bind(a, p):
    s = socket.socket(fam(a), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, p))
    s.close()


def ctypes_connect(a, p):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    sa = struct.pack("!HH4s8x", socket.AF_INET, p, socket.inet_aton(a))
    sa = struct.pack("=H", socket.AF_INET) + sa[2:]
    buf = ctypes.create_string_buffer(sa, len(sa))
    if libc.connect(fd, buf, len(sa)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "connect")


OPS = {"tcp": tcp, "tfo": tfo, "udp": udp, "bind": bind, "ctypes": ctypes_connect}

SOCKETS = {
    "raw4": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
    "raw6": (socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6),
    "packet": (socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)),  # ETH_P_ALL
}

def unix_name(n):
    return "\0" + n[1:] if n.startswith("@") else n


def unix_stream(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(unix_name(n))
    s.close()


def unix_dgram(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"x", unix_name(n))
    s.close()


def unix_bind(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(unix_name(n))
    s.close()


UNIX = {"unix": unix_stream, "unixdg": unix_dgram, "unixbind": unix_bind}


def main():
    for spec in sys.argv[1:]:
        kind = spec.split(":", 1)[0]
        if kind in UNIX:
            print(attempt(lambda: UNIX[kind](spec.split(":", 1)[1])))
            sys.stdout.flush()
            continue
        if spec in SOCKETS:
            print(attempt(lambda: socket.socket(*SOCKETS[spec]).close()))
            sys.stdout.flush()
            continue
        kind, rest = spec.split(":", 1)
        addr, port = rest.rsplit(":", 1)
        print(attempt(lambda: OPS[kind](addr.strip("[]"), int(port))))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
