# SPDX-License-Identifier: GPL-2.0-only
"""Reads each file named on the command line, as a deploy script reads its
keys, and prints one line per file: "OK" or "ERR <errno name>"."""
import errno
import sys

for path in sys.argv[1:]:
    try:
        with open(path, "rb") as f:
            f.read()
        print("OK")
    except OSError as e:
        print("ERR " + errno.errorcode.get(e.errno, str(e.errno)))
