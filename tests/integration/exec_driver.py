# SPDX-License-Identifier: GPL-2.0-only
"""Runs inside a sandbox: tries each exec route named on the command line and
prints one line per attempt, "OK" or "ERR <errno name>"."""
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
AT_EMPTY_PATH = 0x1000
NR_execveat = 322


def child(fn):
    """Run fn in a child that must exec; report how the exec went."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.set_inheritable(w, False)
        try:
            fn()
            e = 0
        except OSError as ex:
            e = ex.errno
        os.write(w, str(e).encode())
        os._exit(0)
    os.close(w)
    data = os.read(r, 64)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if not data:  # the exec happened: the pipe closed on exec
        return "OK" if os.WEXITSTATUS(status) == 0 else "EXIT %d" % os.WEXITSTATUS(status)
    e = int(data)
    return "OK" if e == 0 else "ERR " + errno.errorcode.get(e, str(e))


def devnull():
    fd = os.open("/dev/null", os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(fd, 2)


def run_path(path, *args):
    def fn():
        devnull()
        os.execv(path, [path] + list(args))
    return child(fn)


def execveat_empty(path):
    def fn():
        fd = os.open(path, os.O_RDONLY)
        devnull()
        argv = (ctypes.c_char_p * 2)(path.encode(), None)
        envp = (ctypes.c_char_p * 1)(None)
        libc.syscall(NR_execveat, fd, b"", argv, envp, AT_EMPTY_PATH)
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return child(fn)


def memfd(src):
    def fn():
        fd = os.memfd_create("payload", 0)
        with open(src, "rb") as f:
            os.write(fd, f.read())
        devnull()
        os.execve(fd, ["payload"], {})
    return child(fn)


for spec in sys.argv[1:]:
    kind, _, arg = spec.partition(":")
    if kind == "run":
        parts = arg.split(",")
        print(run_path(parts[0], *parts[1:]))
    elif kind == "execveat":
        print(execveat_empty(arg))
    elif kind == "memfd":
        print(memfd(arg))
    else:
        print("BAD " + spec)
    sys.stdout.flush()
