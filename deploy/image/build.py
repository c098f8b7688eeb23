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
"""
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


def main(build, version, out):
    agent = os.path.join(build, "bpfwarden")
    hook = os.path.join(build, "bpfwarden-hook")
    fs = oci.Rootfs()
    fs.dir("tmp", mode=0o1777)
    fs.dir("etc/bpfwarden/profiles")
    fs.dir("run/bpfwarden")
    fs.file("usr/bin/bpfwarden", read(agent), mode=0o755)
    fs.file("usr/bin/bpfwarden-hook", read(hook), mode=0o755)
    for lib in shared_libs(agent):
        real = os.path.realpath(lib)
        fs.file(real, read(real), mode=0o755)
        if real != lib:
            fs.symlink(lib, real)
    fs.file("usr/lib/bpfwarden/install-hook.sh", read(os.path.join(HERE, "install-hook.sh")),
            mode=0o755)
    fs.file("bin/busybox", read(BUSYBOX), mode=0o755)
    for a in APPLETS:
        fs.symlink("bin/" + a, "busybox")
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
