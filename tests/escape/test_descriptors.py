# SPDX-License-Identifier: GPL-2.0-only
"""Descriptors from outside: a process outside the sandbox (the broker, a
thread of this test) opens what the sandbox may not, and hands the
descriptor over a unix socket (SCM_RIGHTS). docs/threat-model.md,
"Descriptors from outside".

Refused: the message arrives without its descriptor (MSG_CTRUNC, printed
"ERR CTRUNC"), nothing of the object was read, and exactly one deny event
names the object as an open or a connect would. Control: under a permissive
profile the same program reads through the descriptor.
"""
import array
import os
import secrets
import socket
import sys
import threading
import time

from escape import (RUNTIME_RULES, SCRATCH, ControlBroken, RouteOpen, check, check_eq, denials,
                    got_through, main, profile, refused, run, write)
from guards import DRIVER, HERE, PY, needs_lsm

S = SCRATCH


class Broker:
    """Outside every sandbox: on request, opens a file, connects a TCP or a
    unix socket to a service, makes a pipe or a listening socket, and sends
    the descriptor back."""

    def __init__(self):
        self.token = secrets.token_hex(8)
        self.secret = S + "/secret"
        write(self.secret, "s3cret-" + self.token)
        self.path = S + "/broker.sock"
        self.srv = self.listen_unix(self.path)
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.port = self.tcp.getsockname()[1]
        self.unix_path = S + "/service.sock"
        self.unix = self.listen_unix(self.unix_path)
        # Accepted by the broker itself, whose end closes as it hands the other over.
        self.closing_path = S + "/closing.sock"
        self.closing = self.listen_unix(self.closing_path)
        self.closing_peer = None
        self.sent = 0
        for target in (self.serve, lambda: self.banner(self.tcp, b"tcp-banner-"),
                       lambda: self.banner(self.unix, b"unix-banner-")):
            threading.Thread(target=target, daemon=True).start()

    @staticmethod
    def listen_unix(path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.listen(8)
        return s

    def banner(self, srv, prefix):
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return  # closed: the test is over
            with conn:
                try:
                    conn.sendall(prefix + self.token.encode())
                except OSError:
                    pass  # the client is gone: its descriptor was refused and closed

    def make(self, kind, arg):
        if kind == "file":
            return os.open(arg, os.O_RDONLY)
        if kind == "cgprocs":
            return os.open(arg, os.O_WRONLY)
        if kind == "tcp":
            return socket.create_connection(("127.0.0.1", self.port)).detach()
        if kind == "unix":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.unix_path)
            return s.detach()
        if kind == "closing":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.closing_path)
            self.closing_peer = self.closing.accept()[0]
            return s.detach()
        if kind == "pipe":
            r, w = os.pipe()
            os.write(w, b"pipe-" + self.token.encode())
            os.close(w)
            return r
        if kind == "listen":
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            return s.detach()
        if kind == "bpfmap":
            sys.path.insert(0, HERE)
            import guard_driver
            return guard_driver.obj_get(arg)
        raise ValueError(kind)

    def serve(self):
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return  # closed: the test is over
            with conn:
                try:
                    req = conn.makefile().readline().split()
                    fd = self.make(req[0], req[1] if len(req) > 1 else None)
                    conn.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                           array.array("i", [fd]))])
                    os.close(fd)
                    self.sent += 1
                    if self.closing_peer:
                        # Its peer goes while the receiver decides, a little later each
                        # time: before, during and after the receipt.
                        until = time.perf_counter() + (self.sent % 40) * 5e-6
                        while time.perf_counter() < until:
                            pass
                        self.closing_peer.close()
                        self.closing_peer = None
                except OSError as e:
                    # Serve the next request: the one that failed sees no descriptor.
                    print("broker: %s" % e, file=sys.stderr)

    def close(self):
        for s in (self.srv, self.tcp, self.unix, self.closing):
            s.close()


def forbidding(b):
    """Everything allowed but what the broker hands over."""
    return profile("default allow\ndeny file r %s\ndeny net connect tcp 127.0.0.1:%d\n"
                   "deny net connect unix %s\n" % (b.secret, b.port, b.unix_path), name="forbid")


def recv(b, *req):
    return [PY, DRIVER, "recv", b.path] + list(req)


def try_descriptor(req, key, obj, what, extra=None):
    """Refused under the forbidding profile; read under a permissive one."""
    needs_lsm()
    b = Broker()
    try:
        r = run(forbidding(b), recv(b, *req))
        e = refused(r, "CTRUNC", obj(b), what, key=key)
        check_eq(e["op"], "receive", what + ": op")
        check(b.token not in r.stdout, "%s: nothing was read: %r" % (what, r.stdout))
        if extra:
            extra(e)
        r = run(profile("default allow\n", name="control"), recv(b, *req))
        got_through(r, what)
        check(b.token in r.stdout, "%s: the control reads through it: %r" % (what, r.stdout))
    finally:
        b.close()


def test_file_over_scm_rights():
    """A descriptor of a denied file, opened outside the sandbox and sent over
    a unix socket (SCM_RIGHTS): dropped on receipt, decided as an open for
    reading."""
    try_descriptor(["file", S + "/secret"], "path", lambda b: b.secret,
                   "a denied file's descriptor from outside",
                   lambda e: check_eq(e["access"], "r", "decided as an open for reading"))


def test_tcp_socket_over_scm_rights():
    """A TCP socket connected outside the sandbox to a denied address and
    port, sent over a unix socket: dropped on receipt, decided as a connect
    to its peer."""
    try_descriptor(["tcp"], "port", lambda b: b.port,
                   "a TCP socket connected from outside to a denied port",
                   lambda e: check_eq((e["family"], e["proto"], e["addr"]),
                                      ("ipv4", "tcp", "127.0.0.1"), "decided by its peer"))


def test_unix_socket_over_scm_rights():
    """A unix socket connected outside the sandbox to a denied service (which
    wrote its answer and hung up), sent over a unix socket: dropped on
    receipt, decided as a connect to the peer's name."""
    try_descriptor(["unix"], "unix", lambda b: b.unix_path,
                   "a unix socket connected from outside to a denied name")


CLOSING = 500


def test_unix_socket_whose_peer_is_closing():
    """Unix sockets handed over while the broker closes their peer, CLOSING
    times, each a little later than the last: every one is dropped on
    receipt and named by the peer's name, whether the peer was alive, being
    released or gone (bpf/unix.bpf.h: a peer's path is used only when both
    halves are still set, else its bind name; a half path was once decided
    as a name no rule holds, and the default let it through). Control: all
    arrive under a permissive profile."""
    needs_lsm()
    b = Broker()
    try:
        prof = profile("default allow\ndeny net connect unix %s\n" % b.closing_path,
                       name="closing")
        r = run(prof, [PY, DRIVER, "recvmany", str(CLOSING), b.path, "closing"],
                extra=("--event-rate", "0"))
        got = [l for l in r.stdout.splitlines() if l.startswith(("OK", "ERR"))]
        if got and got[-1].startswith("OK"):
            raise RouteOpen("sockets with a closing peer got through: %r" % got)
        check_eq(got, ["ERR CTRUNC"], "every socket dropped (rc %d, stderr %s)"
                 % (r.rc, r.stderr.strip()))
        d = denials(r.events)
        check_eq(len(d), CLOSING, "deny events, one a receipt")
        check_eq(sorted(set(e.get("unix") for e in d)), [b.closing_path],
                 "the names the refusals were decided by")
        check_eq(set(e["op"] for e in d), {"receive"}, "the events' op")
        r = run(profile("default allow\n", name="control"),
                [PY, DRIVER, "recvmany", str(CLOSING), b.path, "closing"])
        got = [l for l in r.stdout.splitlines() if l.startswith(("OK", "ERR"))]
        if got != ["OK %d of %d arrived" % (CLOSING, CLOSING)] or denials(r.events):
            raise ControlBroken("the control must receive every socket: %r, denials %r"
                                % (got, denials(r.events)))
    finally:
        b.close()


def test_what_no_rule_names_under_default_deny():
    """A pipe or a listening socket has nothing a rule could name: refused
    under `default deny`, let through under `default allow`."""
    needs_lsm()
    b = Broker()
    try:
        deny = profile("default deny\n" + RUNTIME_RULES + "allow file r %s/**\n"
                       "allow net connect unix %s\n" % (HERE, b.path), name="deny-all")
        r = run(deny, recv(b, "pipe"))
        e = refused(r, "CTRUNC", "pipe:", "a pipe from outside under default deny")
        check_eq((e["op"], e.get("pseudo_file"), e["rule"]), ("receive", True, "default"),
                 "the pipe's event")
        check(b.token not in r.stdout, "nothing was read from the pipe: %r" % r.stdout)
        r = run(deny, recv(b, "listen"))
        e = refused(r, "CTRUNC", "stream", "a listening socket from outside under default deny",
                    key="socket_type")
        check_eq((e["op"], e["family"]), ("receive", "ipv4"), "the listening socket's event")
        for req in ("pipe", "listen"):
            r = run(profile("default allow\n", name="control"), recv(b, req))
            got_through(r, "a %s from outside under default allow" % req)
    finally:
        b.close()


def test_descriptor_in_audit_mode():
    """Audit mode lets the descriptor through and says enforce would not have."""
    needs_lsm()
    b = Broker()
    try:
        r = run(forbidding(b), recv(b, "file", b.secret), mode="audit")
        check(("s3cret-" + b.token) in r.stdout, "audit mode reads the file: %r" % r.stdout)
        audits = [e for e in r.events if e["type"] == "audit"]
        check_eq([(e["op"], e["path"]) for e in audits], [("receive", b.secret)],
                 "one audit event names the file")
    finally:
        b.close()


def test_passing_inside_the_sandbox():
    """Descriptors a sandbox passes between its own processes are decided
    the same way, so what it may open or connect to itself still passes: a
    file it can read, one end of a socketpair."""
    needs_lsm()
    write(S + "/mine", "mine")
    code = ("import array, os, socket\n"
            "a, b = socket.socketpair()\n"
            "c, d = socket.socketpair()\n"
            "fd = os.open(%r, os.O_RDONLY)\n"
            "a.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [fd, c.fileno()]))])\n"
            "msg, anc, flags, _ = b.recvmsg(1, socket.CMSG_SPACE(8))\n"
            "got = array.array('i'); got.frombytes(anc[0][2])\n"
            "d.send(b'pair')\n"
            "print('OK', os.pread(got[0], 10, 0).decode(), os.read(got[1], 10).decode())\n"
            % (S + "/mine"))
    # -I: no current directory in sys.path, which python would list.
    p = profile("default deny\n" + RUNTIME_RULES + "allow file r %s/mine\n"
                "allow file r /etc/locale.alias\n" % S, name="inside")
    r = run(p, [PY, "-I", "-c", code])
    got_through(r, "descriptors passed inside the sandbox")
    check_eq(r.stdout.strip(), "OK mine pair", "what came through")


TESTS = [
    test_file_over_scm_rights,
    test_tcp_socket_over_scm_rights,
    test_unix_socket_over_scm_rights,
    test_unix_socket_whose_peer_is_closing,
    test_what_no_rule_names_under_default_deny,
    test_descriptor_in_audit_mode,
    test_passing_inside_the_sandbox,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
