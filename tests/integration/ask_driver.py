# SPDX-License-Identifier: GPL-2.0-only
"""Runs inside a sandbox and stays there: does what each line of its standard
input asks and answers it with one line, "OK" or "ERR <errno name>", so a
test can change the kernel's state between two operations of one governed
process. It prints "READY" first.

    open PATH       open(2) for reading
    connect PORT    a TCP connect(2) to 127.0.0.1:PORT
    exec PATH       fork and execve(2) PATH (OK: it ran, whatever its status)
"""
import os
import socket
import sys

from net_driver import attempt


def do_open(path):
    os.close(os.open(path, os.O_RDONLY))


def do_connect(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.connect(("127.0.0.1", int(port)))


def do_exec(path):
    os.waitpid(os.posix_spawn(path, [path], {}), 0)


OPS = {"open": do_open, "connect": do_connect, "exec": do_exec}
print("READY", flush=True)
for line in sys.stdin:
    op, arg = line.split()
    print(attempt(lambda: OPS[op](arg)), flush=True)
