#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""`make image`'s OCI archive as an image scanner reads it: every ELF file
in it but bpfwarden's own is a file of a Debian package the image lists in
/var/lib/dpkg/status.d, with the MD5 that package gives it, and each listed
package has its control fields and its copyright file.

    check-image.py IMAGE.tar
"""
import hashlib
import io
import json
import sys
import tarfile

OWN = {"usr/bin/bpfwarden", "usr/bin/bpfwarden-hook"}
EXPECTED = {"libbpf1", "libelf1", "zlib1g", "libc6", "busybox-static"}


def layer_of(archive):
    outer = tarfile.open(archive)
    blob = lambda d: outer.extractfile("blobs/sha256/" + d.split(":", 1)[1]).read()  # noqa: E731
    index = json.loads(outer.extractfile("index.json").read())
    manifest = json.loads(blob(index["manifests"][0]["digest"]))
    (layer,) = manifest["layers"]
    return tarfile.open(fileobj=io.BytesIO(blob(layer["digest"])))


def main(archive):
    t = layer_of(archive)
    files = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
    status = {n.rsplit("/", 1)[1]: d.decode() for n, d in files.items()
              if n.startswith("var/lib/dpkg/status.d/") and not n.endswith(".md5sums")}
    listed = {}
    problems = []
    for pkg, control in sorted(status.items()):
        fields = dict(line.split(": ", 1) for line in control.splitlines() if ": " in line)
        for f in ("Package", "Version", "Architecture"):
            if not fields.get(f):
                problems.append("%s: no %s field" % (pkg, f))
        if fields.get("Package") != pkg:
            problems.append("status.d/%s names package %r" % (pkg, fields.get("Package")))
        if "usr/share/doc/%s/copyright" % pkg not in files:
            problems.append("%s: no copyright file" % pkg)
        sums = files.get("var/lib/dpkg/status.d/%s.md5sums" % pkg, b"").decode()
        for line in sums.splitlines():
            md5, path = line.split("  ", 1)
            if path in listed:
                problems.append("%s is listed by %s and %s" % (path, listed[path][0], pkg))
            listed[path] = (pkg, md5)
    elves = sorted(n for n, d in files.items() if d[:4] == b"\x7fELF" and n not in OWN)
    for name in elves:
        if name not in listed:
            problems.append("%s: an ELF file of no listed package" % name)
        elif hashlib.md5(files[name]).hexdigest() != listed[name][1]:
            problems.append("%s: not the bytes of package %s" % (name, listed[name][0]))
    for path, (pkg, _) in sorted(listed.items()):
        if path not in files:
            problems.append("%s lists %s, which the image does not hold" % (pkg, path))
    for pkg in sorted(EXPECTED - set(status)):
        problems.append("package %s is not listed" % pkg)
    for p in problems:
        print("check-image: " + p)
    if not problems:
        print("%d ELF files, each of one of %d listed Debian packages (%s)"
              % (len(elves), len(status), ", ".join(sorted(status))))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
