# SPDX-License-Identifier: GPL-2.0-only
"""A process that holds a secret three ways, for the routes that try to take
it from another process: in its memory, in its environment (SECRET_ENV, set
by whoever starts it), and as an open descriptor of the file.

    holder.py FILE

It reads FILE into a buffer, keeps FILE open, prints
"READY PID ADDRESS LENGTH FD" and waits until its standard input closes.
"""
import ctypes
import os
import sys

with open(sys.argv[1], "rb") as f:
    data = f.read()
buf = ctypes.create_string_buffer(data, len(data))
fd = os.open(sys.argv[1], os.O_RDONLY)
print("READY %d %d %d %d" % (os.getpid(), ctypes.addressof(buf), len(data), fd), flush=True)
sys.stdin.read()
