# SPDX-License-Identifier: GPL-2.0-only
"""Runs inside a sandbox: tries each route to running code that is mapped
rather than executed, and prints one line per attempt (tests/escape/escape.py):

  preload:LIB,MARK       LD_PRELOAD=LIB into /usr/bin/true
  dlopen-memfd:LIB,MARK  LIB's bytes in a memfd, dlopen("/proc/self/fd/N")
  loader:PROG,ARG        the dynamic loader run directly: LOADER PROG ARG
  mmap:FILE              mmap(FILE, PROT_READ|PROT_EXEC)
  mprotect:FILE          mmap(FILE, PROT_READ), then mprotect(PROT_READ|PROT_EXEC)
  anon                   anonymous memory mapped, then made, executable

"OK ran" when the code ran (MARK, which libbwmark.so's constructor or the
program writes, exists), "OK" for a mapping that was made. A mapping the
kernel refused directly is "ERR <errno>". The loader does not say the errno
of a mapping it could not make: it says "failed to map segment from shared
object", which is reported as "ERR MAP_FAILED" (the deny event says why).
"""
import ctypes
import errno
import mmap
import os
import subprocess
import sys

LOADER = "/lib64/ld-linux-x86-64.so.2"
LOADER_REFUSED = "failed to map segment from shared object"
PROT_READ, PROT_EXEC = 0x1, 0x4
MAP_PRIVATE, MAP_ANONYMOUS = 0x02, 0x20

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_FAILED = ctypes.c_void_p(-1).value


def err(e):
    return "ERR " + errno.errorcode.get(e, str(e))


def ran(mark, detail):
    """What the loader's attempt came to: the mark says whether the code ran."""
    if os.path.exists(mark):
        return "OK ran"
    if LOADER_REFUSED in detail:
        return "ERR MAP_FAILED"
    return "ERR OTHER " + " ".join(detail.split())[:200]


def preload(lib, mark):
    r = subprocess.run(["/usr/bin/true"], env={"LD_PRELOAD": lib, "BW_MARK": mark},
                       capture_output=True, text=True)
    return ran(mark, r.stderr)


def dlopen_memfd(lib, mark):
    fd = os.memfd_create("payload", 0)
    with open(lib, "rb") as f:
        os.write(fd, f.read())
    os.environ["BW_MARK"] = mark
    try:
        ctypes.CDLL("/proc/self/fd/%d" % fd)
        detail = ""
    except OSError as e:
        detail = str(e)
    return ran(mark, detail)


def loader(prog, arg):
    r = subprocess.run([LOADER, prog, arg], capture_output=True, text=True)
    return ran(arg, r.stderr)


def map_file(path, prot):
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        addr = libc.mmap(None, size, prot, MAP_PRIVATE, fd, 0)
        if addr in (None, MAP_FAILED):
            return None, ctypes.get_errno(), size
        return addr, 0, size
    finally:
        os.close(fd)


def mmap_exec(path):
    addr, e, size = map_file(path, PROT_READ | PROT_EXEC)
    if e:
        return err(e)
    libc.munmap(addr, size)
    return "OK"


def mprotect_exec(path):
    addr, e, size = map_file(path, PROT_READ)
    if e:
        return "ERR (mapping it readable) " + err(e)
    rc = libc.mprotect(addr, size, PROT_READ | PROT_EXEC)
    e = ctypes.get_errno()
    libc.munmap(addr, size)
    return err(e) if rc else "OK"


def anon():
    size = mmap.PAGESIZE
    addr = libc.mmap(None, size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    if addr in (None, MAP_FAILED):
        return err(ctypes.get_errno())
    libc.munmap(addr, size)
    addr = libc.mmap(None, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    rc = libc.mprotect(addr, size, PROT_READ | PROT_EXEC)
    e = ctypes.get_errno()
    libc.munmap(addr, size)
    return err(e) if rc else "OK"


ROUTES = {
    "preload": preload,
    "dlopen-memfd": dlopen_memfd,
    "loader": loader,
    "mmap": mmap_exec,
    "mprotect": mprotect_exec,
    "anon": anon,
}

for spec in sys.argv[1:]:
    kind, _, arg = spec.partition(":")
    fn = ROUTES.get(kind)
    try:
        print(fn(*arg.split(",")) if arg else fn() if fn else "BAD " + spec)
    except OSError as e:
        print(err(e.errno))
    sys.stdout.flush()
