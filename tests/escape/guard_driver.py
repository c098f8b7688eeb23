# SPDX-License-Identifier: GPL-2.0-only
"""Hostile operations on other processes, on descriptors and on the agent,
each a direct syscall through ctypes, one per run:

    guard_driver.py ROUTE ARG...

It prints one line, "OK [WHAT IT GOT]" or "ERR <ERRNO NAME>" (tests/escape/
escape.py). A PID of "parent" is this process's parent (under `bpfwarden
run`, the agent). ROUTE:

  ptrace PID ADDR LEN     PTRACE_ATTACH, then read LEN bytes at ADDR (PEEKDATA)
  attach PID              PTRACE_ATTACH, then detach
  vmread PID ADDR LEN     process_vm_readv
  mem PID ADDR LEN        /proc/PID/mem
  environ PID             /proc/PID/environ
  getfd PID FD            pidfd_getfd, then read the descriptor
  fdlink PID FD           open /proc/PID/fd/FD and read it
  root PID PATH           read /proc/PID/root/PATH
  cwd PID                 list /proc/PID/cwd
  inside ROUTE FILE       start holder.py on FILE as a child (inside this
                          sandbox) and try ROUTE against it
  kill PID SIG            kill(2)
  sigio PID SIG           a socket's SIGIO pointed at PID (F_SETOWN), as SIG
                          (F_SETSIG), then made readable
  prlimit|nice|affinity|ioprio PID
                          RLIMIT_CPU of 1 s, nice 19, one CPU, idle I/O class
  bpf CMD                 bpf(CMD) with a zeroed attribute
  objget PATH             BPF_OBJ_GET of a pin
  objupdate PATH KEY HEX  BPF_OBJ_GET, then BPF_MAP_UPDATE_ELEM of KEY (u32)
  read PATH | unlink PATH | rename PATH NEW | mkdir PATH | rmdir PATH
  recv SOCKET REQUEST...  connect to the unix socket SOCKET, send REQUEST,
                          and read what arrives through the descriptor it
                          sends back (SCM_RIGHTS): "ERR CTRUNC" when the
                          message came without it
  recvmany N SOCKET REQUEST...
                          recv N times: "ERR CTRUNC" when every message came
                          without its descriptor, else "OK K of N arrived"
"""
import array
import ctypes
import errno
import fcntl
import os
import socket
import stat
import struct
import subprocess
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]

NR_process_vm_readv = 310
NR_bpf = 321
NR_ioprio_set = 251
NR_pidfd_open = 434
NR_pidfd_getfd = 438
PTRACE_PEEKDATA, PTRACE_ATTACH, PTRACE_DETACH, PTRACE_TRACEME = 2, 16, 17, 0
WALL = 0x40000000
F_SETSIG = 10
BPF_MAP_UPDATE_ELEM, BPF_OBJ_GET = 2, 7
HERE = os.path.dirname(os.path.abspath(__file__))


def fail(e=None):
    e = ctypes.get_errno() if e is None else e
    raise OSError(e, os.strerror(e))


def sys_call(nr, *args):
    # syscall(2) is variadic: an int must be passed as a long, or the
    # arguments on the stack (the sixth) keep garbage in their high half.
    args = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = libc.syscall(ctypes.c_long(nr), *args)
    if r < 0:
        fail()
    return r


def show(data):
    return data.decode("utf-8", "replace").replace("\n", "\\n")


def P(pid):
    return os.getppid() if pid == "parent" else int(pid)


def ptrace_read(pid, addr, n):
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) < 0:
        fail()
    try:
        os.waitpid(pid, WALL)
        out = b""
        for off in range(0, n, 8):
            ctypes.set_errno(0)
            word = libc.ptrace(PTRACE_PEEKDATA, pid, ctypes.c_void_p(addr + off), None)
            if word == -1 and ctypes.get_errno():
                fail()
            out += struct.pack("<q", word)
        return out[:n]
    finally:
        libc.ptrace(PTRACE_DETACH, pid, None, None)


class Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def vm_read(pid, addr, n):
    buf = ctypes.create_string_buffer(n)
    local = Iovec(ctypes.addressof(buf), n)
    remote = Iovec(addr, n)
    got = sys_call(NR_process_vm_readv, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return buf.raw[:got]


def read_path(path, n=4096, off=None):
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.pread(fd, n, off) if off is not None else os.read(fd, n)
    finally:
        os.close(fd)


def pidfd_getfd(pid, fd):
    pidfd = sys_call(NR_pidfd_open, pid, 0)
    got = sys_call(NR_pidfd_getfd, pidfd, fd, 0)
    return os.pread(got, 4096, 0)


def bpf(cmd, attr=b""):
    buf = ctypes.create_string_buffer(attr, 128)
    return sys_call(NR_bpf, cmd, buf, 128), buf


def obj_get(path):
    p = ctypes.create_string_buffer(path.encode())
    return bpf(BPF_OBJ_GET, struct.pack("QII", ctypes.addressof(p), 0, 0))[0]


def obj_update(path, key, hexval):
    fd = obj_get(path)
    k = ctypes.create_string_buffer(struct.pack("I", key), 4)
    v = ctypes.create_string_buffer(bytes.fromhex(hexval))
    bpf(BPF_MAP_UPDATE_ELEM, struct.pack("IIQQQ", fd, 0, ctypes.addressof(k),
                                         ctypes.addressof(v), 0))
    return "updated"


def sigio(pid, sig):
    import fcntl
    a, b = socket.socketpair()
    fcntl.fcntl(a, fcntl.F_SETOWN, pid)
    fcntl.fcntl(a, F_SETSIG, sig)
    fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
    b.send(b"x")
    return "sent"


def recv_many(n, path, request):
    arrived = sum(recv_fd(path, request) is not None for _ in range(n))
    return "%d of %d arrived" % (arrived, n) if arrived else None


def recv_fd(path, request):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(request.encode() + b"\n")
    msg, anc, flags, _ = s.recvmsg(64, socket.CMSG_SPACE(4 * 4))
    fds = array.array("i")
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % 4])
    if not fds:
        return None if flags & socket.MSG_CTRUNC else "no descriptor"
    fd = fds[0]
    if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
        # A cgroup.procs: what it is for, moving this process.
        os.write(fd, b"%d\n" % os.getpid())
        with open("/proc/self/cgroup") as f:
            return "moved to " + f.read().strip()
    if stat.S_ISSOCK(os.fstat(fd).st_mode):
        s = socket.socket(fileno=fd)
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
            return "a listening socket on %s" % (s.getsockname(),)
        return s.recv(4096)
    try:
        try:
            return os.pread(fd, 4096, 0)
        except OSError as e:
            if e.errno not in (errno.ESPIPE, errno.ENXIO):
                raise
            return os.read(fd, 4096)
    except OSError as e:
        if e.errno != errno.EINVAL:
            raise
    # A BPF object cannot be read(2): what the kernel says it is.
    with open("/proc/self/fdinfo/%d" % fd) as f:
        info = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
    return "a BPF object: " + " ".join("%s %s" % (k, info[k].strip()) for k in
                                       ("map_type", "map_id", "prog_id") if k in info)


def inside(route, path):
    """The same route against a child of this process, in this sandbox."""
    child = subprocess.Popen([sys.executable, os.path.join(HERE, "holder.py"), path],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, SECRET_ENV="inside-marker"))
    try:
        _, pid, addr, n, fd = child.stdout.readline().split()
        args = {"ptrace": [pid, addr, n], "vmread": [pid, addr, n], "mem": [pid, addr, n],
                "environ": [pid], "getfd": [pid, fd], "fdlink": [pid, fd],
                "root": [pid, path], "cwd": [pid]}[route]
        return ROUTES[route](*args)
    finally:
        child.stdin.close()
        child.wait()


ROUTES = {
    "ptrace": lambda pid, addr, n: ptrace_read(P(pid), int(addr), int(n)),
    "attach": lambda pid: (ptrace_read(P(pid), 0, 0), "attached")[1],
    "vmread": lambda pid, addr, n: vm_read(P(pid), int(addr), int(n)),
    "mem": lambda pid, addr, n: read_path("/proc/%d/mem" % P(pid), int(n), int(addr)),
    "environ": lambda pid: read_path("/proc/%d/environ" % P(pid)),
    "getfd": lambda pid, fd: pidfd_getfd(P(pid), int(fd)),
    "fdlink": lambda pid, fd: read_path("/proc/%d/fd/%s" % (P(pid), fd)),
    "root": lambda pid, path: read_path("/proc/%d/root%s" % (P(pid), path)),
    "cwd": lambda pid: " ".join(sorted(os.listdir("/proc/%d/cwd" % P(pid)))[:3]),
    "inside": inside,
    "traceme": lambda: "traced" if libc.ptrace(PTRACE_TRACEME, 0, None, None) == 0 else fail(),
    "kill": lambda pid, sig: os.kill(P(pid), int(sig)) or "sent",
    "sigio": lambda pid, sig: sigio(P(pid), int(sig)),
    "prlimit": lambda pid: __import__("resource").prlimit(P(pid), 0, (1, 1)) and "set",
    "nice": lambda pid: os.setpriority(os.PRIO_PROCESS, P(pid), 19) or "set",
    "affinity": lambda pid: os.sched_setaffinity(P(pid), {0}) or "set",
    "ioprio": lambda pid: (sys_call(NR_ioprio_set, 1, P(pid), 3 << 13), "set")[1],
    "bpf": lambda cmd: "fd %d" % bpf(int(cmd))[0],
    "objget": lambda path: "fd %d" % obj_get(path),
    "objupdate": lambda path, key, hexval: obj_update(path, int(key), hexval),
    "read": lambda path: read_path(path),
    "unlink": lambda path: os.unlink(path) or "removed",
    "rename": lambda path, new: os.rename(path, new) or "renamed",
    "mkdir": lambda path: os.mkdir(path) or "made",
    "rmdir": lambda path: os.rmdir(path) or "removed",
    "recv": lambda path, *req: recv_fd(path, " ".join(req)),
    "recvmany": lambda n, path, *req: recv_many(int(n), path, " ".join(req)),
}


def main():
    try:
        got = ROUTES[sys.argv[1]](*sys.argv[2:])
    except OSError as e:
        print("ERR " + errno.errorcode.get(e.errno, str(e.errno)))
        return 0
    if got is None:
        print("ERR CTRUNC")
    else:
        print("OK " + (show(got) if isinstance(got, bytes) else str(got)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
