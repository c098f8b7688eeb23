# SPDX-License-Identifier: GPL-2.0-only
"""A hostile script for the demo: it tries the routes that defeat in-process
Python sandboxes, and reports which ones the kernel refused.

    bpfwarden run --profile profiles/python-sandbox.profile -- python3 examples/hostile.py

Each attempt prints "blocked (ERRNO)" or "ALLOWED"; under the shipped
profile every attempt is blocked and each refusal is in the audit log.
"""
import ctypes
import errno
import os
import sys

JOB = os.environ.get("JOB_DIR", "/tmp/job")
results = []


def attempt(what, fn):
    try:
        fn()
    except OSError as e:
        results.append((what, "blocked (%s)" % errno.errorcode.get(e.errno, e.errno)))
    else:
        results.append((what, "ALLOWED"))


def read(path):
    with open(path, "rb") as f:
        f.read(1)


def ctypes_open(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(path.encode(), os.O_RDONLY)
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    os.close(fd)


def symlink_swap():
    # The classic check-then-use race, reduced to its outcome: a name in the
    # job directory that ends up pointing at a secret.
    link = os.path.join(JOB, "innocent.txt")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink("/etc/shadow", link)
    read(link)


def proc_fd_reopen():
    fd = os.open("/etc/shadow", os.O_PATH)
    read("/proc/self/fd/%d" % fd)


def escape_job_dir():
    with open("/tmp/outside-job.txt", "w") as f:
        f.write("x")


def loopback(port, addr="127.0.0.1"):
    import socket
    s = socket.create_connection((addr, port), timeout=2)
    s.close()


def udp_dns():
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"\0" * 12, ("127.0.0.53", 53))
    s.close()


def run_shell():
    import subprocess
    subprocess.run(["/bin/sh", "-c", "true"], check=True)


def memfd_exec():
    fd = os.memfd_create("payload")
    # The interpreter's own bytes: readable, so only the exec itself can refuse.
    with open(os.path.realpath(sys.executable), "rb") as f:
        os.write(fd, f.read())
    pid = os.fork()
    if pid == 0:
        try:
            os.execve(fd, ["payload", "-c", "pass"], {})
        except OSError as e:
            os._exit(100 + e.errno)
    _, status = os.waitpid(pid, 0)
    if os.WEXITSTATUS(status) > 100:
        e = os.WEXITSTATUS(status) - 100
        raise OSError(e, os.strerror(e))


os.makedirs(JOB, exist_ok=True)
attempt("read /etc/shadow with open()", lambda: read("/etc/shadow"))
attempt("read /etc/shadow through ctypes libc open()", lambda: ctypes_open("/etc/shadow"))
attempt("read /etc/shadow through a symlink in the job dir", symlink_swap)
attempt("reopen an O_PATH descriptor via /proc/self/fd", proc_fd_reopen)
attempt("write outside the job directory", escape_job_dir)
attempt("list /root", lambda: os.listdir("/root"))
attempt("run a shell", run_shell)
attempt("run a program from a memfd", memfd_exec)
attempt("reach a loopback service on another port", lambda: loopback(22))
attempt("reach it as ::ffff:127.0.0.1", lambda: loopback(22, "::ffff:127.0.0.1"))
attempt("send a UDP datagram to a local resolver", udp_dns)
with open(os.path.join(JOB, "result.txt"), "w") as f:
    f.write("the job directory is writable\n")
results.append(("write in the job directory", "allowed, as the profile says"))

width = max(len(w) for w, _ in results)
for what, outcome in results:
    print("  %-*s  %s" % (width, what, outcome))
sys.exit(0 if all(o != "ALLOWED" for _, o in results) else 1)
