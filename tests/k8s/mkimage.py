# SPDX-License-Identifier: GPL-2.0-only
"""Build the container images of the Kubernetes node tests without a registry.

    mkimage.py BUSYBOX OUT.tar

OUT.tar is an OCI image layout (tools/oci.py) that `ctr image import`
loads. Both images share one layer: a root file system made of a static
busybox, one symlink per applet the tests use, and a few files of /etc
(among them /etc/shadow, the tests' denied file):

    localhost/bw-busybox:1   command /bin/sh, for the workloads
    localhost/bw-pause:1     command sleep, the process of a pod's sandbox
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import oci  # noqa: E402

APPLETS = ("sh cat echo ls mkdir rmdir ln sleep id true false test stat touch rm cp mv "
           "head tail grep sed wc dd kill ps mount umount chroot readlink realpath env").split()

ETC = {
    "etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
    "etc/group": "root:x:0:\nnogroup:x:65534:\n",
    "etc/shadow": "root:*:19000:0:99999:7:::\n",
    "etc/hostname": "bw-image\n",
    "etc/motd": "a file the profiles allow\n",
}

DIRS = "bin etc tmp proc sys dev root var/run data".split()


def main(busybox, out):
    fs = oci.Rootfs()
    for d in DIRS:
        fs.dir(d, mode=0o1777 if d == "tmp" else 0o755)
    with open(busybox, "rb") as f:
        fs.file("bin/busybox", f.read(), mode=0o755)
    for a in APPLETS:
        fs.symlink("bin/" + a, "busybox")
    for name, text in ETC.items():
        fs.file(name, text.encode(), mode=0o640 if name.endswith("shadow") else 0o644)
    layout = oci.Layout()
    layer = layout.layer(fs.close())
    env = ["PATH=/bin"]
    layout.image("localhost/bw-busybox:1", layer, {"Cmd": ["/bin/sh"], "Env": env})
    layout.image("localhost/bw-pause:1", layer,
                 {"Cmd": ["/bin/sleep", "2147483647"], "Env": env})
    layout.write(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: mkimage.py BUSYBOX OUT.tar")
    main(sys.argv[1], sys.argv[2])
