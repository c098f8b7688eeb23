# SPDX-License-Identifier: GPL-2.0-only
"""Build the container images of the Kubernetes node tests without a registry.

    mkimage.py BUSYBOX OUT.tar

OUT.tar is an OCI image layout (oci-layout, index.json, blobs/sha256/...)
that `ctr image import` loads. Both images share one layer: a root file
system made of a static busybox, one symlink per applet the tests use, and
a few files of /etc (among them /etc/shadow, the tests' denied file):

    localhost/bw-busybox:1   command /bin/sh, for the workloads
    localhost/bw-pause:1     command sleep, the process of a pod's sandbox

Every byte is deterministic (mtime 0, owner root), so the same busybox gives
the same digests run after run.
"""
import hashlib
import io
import json
import sys
import tarfile

APPLETS = ("sh cat echo ls mkdir rmdir ln sleep id true false test stat touch rm cp mv "
           "head tail grep sed wc dd kill ps mount umount chroot readlink realpath env").split()

ETC = {
    "etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
    "etc/group": "root:x:0:\nnogroup:x:65534:\n",
    "etc/shadow": "root:*:19000:0:99999:7:::\n",
    "etc/hostname": "bw-image\n",
    "etc/motd": "a file the profiles allow\n",
}

DIRS = "bin etc tmp proc sys dev root var var/run data".split()


def add(tar, name, data=None, mode=0o644, kind=tarfile.REGTYPE, target=""):
    ti = tarfile.TarInfo(name)
    ti.mtime = 0
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = "root"
    ti.type = kind
    ti.mode = mode
    if kind == tarfile.SYMTYPE:
        ti.linkname = target
        tar.addfile(ti)
    elif kind == tarfile.DIRTYPE:
        tar.addfile(ti)
    else:
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))


def rootfs_layer(busybox):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in DIRS:
            add(tar, d, kind=tarfile.DIRTYPE, mode=0o1777 if d == "tmp" else 0o755)
        with open(busybox, "rb") as f:
            add(tar, "bin/busybox", f.read(), mode=0o755)
        for a in APPLETS:
            add(tar, "bin/" + a, kind=tarfile.SYMTYPE, target="busybox")
        for name, text in ETC.items():
            add(tar, name, text.encode(), mode=0o640 if name.endswith("shadow") else 0o644)
    return buf.getvalue()


class Layout:
    def __init__(self):
        self.blobs = {}

    def blob(self, data, media_type):
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.blobs[digest] = data
        return {"mediaType": media_type, "digest": digest, "size": len(data)}


def dumps(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def image(layout, layer_desc, diff_id, cmd, name):
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Cmd": cmd, "Env": ["PATH=/bin"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "tests/k8s/mkimage.py"}],
    }
    cfg = layout.blob(dumps(config), "application/vnd.oci.image.config.v1+json")
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": cfg, "layers": [layer_desc]}
    desc = layout.blob(dumps(manifest), "application/vnd.oci.image.manifest.v1+json")
    desc["annotations"] = {"io.containerd.image.name": name,
                           "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1]}
    desc["platform"] = {"architecture": "amd64", "os": "linux"}
    return desc


def main(busybox, out):
    layout = Layout()
    layer = rootfs_layer(busybox)
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    layer_desc = layout.blob(layer, "application/vnd.oci.image.layer.v1.tar")
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": [
                 image(layout, layer_desc, diff_id, ["/bin/sh"], "localhost/bw-busybox:1"),
                 image(layout, layer_desc, diff_id, ["/bin/sleep", "2147483647"],
                       "localhost/bw-pause:1"),
             ]}
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        add(tar, "oci-layout", dumps({"imageLayoutVersion": "1.0.0"}))
        add(tar, "index.json", dumps(index))
        add(tar, "blobs", kind=tarfile.DIRTYPE, mode=0o755)
        add(tar, "blobs/sha256", kind=tarfile.DIRTYPE, mode=0o755)
        for digest, data in sorted(layout.blobs.items()):
            add(tar, "blobs/sha256/" + digest.split(":")[1], data)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: mkimage.py BUSYBOX OUT.tar")
    main(sys.argv[1], sys.argv[2])
