# SPDX-License-Identifier: GPL-2.0-only
"""OCI images without a registry or a container engine: a root file system
as one tar layer, its config and manifest, in an OCI image layout tar that
`ctr image import`, `podman load` and `skopeo copy oci-archive:` read.
Deterministic: every entry has mtime 0 and owner root, so the same files
give the same digests.

Used by deploy/image/build.py (the agent's image) and tests/k8s/mkimage.py
(the test images).
"""
import hashlib
import io
import json
import tarfile


def tar_add(tar, name, data=None, mode=0o644, kind=tarfile.REGTYPE, target=""):
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


class Rootfs:
    """A layer being written: directories, files, symlinks, in that order of calls."""

    def __init__(self):
        self.buf = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buf, mode="w", format=tarfile.PAX_FORMAT)
        self.dirs = set()

    def dir(self, path, mode=0o755):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d and d not in self.dirs:
                self.dirs.add(d)
                tar_add(self.tar, d, kind=tarfile.DIRTYPE, mode=mode if i == len(parts) else 0o755)

    def file(self, path, data, mode=0o644):
        path = path.strip("/")
        if "/" in path:
            self.dir(path.rsplit("/", 1)[0])
        tar_add(self.tar, path, data, mode=mode)

    def symlink(self, path, target):
        path = path.strip("/")
        if "/" in path:
            self.dir(path.rsplit("/", 1)[0])
        tar_add(self.tar, path, kind=tarfile.SYMTYPE, target=target)

    def close(self):
        self.tar.close()
        return self.buf.getvalue()


def dumps(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


class Layout:
    """The blobs and manifests of an OCI image layout."""

    def __init__(self):
        self.blobs = {}
        self.manifests = []

    def blob(self, data, media_type):
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.blobs[digest] = data
        return {"mediaType": media_type, "digest": digest, "size": len(data)}

    def layer(self, data):
        """An uncompressed layer: (its descriptor, its diff id)."""
        return (self.blob(data, "application/vnd.oci.image.layer.v1.tar"),
                "sha256:" + hashlib.sha256(data).hexdigest())

    def image(self, name, layer, config):
        """An image NAME (registry/repo:tag) of one layer; config is the image
        config's "config" object (Cmd, Entrypoint, Env, WorkingDir...)."""
        desc, diff_id = layer
        cfg = {
            "architecture": "amd64",
            "os": "linux",
            "config": config,
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        }
        cdesc = self.blob(dumps(cfg), "application/vnd.oci.image.config.v1+json")
        manifest = {"schemaVersion": 2,
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": cdesc, "layers": [desc]}
        mdesc = self.blob(dumps(manifest), "application/vnd.oci.image.manifest.v1+json")
        mdesc["annotations"] = {"io.containerd.image.name": name,
                                "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1]}
        mdesc["platform"] = {"architecture": "amd64", "os": "linux"}
        self.manifests.append(mdesc)

    def write(self, out):
        index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                 "manifests": self.manifests}
        with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
            tar_add(tar, "oci-layout", dumps({"imageLayoutVersion": "1.0.0"}))
            tar_add(tar, "index.json", dumps(index))
            tar_add(tar, "blobs", kind=tarfile.DIRTYPE, mode=0o755)
            tar_add(tar, "blobs/sha256", kind=tarfile.DIRTYPE, mode=0o755)
            for digest, data in sorted(self.blobs.items()):
                tar_add(tar, "blobs/sha256/" + digest.split(":")[1], data)
