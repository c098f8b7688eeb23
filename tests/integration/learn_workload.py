# SPDX-License-Identifier: GPL-2.0-only
"""The round-trip workload: reads inputs, writes in a scratch directory, runs
a helper program, imports modules and talks to a loopback server. With
--variant it also opens a new file, reaches a new port and runs a new
program; it prints one line per step and exits 0 only if all succeeded."""
import email.parser  # noqa: F401  (an import-heavy module)
import json
import os
import socket
import subprocess
import sys

base, port, port2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
variant = "--variant" in sys.argv
ok = True


def step(name, fn):
    global ok
    try:
        fn()
        print(name, "OK")
    except (OSError, subprocess.CalledProcessError) as e:
        ok = False
        print(name, "FAILED", e)


def read_inputs():
    for n in sorted(os.listdir(base + "/in")):
        with open(os.path.join(base, "in", n)) as f:
            json.loads(f.read())


def write_out():
    with open(base + "/work/out.txt", "w") as f:
        f.write("done\n")


def connect(p):
    s = socket.create_connection(("127.0.0.1", p), timeout=5)
    s.close()


step("read", read_inputs)
step("write", write_out)
step("helper", lambda: subprocess.run(["/usr/bin/true"], check=True))
step("connect", lambda: connect(port))
if variant:
    step("new-file", lambda: open(base + "/other/new.txt").close())
    step("new-port", lambda: connect(port2))
    step("new-program", lambda: subprocess.run(["/usr/bin/id"], check=True,
                                               stdout=subprocess.DEVNULL))
sys.exit(0 if ok else 1)
