#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# test-image.sh DEB: the agent's image built from deploy/image/Containerfile
# with the package test-deb.sh just built, offline but for the Debian
# archive (part of `make packagetest`):
#   - a Debian base made here with mmdebstrap from the archive (no registry);
#   - podman builds the Containerfile on it, in a storage of its own under
#     build/pkg/podman (this machine's images are not touched);
#   - every ELF file of the image belongs to a Debian package dpkg lists, so
#     a scanner sees each dependency (check-image-deb.py);
#   - the agent, the hook and install-hook.sh run from the image, at the
#     paths deploy/kubernetes/bpfwarden.yaml uses.
# This kernel has cgroup v1 controllers beside cgroup2, which crun refuses
# and runc takes; podman's default rlimits are above this machine's hard
# ones, so each container gets its own.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
WORK=$ROOT/build/pkg/image
deb=${1:?usage: test-image.sh DEB}
TAG=localhost/bpfwarden:test-deb
BASE=localhost/bw-debian-base:bookworm

fail() {
	echo "test-image: FAIL: $1" >&2
	[ -z "${2:-}" ] || printf '%s\n' "$2" | tail -n 40 >&2
	exit 1
}

pm() {
	podman --runtime=runc --root "$WORK/podman/root" --runroot "$WORK/podman/run" "$@"
}
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
in_image() {
	pm run --rm --network=none "${LIMITS[@]}" "$@"
}

for tool in podman runc mmdebstrap; do
	command -v $tool >/dev/null || fail "$tool is missing (tools/install-deps.sh installs it)"
done
rm -rf "$WORK"
mkdir -p "$WORK/context"
t=$SECONDS
if ! mmdebstrap --variant=minbase --format=tar bookworm "$WORK/base.tar" \
	>"$WORK/mmdebstrap.log" 2>&1; then
	fail "mmdebstrap of a bookworm base" "$(cat "$WORK/mmdebstrap.log")"
fi
out=$(pm import "$WORK/base.tar" "$BASE" 2>&1) || fail "podman import of the base" "$out"
rm -f "$WORK/base.tar"
cp "$deb" "$ROOT/deploy/image/install-hook.sh" "$WORK/context/" || fail "the build context"
if ! pm build "${LIMITS[@]}" --network=host --pull=never --build-arg BASE=$BASE \
	-f "$ROOT/deploy/image/Containerfile" -t $TAG "$WORK/context" >"$WORK/build.log" 2>&1; then
	fail "podman build of deploy/image/Containerfile" "$(cat "$WORK/build.log")"
fi
echo "test-image: base and image built in $((SECONDS - t))s"

# What a scanner reads: every ELF file is a file of a package dpkg lists.
out=$(pm create --name bw-test-image $TAG 2>&1) || fail "podman create" "$out"
out=$(pm export -o "$WORK/rootfs.tar" bw-test-image 2>&1) || fail "podman export" "$out"
pm rm bw-test-image >/dev/null 2>&1
out=$(python3 "$ROOT/tests/package/check-image-deb.py" "$WORK/rootfs.tar" 2>&1) ||
	fail "the image's files and its packages" "$out"
echo "test-image: $out"
rm -f "$WORK/rootfs.tar"

# The paths the DaemonSet uses, run.
ver=$(in_image $TAG --version 2>&1) || fail "bpfwarden --version in the image" "$ver"
[[ $ver == "bpfwarden "* ]] || fail "bpfwarden --version in the image says" "$ver"
want=$(dpkg-deb -f "$deb" Version)
[[ $ver =~ ^bpfwarden\ ${want%%-*}[\ +] ]] || fail "the image's agent is not the package's ($want)" "$ver"
out=$(in_image $TAG check /usr/share/bpfwarden/profiles/python-sandbox.profile 2>&1) ||
	fail "check of a shipped profile in the image (the library found by the agent)" "$out"
out=$(in_image --entrypoint /usr/bin/bpfwarden-hook $TAG --version 2>&1) ||
	fail "bpfwarden-hook --version in the image" "$out"
# The DaemonSet mounts the node's hook directory (hostPath DirectoryOrCreate).
mkdir -p "$WORK/host/opt/bpfwarden/bin"
out=$(in_image -v "$WORK/host:/host" --entrypoint /usr/lib/bpfwarden/install-hook.sh $TAG \
	/host 2>&1) || fail "install-hook.sh in the image" "$out"
[ -x "$WORK/host/opt/bpfwarden/bin/bpfwarden-hook" ] ||
	fail "install-hook.sh put no hook on the node" "$(find "$WORK/host" | head -20)"
cmp -s "$WORK/host/opt/bpfwarden/bin/bpfwarden-hook" <(dpkg-deb --fsys-tarfile "$deb" |
	tar -xOf - ./usr/sbin/bpfwarden-hook) || fail "the hook put on the node is not the package's"
echo "test-image: agent, hook and install-hook.sh run from the image ($ver)"
pm rmi -a -f >/dev/null 2>&1
rm -rf "$WORK"
echo "test-image: ok in $((SECONDS - t))s"
