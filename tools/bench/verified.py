#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""
verified.py: the verifier's work on each loaded bpfwarden program, as the
kernel counts it (struct bpf_prog_info.verified_insns, 5.16 and later):
the instructions it walked, which is what a first start of a boot spends
its time on (tools/bench/start.sh). Root, in a guest with the programs
loaded. Prints one line per program, the costliest first, then the total.
"""
import ctypes
import os
import sys

BPF_PROG_GET_NEXT_ID, BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD = 11, 13, 15
NR_BPF = 321  # x86_64
# Offsets in struct bpf_prog_info (include/uapi/linux/bpf.h).
INFO_NAME, INFO_VERIFIED_INSNS, INFO_SIZE = 64, 216, 224

libc = ctypes.CDLL(None, use_errno=True)


class IdAttr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32), ("next_id", ctypes.c_uint32),
                ("open_flags", ctypes.c_uint32)]


class InfoAttr(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_uint32), ("len", ctypes.c_uint32), ("info", ctypes.c_uint64)]


def bpf(cmd, attr):
    return libc.syscall(NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))


def programs():
    """(name, verified instructions) of every loaded program."""
    prog_id = 0
    while True:
        a = IdAttr(prog_id)
        if bpf(BPF_PROG_GET_NEXT_ID, a) < 0:
            return
        prog_id = a.next_id
        fd = bpf(BPF_PROG_GET_FD_BY_ID, IdAttr(prog_id))
        if fd < 0:
            continue  # unloaded since
        buf = ctypes.create_string_buffer(INFO_SIZE)
        try:
            if bpf(BPF_OBJ_GET_INFO_BY_FD, InfoAttr(fd, INFO_SIZE, ctypes.addressof(buf))) == 0:
                raw = buf.raw
                name = raw[INFO_NAME:INFO_NAME + 16].split(b"\0")[0].decode()
                yield name, int.from_bytes(raw[INFO_VERIFIED_INSNS:INFO_VERIFIED_INSNS + 4],
                                           "little")
        finally:
            os.close(fd)


def main():
    rows = sorted((p for p in programs() if p[0].startswith("bw_")), key=lambda p: -p[1])
    if not rows:
        print("verified.py: no bpfwarden program is loaded", file=sys.stderr)
        return 1
    if not any(n for _, n in rows):
        print("verified.py: this kernel does not count verified instructions (5.16 and later)",
              file=sys.stderr)
        return 1
    for name, n in rows:
        print("%-20s %10d" % (name, n))
    print("%-20s %10d" % ("all %d programs" % len(rows), sum(n for _, n in rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
