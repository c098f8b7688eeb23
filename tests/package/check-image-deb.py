#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""check-image-deb.py ROOTFS.tar: the image of deploy/image/Containerfile as
an image scanner reads it. Every regular ELF file is a file of a package
dpkg lists (var/lib/dpkg/info/PKG.list, with merged /usr: /lib/x is
/usr/lib/x), bpfwarden among them, with libbpf1, libelf1 and zlib1g
installed as packages, not copied. Prints a one-line summary; exits 1 with
the files that are nobody's."""
import sys
import tarfile

NEEDED = ("bpfwarden", "libbpf1", "libelf1", "zlib1g", "libc6")


def main(path):
    owned, installed, elves = {}, set(), []
    with tarfile.open(path) as t:
        for m in t:
            name = "/" + m.name.lstrip("./")
            if name.startswith("/var/lib/dpkg/info/") and name.endswith(".list"):
                pkg = name.rsplit("/", 1)[1][:-5].split(":")[0]
                for line in t.extractfile(m).read().decode().splitlines():
                    owned.setdefault(line, pkg)
            elif name == "/var/lib/dpkg/status":
                pkg = None
                for line in t.extractfile(m).read().decode().splitlines():
                    if line.startswith("Package: "):
                        pkg = line[9:]
                    elif line.startswith("Status: ") and line.endswith(" installed"):
                        installed.add(pkg)
            elif m.isfile() and m.size >= 4 and t.extractfile(m).read(4) == b"\x7fELF":
                elves.append(name)

    def owner(p):
        alt = p[4:] if p.startswith("/usr/") else "/usr" + p
        return owned.get(p) or owned.get(alt)

    orphans = [e for e in elves if not owner(e)]
    missing = [p for p in NEEDED if p not in installed]
    if orphans or missing or not elves:
        print("ELF files of no package: %s; packages not installed: %s; %d ELF files"
              % (orphans[:20], missing, len(elves)))
        return 1
    ours = sorted(e for e in elves if owner(e) == "bpfwarden")
    print("%d ELF files, all of %d installed packages (bpfwarden's: %s)"
          % (len(elves), len(installed), " ".join(ours)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
