# SPDX-License-Identifier: GPL-2.0-only
"""The hostile program of test_netcache.py: runs in a governed cgroup and
takes commands on standard input, one per line, answering each on standard
output (escape.py's convention: "OK" or "ERR <errno name>", details on lines
starting with "#"):

    tcp ADDR PORT N     N connects; the outcome of the last, after "# k of N got through"
    udp ADDR PORT N     N unconnected datagrams, likewise
    bind ADDR PORT N    N binds of a TCP socket, likewise
    hammer T PORT...    T threads connecting to 127.0.0.1 at each PORT in turn, nonstop
                        (nothing listens there: ECONNREFUSED is a connect that got through)
    phase               a new phase of the hammer; prints, as JSON, what the connects
                        started in the phase before met: {port: [through, eperm, other]}
    stop                stops the hammer
    uconnect ADDR PORT  a UDP socket connected to ADDR:PORT, kept (the next is numbered 1 up)
    usend K WAY         one datagram on kept socket K, by WAY: send, write, sendmsg (no
                        address), sendmmsg (no address), sendfile or splice
    urecv K WAY         one byte of a datagram on kept socket K, by WAY: recv, read,
                        recvmsg or recvmmsg (one waiting, or the call fails: EAGAIN)
    ubind ADDR PORT [udplite]
                        a UDP (or UDP-Lite) socket bound to ADDR:PORT ([::] takes IPv4
                        too), kept with the connected ones (numbered after them)
    tconnect ADDR PORT [mptcp]
                        a TCP (or MPTCP) connection to ADDR:PORT, kept (numbered 1 up);
                        "# port N" gives its local port
    tlisten ADDR PORT   a TCP listener (numbered 1 up); its connections are kept too
    tlisten0 4|6 [mptcp]
                        a TCP (or MPTCP) listener of that family never bound: listen(2)
                        picks its port, given by "# port N"; numbered with the others
    taccept L           one connection accepted from listener L, kept; "# conn K"
    tsend K WAY         one byte on kept connection K, by WAY: send, write, sendmsg,
                        sendto (with the peer's address), sendfile or splice
    trecv K WAY         one byte from kept connection K, by WAY: recv, read, recvmsg or
                        splice
    tzc K               getsockopt TCP_ZEROCOPY_RECEIVE on connection K (no mapping: any
                        answer but EPERM is the kernel's own)

Counted by phase of their start, so that what a phase reports began after
the command that opened it, whatever was in flight then.
"""
import ctypes
import errno
import json
import os
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "integration"))
from net_driver import attempt, bind, tcp, udp  # noqa: E402


class Hammer:
    def __init__(self, threads, ports):
        self.ports = ports
        self.phase = 0
        self.counts = {}  # phase -> {port: [through, eperm, other]}
        self.busy = [None] * threads  # the phase each thread's connect in flight began in
        self.lock = threading.Lock()
        self.done = False
        self.threads = [threading.Thread(target=self.loop, args=(i,), daemon=True)
                        for i in range(threads)]
        for t in self.threads:
            t.start()

    def loop(self, i):
        n = len(self.ports)
        k = i * n // len(self.busy)
        while not self.done:
            port = self.ports[k % n]
            k += 1
            with self.lock:
                ph = self.phase
                self.busy[i] = ph
            try:
                tcp("127.0.0.1", port)
                kind = 0
            except OSError as e:
                kind = 0 if e.errno == errno.ECONNREFUSED else 1 if e.errno == errno.EPERM else 2
            with self.lock:
                self.counts.setdefault(ph, {}).setdefault(port, [0, 0, 0])[kind] += 1
                self.busy[i] = None

    def next_phase(self):
        with self.lock:
            old = self.phase
            self.phase += 1
        while True:
            with self.lock:
                if old not in self.busy:
                    return self.counts.pop(old, {})
            time.sleep(0.001)

    def stop(self):
        self.done = True
        for t in self.threads:
            t.join()


class MMsgHdr(ctypes.Structure):
    """struct mmsghdr, its msghdr with no address: one buffer of iovecs.
    The msghdr is 8-aligned: msg_len comes after its padding."""
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.c_void_p), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int), ("pad", ctypes.c_int), ("len", ctypes.c_uint)]


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


LIBC = ctypes.CDLL(None, use_errno=True)


def sendmmsg(fd, data):
    buf = ctypes.create_string_buffer(data)
    iov = IoVec(ctypes.cast(buf, ctypes.c_void_p), len(data))
    hdr = MMsgHdr(None, 0, ctypes.cast(ctypes.pointer(iov), ctypes.c_void_p), 1, None, 0, 0, 0)
    if LIBC.sendmmsg(fd, ctypes.byref(hdr), 1, 0) != 1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def recvmmsg(fd):
    """One datagram by recvmmsg(2), not waiting; its bytes."""
    buf = ctypes.create_string_buffer(64)
    iov = IoVec(ctypes.cast(buf, ctypes.c_void_p), len(buf))
    hdr = MMsgHdr(None, 0, ctypes.cast(ctypes.pointer(iov), ctypes.c_void_p), 1, None, 0, 0, 0)
    if LIBC.recvmmsg(fd, ctypes.byref(hdr), 1, socket.MSG_DONTWAIT, None) != 1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return buf.raw[:hdr.len]


def udp_send(s, way):
    """One datagram of one byte on connected socket s, the way named."""
    if way == "send":
        s.send(b"s")
    elif way == "write":
        os.write(s.fileno(), b"w")
    elif way == "sendmsg":
        s.sendmsg([b"m"])
    elif way == "sendmmsg":
        sendmmsg(s.fileno(), b"M")
    elif way == "sendfile":
        with tempfile.TemporaryFile() as f:
            f.write(b"f")
            f.flush()
            os.sendfile(s.fileno(), f.fileno(), 0, 1)
    elif way == "splice":
        r, w = os.pipe()
        try:
            os.write(w, b"p")
            os.splice(r, s.fileno(), 1)
        finally:
            os.close(r)
            os.close(w)
    else:
        raise ValueError(way)


def tcp_send(s, way):
    """One byte on connection s, the way named."""
    if way == "sendto":
        s.sendto(b"t", s.getpeername())
    else:
        udp_send(s, way)


def tcp_recv(s, way):
    """One byte from connection s, the way named; an empty read is an error."""
    if way == "recv":
        got = s.recv(1)
    elif way == "read":
        got = os.read(s.fileno(), 1)
    elif way == "recvmsg":
        got = s.recvmsg(1)[0]
    elif way == "recvmmsg":
        got = recvmmsg(s.fileno())
    elif way == "splice":
        r, w = os.pipe()
        try:
            os.splice(s.fileno(), w, 1)
            got = os.read(r, 1)
        finally:
            os.close(r)
            os.close(w)
    else:
        raise ValueError(way)
    if len(got) != 1:
        raise OSError(errno.ENODATA, "nothing read")


class ZeroCopyReceive(ctypes.Structure):
    """struct tcp_zerocopy_receive (include/uapi/linux/tcp.h), all zero."""
    _fields_ = [("address", ctypes.c_uint64), ("length", ctypes.c_uint32),
                ("recv_skip_hint", ctypes.c_uint32), ("inq", ctypes.c_uint32),
                ("err", ctypes.c_int32), ("copybuf_address", ctypes.c_uint64),
                ("copybuf_len", ctypes.c_int32), ("flags", ctypes.c_uint32),
                ("msg_control", ctypes.c_uint64), ("msg_controllen", ctypes.c_uint64),
                ("msg_flags", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


def zerocopy_receive(s):
    zc = ZeroCopyReceive()
    n = ctypes.c_uint32(ctypes.sizeof(zc))
    if LIBC.getsockopt(s.fileno(), socket.IPPROTO_TCP, 35, ctypes.byref(zc), ctypes.byref(n)):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def main():
    hammer = None
    kept = []
    conns = []
    listeners = []
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] in ("tcp", "udp", "bind"):
            fn = {"tcp": tcp, "udp": udp, "bind": bind}[cmd[0]]
            outs = [attempt(lambda: fn(cmd[1], int(cmd[2]))) for _ in range(int(cmd[3]))]
            print("# %d of %d got through" % (outs.count("OK"), len(outs)))
            print(outs[-1])
        elif cmd[0] == "hammer":
            hammer = Hammer(int(cmd[1]), [int(p) for p in cmd[2:]])
            print("OK")
        elif cmd[0] == "phase":
            print(json.dumps(hammer.next_phase()))
        elif cmd[0] == "uconnect":
            s = socket.socket(socket.AF_INET6 if ":" in cmd[1] else socket.AF_INET,
                              socket.SOCK_DGRAM)
            out = attempt(lambda: s.connect((cmd[1], int(cmd[2]))))
            kept.append(s)
            print(out)
        elif cmd[0] == "ubind":
            s = socket.socket(socket.AF_INET6 if ":" in cmd[1] else socket.AF_INET,
                              socket.SOCK_DGRAM,
                              136 if cmd[3:] == ["udplite"] else socket.IPPROTO_UDP)
            if s.family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            out = attempt(lambda: s.bind((cmd[1], int(cmd[2]))))
            kept.append(s)
            print(out)
        elif cmd[0] == "usend":
            print(attempt(lambda: udp_send(kept[int(cmd[1]) - 1], cmd[2])))
        elif cmd[0] == "urecv":
            s = kept[int(cmd[1]) - 1]
            s.setblocking(False)
            print(attempt(lambda: tcp_recv(s, cmd[2])))
        elif cmd[0] == "tconnect":
            fam = socket.AF_INET6 if ":" in cmd[1] else socket.AF_INET
            s = socket.socket(fam, socket.SOCK_STREAM,
                              262 if cmd[3:] == ["mptcp"] else socket.IPPROTO_TCP)
            out = attempt(lambda: s.connect((cmd[1], int(cmd[2]))))
            conns.append(s)
            print("# port %d" % s.getsockname()[1])
            print(out)
        elif cmd[0] == "tlisten":
            ls = socket.socket(socket.AF_INET6 if ":" in cmd[1] else socket.AF_INET)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if ls.family == socket.AF_INET6:
                ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            out = attempt(lambda: (ls.bind((cmd[1], int(cmd[2]))), ls.listen(8)))
            listeners.append(ls)
            print(out)
        elif cmd[0] == "tlisten0":
            ls = socket.socket(socket.AF_INET6 if cmd[1] == "6" else socket.AF_INET,
                               socket.SOCK_STREAM,
                               262 if cmd[2:] == ["mptcp"] else socket.IPPROTO_TCP)
            if ls.family == socket.AF_INET6:
                ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            out = attempt(lambda: ls.listen(8))
            listeners.append(ls)
            print("# port %d" % ls.getsockname()[1])
            print(out)
        elif cmd[0] == "taccept":
            def accept():
                conns.append(listeners[int(cmd[1]) - 1].accept()[0])
                print("# conn %d" % len(conns))
            print(attempt(accept))
        elif cmd[0] == "tsend":
            print(attempt(lambda: tcp_send(conns[int(cmd[1]) - 1], cmd[2])))
        elif cmd[0] == "trecv":
            print(attempt(lambda: tcp_recv(conns[int(cmd[1]) - 1], cmd[2])))
        elif cmd[0] == "tzc":
            print(attempt(lambda: zerocopy_receive(conns[int(cmd[1]) - 1])))
        elif cmd[0] == "stop":
            hammer.stop()
            print("OK")
        sys.stdout.flush()


main()
