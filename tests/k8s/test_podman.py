# SPDX-License-Identifier: GPL-2.0-only
"""The node agent under podman (Debian's 4.3 with runc, tests/k8s/podman.sh),
in the VM: podman reads bpfwarden-hook's registration from a hooks.d
directory, the file deploy/image/install-hook.sh writes on a node, and
calls the hook at createRuntime as CRI-O does. A container run with the
annotation `bpfwarden.io/profile` is governed from its first instruction;
one without is untouched; with the daemon down a selected container does not
start and an unselected one does.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

DATA = os.environ.get("BW_PODMAN_DATA", "/tmp/bw-podman")
# The daemon's policy directory and log of its own, not those the
# containerd suite (test_k8s.py) left in the same guest.
os.environ["BW_K8S_DATA"] = os.path.join(DATA, "daemon")

import bwtest  # noqa: E402
from bwtest import check, check_eq, skip  # noqa: E402
import test_k8s as node  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PODMAN = os.path.join(HERE, "podman.sh")
CACHE = os.environ.get("BW_VM_CACHE", "/var/cache/bpfwarden-vm")
NODE_TREE = os.path.join(DATA, "node")   # the node's /, as the init container sees it
HOOKS_DIR = os.path.join(NODE_TREE, "usr", "share", "containers", "oci", "hooks.d")
IMAGE = "localhost/bw-busybox:1"
state = {"up": False}


def podman(*args, timeout=120):
    p = subprocess.run([PODMAN] + list(args), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout.splitlines(), p.stderr


def up():
    """podman's configuration and image, the hook installed by install-hook.sh, the daemon."""
    if state["up"] and node.state["daemon"] and node.state["daemon"].poll() is None:
        return
    rc, out, err = podman("setup", timeout=600)
    check_eq(rc, 0, "podman.sh setup: %s %s" % (out, err))
    shutil.rmtree(NODE_TREE, ignore_errors=True)
    for d in ("opt/bpfwarden/bin", "usr/share/containers/oci/hooks.d",
              "etc/containers/oci/hooks.d"):
        os.makedirs(os.path.join(NODE_TREE, d))
    p = subprocess.run([os.path.join(ROOT, "deploy", "image", "install-hook.sh"), NODE_TREE],
                       env=dict(os.environ, BW_HOOK_BIN=os.path.join(ROOT, "build", "bpfwarden-hook")),
                       capture_output=True, text=True)
    check_eq(p.returncode, 0, "install-hook.sh: %s %s" % (p.stdout, p.stderr))
    # As written for the node, but for where the node's / is here.
    for d in (HOOKS_DIR, os.path.join(NODE_TREE, "etc", "containers", "oci", "hooks.d")):
        path = os.path.join(d, "bpfwarden.json")
        check(os.path.exists(path), "install-hook.sh wrote no %s" % path)
        with open(path) as f:
            reg = json.load(f)
        check_eq(reg["stages"], ["createRuntime"], "the hook's stage")
        reg["hook"]["path"] = NODE_TREE + reg["hook"]["path"]
        with open(path, "w") as f:
            json.dump(reg, f)
    os.makedirs(node.DATA, exist_ok=True)
    node.configmap(node.profiles())
    node.start_daemon()
    state["up"] = True


def run(name, command, profile=None):
    """podman run as on a node (the hooks.d directory podman 4.3 reads by
    default): (exit code, output lines, container id)."""
    cidfile = os.path.join(DATA, name + ".cid")
    args = ["run", "--hooks-dir", HOOKS_DIR, "--name", name, "--cidfile", cidfile]
    if profile:
        args += ["--annotation", "bpfwarden.io/profile=" + profile]
    rc, out, err = podman(*(args + [IMAGE] + command))
    cid = ""
    try:
        with open(cidfile) as f:
            cid = f.read().strip()
    except FileNotFoundError:
        pass
    return rc, out + err.splitlines(), cid


def deny_events(cid, path):
    return [e for e in node.log_events() if e["type"] == "deny" and e.get("path") == path
            and e.get("k8s", {}).get("container_id") == cid]


def test_podman_first_instruction():
    """The container's very first command is a denied open: it fails with
    EACCES, and the deny event names the container and the cgroup podman
    made for it."""
    up()
    rc, out, cid = run("pm-first", ["/bin/cat", "/etc/shadow"], profile="web")
    check(rc != 0, "cat /etc/shadow succeeded in a governed container: %s" % out)
    check(any("Permission denied" in line for line in out), "no EACCES in %s" % out)
    check(cid, "podman wrote no container id")
    node.wait_for(lambda: deny_events(cid, "/etc/shadow"), what="the deny event")
    ev = deny_events(cid, "/etc/shadow")[0]
    check(ev["cgroup"]["path"].endswith("/libpod-" + cid), "cgroup path %s" % ev["cgroup"]["path"])
    check_eq(ev["profile"], "web", "profile")
    check_eq(ev["proc"]["comm"], "cat", "the denied process")


def test_podman_unselected_untouched():
    """Without the annotation, the same read works: the route is real."""
    up()
    rc, out, cid = run("pm-plain", ["/bin/cat", "/etc/shadow"])
    check_eq(rc, 0, "cat /etc/shadow in an unselected container (%s)" % out)
    check(not [e for e in node.log_events() if e.get("k8s", {}).get("container_id") == cid],
          "events of an unselected container")


def test_podman_daemon_down():
    """Fail closed: with the daemon down a selected container does not start
    (its command never runs); an unselected one does."""
    up()
    node.stop_daemon()
    try:
        rc, out, _ = run("pm-down", ["/bin/echo", "ran"], profile="web")
        check(rc != 0 and "ran" not in out,
              "a selected container started with the daemon down: rc %d, %s" % (rc, out))
        rc, out, _ = run("pm-down-plain", ["/bin/echo", "ran"])
        check(rc == 0 and "ran" in out, "an unselected container with the daemon down: %s" % out)
    finally:
        node.start_daemon()


def teardown():
    podman("rm", "-a", "-f")
    node.stop_daemon()


TESTS = [test_podman_first_instruction, test_podman_unselected_untouched, test_podman_daemon_down]


def guarded(t):
    def g():
        if not os.path.exists(os.path.join(CACHE, "containers", "podman", "complete")):
            skip("no podman in %s: run tools/vm/fetch-containers.sh" % CACHE)
        t()
    g.__name__ = t.__name__
    return g


if __name__ == "__main__":
    try:
        rc = bwtest.main([guarded(t) for t in TESTS], sys.argv)
    finally:
        teardown()
    sys.exit(rc)
