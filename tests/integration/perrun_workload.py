# SPDX-License-Identifier: GPL-2.0-only
"""A job that names its files after the run, as real jobs do: its PID, the
time, tempfile.mkstemp (plain, and with a prefix and a suffix), a random hex
suffix, a temporary file renamed into place, one removed when done. It also
reads its inputs, runs a helper and talks to a loopback server.

    perrun_workload.py JOB INPUTS PORT [--read F] [--write F] [--port P] [--program X]

The options are the variant: one new thing each (a file read or written
outside what was learned, another port, another program). Prints
"made NAME" for every per-run name it created, one "STEP OK" or
"STEP FAILED <errno name>" line per step, and exits 0 only if every step
succeeded."""
import errno
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time

job, inputs, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
extra = sys.argv[4:]
ok = True


def step(name, fn):
    """One step: NAME OK, or NAME FAILED and the errno's name (or the exit status)."""
    global ok
    try:
        fn()
        outcome = "OK"
    except OSError as e:
        outcome = "FAILED " + errno.errorcode.get(e.errno, str(e.errno))
    except subprocess.CalledProcessError as e:
        outcome = "FAILED exit %d" % e.returncode
    ok = ok and outcome == "OK"
    print(name, outcome)


def made(path):
    print("made", os.path.basename(path))
    return path


def read_inputs():
    for n in sorted(os.listdir(inputs)):
        with open(os.path.join(inputs, n)) as f:
            f.read()


def by_pid():
    p = made(os.path.join(job, "out-%d.txt" % os.getpid()))
    with open(p, "w") as f:
        f.write("pid\n")
    with open(p) as f:  # read back what it wrote
        f.read()


def by_time():
    with open(made(os.path.join(job, "log-%d.txt" % time.time_ns())), "w") as f:
        f.write("time\n")


def by_mkstemp():
    fd, p = tempfile.mkstemp(dir=job)
    made(p)
    os.write(fd, b"tmp\n")
    os.close(fd)
    with open(p) as f:
        f.read()
    os.unlink(p)  # a scratch file, removed when done


def by_mkstemp_prefixed():
    fd, p = tempfile.mkstemp(prefix="part-", suffix=".csv", dir=job)
    made(p)
    os.write(fd, b"a,b\n")
    os.close(fd)


def by_hex():
    with open(made(os.path.join(job, "blob-%s.bin" % secrets.token_hex(4))), "wb") as f:
        f.write(b"\0" * 16)


def renamed_into_place():
    fd, p = tempfile.mkstemp(prefix=".result-", dir=job)
    made(p)
    os.write(fd, b"{}\n")
    os.close(fd)
    os.replace(p, os.path.join(job, "result.json"))


def connect(p):
    socket.create_connection(("127.0.0.1", p), timeout=5).close()


def read(path):
    with open(path) as f:
        f.read()


def write(path):
    with open(path, "w") as f:
        f.write("new\n")


step("read", read_inputs)
step("pid", by_pid)
step("time", by_time)
step("mkstemp", by_mkstemp)
step("mkstemp-prefixed", by_mkstemp_prefixed)
step("hex", by_hex)
step("rename", renamed_into_place)
step("helper", lambda: subprocess.run(["/usr/bin/true"], check=True))
step("connect", lambda: connect(port))
for opt, arg in zip(extra[::2], extra[1::2]):
    if opt == "--read":
        step("new-read", lambda: read(arg))
    elif opt == "--write":
        step("new-write", lambda: write(arg))
    elif opt == "--port":
        step("new-port", lambda: connect(int(arg)))
    elif opt == "--program":
        step("new-program", lambda: subprocess.run([arg], check=True, stdout=subprocess.DEVNULL))
sys.exit(0 if ok else 1)
