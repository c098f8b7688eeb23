# SPDX-License-Identifier: GPL-2.0-only
"""The agent's container image, built from this checkout without a registry
or a container engine (`make image`):

    build.py BUILD_DIR VERSION OUT.tar

The image localhost/bpfwarden:VERSION holds bpfwarden and the shared
libraries it links (as found on this machine, with the dynamic loader),
bpfwarden-hook (static, for the init container to copy onto the node), the
profile library, install-hook.sh and a static busybox for its shell. Load
it on each node with `ctr -n k8s.io images import OUT.tar` (containerd) or
`podman load -i OUT.tar` (CRI-O, podman).

Every file taken from this machine is a file of one of its Debian packages,
and the image says which, as distroless images do: each package's control
fields in /var/lib/dpkg/status.d/PKG, the files of it the image holds with
their MD5 in status.d/PKG.md5sums, and its copyright file. Image scanners
(Trivy, Grype, Syft) read those, so they see libbpf, libelf, zlib, glibc and
busybox at their exact Debian versions. A file whose bytes differ from its
package's is refused: the image would lie about it.
"""
import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import oci  # noqa: E402

BUSYBOX = "/bin/busybox"
APPLETS = "sh chmod mv ln grep cat echo cp rm mkdir".split()


def shared_libs(binary):
    """The libraries ldd resolves for binary, and the dynamic loader."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) >= 3 and parts[2].startswith("/"):
            libs.append(parts[2])
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])
    return libs


def read(path):
    with open(path, "rb") as f:
        return f.read()


def packaged_as(path):
    """(package, the path as the package lists the file) of a file of this
    machine. With merged /usr a library is listed under /lib or /usr/lib and
    reached through the other, and the name ldd gives may be a symlink of
    the package: each spelling is asked, the file's own first, and only one
    the package has an MD5 of (a file, not a symlink) is taken."""
    real = os.path.realpath(path)
    names = []
    for p in (real, path):
        names += [p, p[4:] if p.startswith("/usr/") else "/usr" + p]
    for name in names:
        r = subprocess.run(["dpkg-query", "-S", name], capture_output=True, text=True)
        for line in r.stdout.splitlines() if r.returncode == 0 else []:
            pkg = line.split(":", 1)[0].strip()
            if not line.startswith("diversion by") and name.lstrip("/") in md5sums_of(pkg):
                return pkg, name
    sys.exit("build.py: %s is a file of no Debian package on this machine" % path)


def md5sums_of(pkg):
    """{path without its leading '/': md5} of an installed package."""
    arch = subprocess.run(["dpkg-query", "-W", "-f=${Architecture}", pkg], capture_output=True,
                          text=True, check=True).stdout
    for name in (pkg + ":" + arch, pkg):
        try:
            with open("/var/lib/dpkg/info/%s.md5sums" % name) as f:
                return dict(reversed(line.rstrip("\n").split("  ", 1)) for line in f if line.strip())
        except FileNotFoundError:
            pass
    sys.exit("build.py: no md5sums of package %s" % pkg)


# What status.d holds of a package: its control fields, as dpkg keeps them.
CONTROL = ("Package", "Source", "Version", "Architecture", "Maintainer", "Installed-Size",
           "Depends", "Pre-Depends", "Homepage")


class Packages:
    """The Debian packages the image's files come from."""

    def __init__(self):
        self.files = {}  # package -> [(path in the image, md5)]

    def take(self, fs_path, host_path, data):
        """Record that fs_path in the image is host_path of this machine, data its bytes."""
        pkg, listed = packaged_as(host_path)
        md5 = hashlib.md5(data).hexdigest()
        want = md5sums_of(pkg).get(listed.lstrip("/"))
        if want != md5:
            sys.exit("build.py: %s differs from package %s's %s (md5 %s, listed %s)"
                     % (host_path, pkg, listed, md5, want))
        self.files.setdefault(pkg, []).append((fs_path.lstrip("/"), md5))

    def write(self, fs):
        for pkg in sorted(self.files):
            fmt = "".join("%s: ${%s}\n" % (f, f) for f in CONTROL)
            fmt += "Description: ${binary:Summary}\n"
            fields = subprocess.run(["dpkg-query", "-W", "-f=" + fmt, pkg], capture_output=True,
                                    text=True, check=True).stdout
            # Fields a package does not have are left out, as dpkg leaves them.
            text = "".join(line + "\n" for line in fields.splitlines() if not line.endswith(": "))
            fs.file("var/lib/dpkg/status.d/" + pkg, text.encode())
            fs.file("var/lib/dpkg/status.d/%s.md5sums" % pkg,
                    "".join("%s  %s\n" % (m, p) for p, m in sorted(self.files[pkg])).encode())
            copyright = "/usr/share/doc/%s/copyright" % pkg
            if os.path.exists(copyright):
                fs.file(copyright, read(copyright))


def main(build, version, out):
    agent = os.path.join(build, "bpfwarden")
    hook = os.path.join(build, "bpfwarden-hook")
    fs = oci.Rootfs()
    fs.dir("tmp", mode=0o1777)
    fs.dir("etc/bpfwarden/profiles")
    fs.dir("run/bpfwarden")
    fs.file("usr/bin/bpfwarden", read(agent), mode=0o755)
    fs.file("usr/bin/bpfwarden-hook", read(hook), mode=0o755)
    pkgs = Packages()
    for lib in shared_libs(agent):
        real = os.path.realpath(lib)
        data = read(real)
        fs.file(real, data, mode=0o755)
        pkgs.take(real, lib, data)
        if real != lib:
            fs.symlink(lib, real)
    fs.file("usr/lib/bpfwarden/install-hook.sh", read(os.path.join(HERE, "install-hook.sh")),
            mode=0o755)
    data = read(BUSYBOX)
    fs.file("bin/busybox", data, mode=0o755)
    pkgs.take("bin/busybox", BUSYBOX, data)
    for a in APPLETS:
        fs.symlink("bin/" + a, "busybox")
    pkgs.write(fs)
    lib = os.path.join(ROOT, "profiles")
    for dirpath, _, files in sorted(os.walk(lib)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            fs.file("usr/share/bpfwarden/profiles/" + os.path.relpath(path, lib), read(path))
    layout = oci.Layout()
    layer = layout.layer(fs.close())
    layout.image("localhost/bpfwarden:" + version, layer, {
        "Entrypoint": ["/usr/bin/bpfwarden"],
        "Cmd": ["daemon", "--policy-dir=/etc/bpfwarden/profiles"],
        "Env": ["PATH=/usr/bin:/bin", "BPFWARDEN_PROFILE_DIR=/usr/share/bpfwarden/profiles"],
        "Labels": {"org.opencontainers.image.title": "bpfwarden",
                   "org.opencontainers.image.version": version},
    })
    layout.write(out)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: build.py BUILD_DIR VERSION OUT.tar")
    main(*sys.argv[1:])
