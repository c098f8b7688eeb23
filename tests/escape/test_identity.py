# SPDX-License-Identifier: GPL-2.0-only
"""Escape routes through the identity of objects (docs/threat-model.md,
"Objects that appear after the profile is loaded", "File handles",
"Overlays and detached trees"): a denied object reached by a name that is
not the rule's, or by no name at all.

Each test runs one hostile program (tests/helpers/idroute.c) twice,
in a fresh world each time: under a profile that forbids what it reaches
(refused, one deny event naming the real object) and under a permissive one
(it gets through: the route is real). Objects that "appear after load" are
made by this harness, outside the sandbox, after the agent says it governs
and before the program is let go.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from escape import (wait_governed, need_modules, BUILD, BW, RUNTIME_RULES, SCRATCH, Failure, cgroup_root, check, check_eq, denials, events,
                    got_through, main, profile, read, refused, skip, wait_for, write)

S = SCRATCH
IDROUTE = os.path.join(BUILD, "tests", "idroute")
SECRET = "s3cret-bytes"
PERMISSIVE = "default allow\n"


class Outcome:
    """What bpfwarden run gave: the program's output and the events."""

    def __init__(self, rc, stdout, stderr, log):
        self.rc, self.stdout, self.stderr, self.log = rc, stdout, stderr, log
        self.events = events(log)


class World:
    """Mounts and processes a test made, undone in reverse order."""

    def __init__(self):
        self.undo = []
        self.inside = []  # pids attempt() moves into the sandbox's cgroup

    def sh(self, *cmd):
        subprocess.run(list(cmd), check=True)

    def mount(self, *args):
        target = args[-1]
        self.sh("mount", *args)
        self.undo.append(["umount", "-l", target])

    def close(self):
        for cmd in reversed(self.undo):
            if callable(cmd):
                cmd()
            else:
                subprocess.run(cmd, stderr=subprocess.DEVNULL)
        self.undo = []


def attempt(prof_text, route, after=None, pass_fds=(), name="t", inside=lambda: ()):
    """Run the route's program under a profile; after() runs outside the
    sandbox once the agent governs it, then the processes inside() names are
    moved into the sandbox's cgroup, before the program goes on."""
    prof = profile(prof_text, name=name)
    fd, log = tempfile.mkstemp(prefix="bw-", suffix=".log", dir=S)
    os.close(fd)
    go = log + ".go"
    cmd = [BW, "run", "--profile", prof, "--log", log, "--", IDROUTE, "--go", go] + list(route)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         pass_fds=pass_fds)
    try:
        wait_governed(p, log)
        if after:
            after()
        pids = inside()
        if pids:
            cg = re.search(r"governing (\S+) with profile", read(log)).group(1)
            for pid in pids:
                write(cgroup_root() + cg + "/cgroup.procs", str(pid))
        write(go, "")
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return Outcome(p.returncode, out, err, log)


def both(make, forbid, route_of, obj, what, errno_name="EACCES", after=None):
    """The route under the forbidding profile, then under the permissive
    one, each in a world made afresh by make() (which returns the route's
    arguments and whatever after() needs). Returns both outcomes."""
    results = []
    for prof_text in (forbid, PERMISSIVE):
        shutil.rmtree(S + "/w", ignore_errors=True)
        os.makedirs(S + "/w")
        world = World()
        try:
            ctx = make(world)
            r = attempt(prof_text, route_of(ctx),
                        after=(lambda: after(world, ctx)) if after else None,
                        pass_fds=ctx.get("fds", ()) if isinstance(ctx, dict) else (),
                        inside=lambda: world.inside)
        finally:
            world.close()
        results.append(r)
    refused(results[0], errno_name, obj, what)
    check(SECRET not in results[0].stdout, "%s: the secret was read: %r" % (what, results[0].stdout))
    got_through(results[1], what)
    check(SECRET in results[1].stdout, "%s: the control did not read the secret: %r"
          % (what, results[1].stdout))
    return results


W = S + "/w"


def deny_tree(path):
    return "default allow\ndeny file rw %s/**\n" % path


def dirs(*names):
    """A make() for both() that only makes these directories under W."""
    def make(world):
        for name in names:
            os.makedirs(W + "/" + name)
        return {}
    return make


# -- Objects that appear after the profile is loaded -------------------------

def test_created_after_load_bind_mount_before():
    """A bind mount made outside before load shows a directory in which the
    denied one is created after load."""
    def make(world):
        dirs("box", "view")(world)
        world.mount("--bind", W + "/box", W + "/view")
        return {}

    def after(world, ctx):
        write(W + "/box/secret/key", SECRET)

    r = both(make, deny_tree(W + "/box/secret"), lambda c: ["read", W + "/view/secret/key"],
             W + "/view/secret/key", "bind mount made before, denied tree created after load",
             after=after)
    check(denials(r[0].events)[0].get("by_inode"), "decided by the object's identity")


def test_created_after_load_bind_mount_after():
    """The denied directory is created after load, then bind-mounted
    elsewhere by a process outside the sandbox."""
    def after(world, ctx):
        write(W + "/secret/key", SECRET)
        world.mount("--bind", W + "/secret", W + "/view")

    both(dirs("view"), deny_tree(W + "/secret"), lambda c: ["read", W + "/view/key"],
         W + "/view/key", "denied tree created after load, bind-mounted after", after=after)


def test_created_after_load_hard_link_outside():
    """A file created after load inside the denied tree, hard-linked out of
    it by a process outside the sandbox."""
    def after(world, ctx):
        write(W + "/secret/key", SECRET)
        os.link(W + "/secret/key", W + "/pub/hard")

    both(dirs("pub"), deny_tree(W + "/secret"), lambda c: ["read", W + "/pub/hard"],
         W + "/pub/hard", "hard link made outside to a file created after load", after=after)


def bind_in_other_namespace(world, source, target, link):
    """A process in a mount namespace of its own with W/source bind-mounted
    on W/target there only; link names W/target/key through its
    /proc/PID/root. attempt() moves it into the sandbox's cgroup: one
    outside the sandbox is refused by the process boundary before any of
    its files is decided (test_processes.py, test_proc_root_and_cwd_outside)."""
    ready = W + "/ns-ready"
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                          "mount --bind %s/%s %s/%s && touch %s && exec sleep 300"
                          % (W, source, W, target, ready)])
    world.undo.append(lambda: (p.kill(), p.wait()))
    world.inside.append(p.pid)
    wait_for(lambda: os.path.exists(ready), what="the other namespace")
    os.symlink("/proc/%d/root%s/%s/key" % (p.pid, W, target), link)


def test_created_after_load_other_namespace():
    """/proc/PID/root of a process in another mount namespace, where the
    denied tree (created after load) is mounted under another name. The
    file's mount is not in the sandbox's namespace: decided by identity,
    and named by its real path."""
    key_path = W + "/target"

    def after(world, ctx):
        write(W + "/secret/key", SECRET)
        bind_in_other_namespace(world, "secret", "elsewhere", key_path)

    both(dirs("elsewhere"), deny_tree(W + "/secret"), lambda c: ["read", key_path],
         W + "/secret/key", "another mount namespace through /proc/PID/root", after=after)


def test_replaced_by_rename_after_load():
    """The denied directory exists at load; outside the sandbox it is
    replaced by rename with a new one holding the secret, which is then
    bind-mounted elsewhere."""
    def make(world):
        write(W + "/secret/old", "old\n")
        os.makedirs(W + "/view")
        return {}

    def after(world, ctx):
        write(W + "/staging/key", SECRET)
        os.rename(W + "/secret", W + "/retired")
        os.rename(W + "/staging", W + "/secret")
        world.mount("--bind", W + "/secret", W + "/view")

    both(make, deny_tree(W + "/secret"), lambda c: ["read", W + "/view/key"],
         W + "/view/key", "denied tree replaced by rename after load", after=after)


def test_denied_file_renamed_away_then_replaced():
    """Under `deny file r` (writes allowed), the secret is renamed away and a
    decoy takes its name: the secret keeps its pin under its new name."""
    def make(world):
        write(W + "/secret", SECRET)
        return {}

    def after(world, ctx):
        os.rename(W + "/secret", W + "/moved")
        write(W + "/secret", "decoy\n")

    r = both(make, "default allow\ndeny file r %s\n" % (W + "/secret"),
             lambda c: ["read", W + "/moved"], W + "/moved",
             "a denied file renamed away, a decoy in its place", after=after)
    check(denials(r[0].events)[0].get("by_inode"), "decided by the object's pin")


def test_hard_link_of_a_denied_file_replaced_by_rename():
    """The host updates a denied file the usual way (a new file renamed over
    it); a hard link to the old one, made before, still leads to its bytes."""
    def make(world):
        write(W + "/secret", SECRET)
        os.link(W + "/secret", W + "/link")
        return {}

    def after(world, ctx):
        write(W + "/new", "new version\n")
        os.rename(W + "/new", W + "/secret")

    both(make, "default allow\ndeny file r %s\n" % (W + "/secret"),
         lambda c: ["read", W + "/link"], W + "/link",
         "a hard link of a denied file replaced by rename", after=after)



def test_a_gone_object_takes_its_pin_with_it():
    """On ext4, which gives a freed inode number to the next file made in its
    group: the host updates a denied file by rename (the old one keeps its
    pin while it exists, above), so the old one is gone; a new, unrelated
    file gets its inode number. The new file is read under the forbidding
    profile as under the permissive one: no pin outlives its object. The
    denied file's new version stays refused."""
    reused = W + "/ext/s/reused"

    def make(world):
        ext4_world(world)
        write(W + "/ext/s/secret", SECRET)
        return {"ino": os.stat(W + "/ext/s/secret").st_ino}

    def after(world, ctx):
        write(W + "/ext/s/new", SECRET)
        os.rename(W + "/ext/s/new", W + "/ext/s/secret")
        for i in range(64):
            f = W + "/ext/s/f%d" % i
            write(f, "public\n")
            if os.stat(f).st_ino == ctx["ino"]:
                os.rename(f, reused)
                return

    results = []
    for prof_text in ("default allow\ndeny file r %s\n" % (W + "/ext/s/secret"), PERMISSIVE):
        shutil.rmtree(W, ignore_errors=True)
        os.makedirs(W)
        world = World()
        try:
            ctx = make(world)
            results.append(attempt(prof_text, ["read", reused, W + "/ext/s/secret"],
                                   after=lambda: after(world, ctx)))
            got = os.path.exists(reused)
        finally:
            world.close()
        if not got:
            skip("ext4 gave the freed inode number to none of 64 new files")
    forbid, control = results
    lines = [l for l in forbid.stdout.splitlines() if l.startswith(("OK", "ERR"))]
    check_eq(lines[:1], ["OK public"], "the file that got the gone object's inode number")
    check_eq(lines[1:], ["ERR EACCES"], "the denied file's new version")
    check_eq([e["path"] for e in denials(forbid.events)], [W + "/ext/s/secret"],
             "the only refusal")
    got_through(control, "both reads without the deny rule")


def test_denied_tree_parent_renamed_and_decoy_on_ext4():
    """On ext4, the parent of a denied directory is renamed away and a decoy
    tree takes its place; once the dcache forgets them (drop_caches) the
    decoy's directory is looked up at the rule's place. The denied directory,
    under its new path, keeps its pin."""
    def make(world):
        ext4_world(world)
        write(W + "/ext/p/secret/key", SECRET)
        return {}

    def after(world, ctx):
        os.rename(W + "/ext/p", W + "/ext/away")
        os.makedirs(W + "/ext/decoy/secret")
        os.rename(W + "/ext/decoy", W + "/ext/p")
        write("/proc/sys/vm/drop_caches", "2")
        os.listdir(W + "/ext/p/secret")

    key = W + "/ext/away/secret/key"
    both(make, deny_tree(W + "/ext/p/secret"), lambda c: ["read", key], key,
         "a denied tree whose parent was renamed away, a decoy in its place", after=after)


def test_utimes_in_subtree_created_after_load():
    """utimes reaches no path hook: inside a denied tree created after load
    only the pins can refuse it."""
    key = W + "/secret/key"
    results = []
    for prof_text in (deny_tree(W + "/secret"), PERMISSIVE):
        shutil.rmtree(W, ignore_errors=True)
        os.makedirs(W)
        results.append(attempt(prof_text, ["utimes", key], after=lambda: write(key, SECRET)))
        results[-1].mtime = os.stat(key).st_mtime
    refused(results[0], "EACCES", key, "utimes in a denied tree created after load")
    check(results[0].mtime != 1000000000, "the times were changed under the forbidding profile")
    got_through(results[1], "utimes in a tree created after load (control)")
    check_eq(results[1].mtime, 1000000000, "times changed by the control")


# -- File handles (disconnected dentries) ------------------------------------

def ext4_world(world):
    """An ext4 file system on a loop device at W/ext with W/ext/secret/key."""
    need_modules("loop", "ext4")
    img = W + ".img"
    subprocess.run(["truncate", "-s", "16M", img], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", img], check=True)
    os.makedirs(W + "/ext")
    world.mount("-o", "loop", img, W + "/ext")
    world.undo.insert(0, lambda: os.unlink(img))
    write(W + "/ext/secret/key", SECRET)
    write(W + "/ext/pub/readme", "public\n")
    return {}


def test_file_handle_disconnected():
    """open_by_handle_at on a file whose dentry was evicted: a dentry with
    no parent, refused under the deny rule of its tree."""
    key = W + "/ext/secret/key"
    r = both(ext4_world, deny_tree(W + "/ext/secret"), lambda c: ["handle", W + "/ext", key],
             key, "a file handle of a file in a denied tree")
    check(r[1].stdout.split()[1] == "disconnected",
          "the control's dentry should be disconnected (else the route is another): %r"
          % r[1].stdout)
    check(denials(r[0].events)[0].get("disconnected"), "the event says disconnected")


# -- Overlays and detached trees ---------------------------------------------

def overlay_world(lower, name, text, mode=0o644):
    """A make() for both(): W/lower holds the file name, and an overlay
    mounted outside the sandbox at W/merged has W/lower as its lower layer."""
    def make(world):
        need_modules("overlay")
        write("%s/%s/%s" % (W, lower, name), text)
        os.chmod("%s/%s/%s" % (W, lower, name), mode)
        dirs("up", "work", "merged")(world)
        world.mount("-t", "overlay", "bwov", "-o",
                    "lowerdir=%s/%s,upperdir=%s/up,workdir=%s/work" % (W, lower, W, W),
                    W + "/merged")
        return {}
    return make


def test_overlay_lower_layer_denied():
    """An overlay mounted outside the sandbox over a denied directory: its
    files are the lower layer's, and the event names them there."""
    both(overlay_world("secret", "key", SECRET), deny_tree(W + "/secret"),
         lambda c: ["read", W + "/merged/key"],
         W + "/secret/key", "an overlay whose lower layer is denied")


def test_overlay_lower_program_exec_denied():
    """A program whose exec is denied, run through an overlay mounted
    outside the sandbox: bprm_check sees the overlay's file, so the exec
    rules are decided where overlayfs opens the layer's file."""
    r = both(overlay_world("bin", "prog", "#!/bin/sh\necho %s\n" % SECRET, 0o755),
             "default allow\ndeny exec %s/bin/**\n" % W,
             lambda c: ["exec", W + "/merged/prog"], W + "/bin/prog",
             "a program run through an overlay whose lower layer's exec is denied")
    check_eq(denials(r[0].events)[0]["op"], "exec", "the refusal is an exec decision")


def test_overlay_under_default_deny_decided_by_its_path():
    """Not a route but its other side: under a default deny, a file read
    and a program run through an overlay mounted outside the sandbox, at a
    path the profile allows, whose layer no rule names (a container's
    image): let through, with no event. The overlay's file is decided by
    its path; the layer's file only by its pins."""
    prog = "#!/bin/sh\necho %s\n" % SECRET
    allow = "default deny\n%sallow file r %s/merged/**\nallow exec %s/merged/**\n" % (
        RUNTIME_RULES, W, W)
    # What each shows: the file's first line, the program's output.
    for route, shown in ((["read", W + "/merged/prog"], "OK #!/bin/sh"),
                         (["exec", W + "/merged/prog"], SECRET)):
        shutil.rmtree(W, ignore_errors=True)
        os.makedirs(W)
        world = World()
        try:
            overlay_world("layer", "prog", prog, 0o755)(world)
            r = attempt(allow, route)
        finally:
            world.close()
        got_through(r, "%s through an overlay at an allowed path" % route[0])
        check(shown in r.stdout, "%s: %r" % (route[0], r.stdout))


def open_tree_clone(path):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    OPEN_TREE_CLONE = 1
    fd = libc.syscall(428, -100, path.encode(), OPEN_TREE_CLONE)  # open_tree
    if fd < 0:
        raise Failure("open_tree(%s): errno %d" % (path, ctypes.get_errno()))
    return fd


def test_detached_tree_named_by_real_path():
    """A detached copy of a denied tree (open_tree OPEN_TREE_CLONE, made
    outside and handed to the sandbox): refused, and the event names the
    file where it really is, not relative to the copy."""
    def make(world):
        write(W + "/secret/key", SECRET)
        fd = open_tree_clone(W + "/secret")
        world.undo.append(lambda: os.close(fd))
        return {"fds": (fd,), "fd": fd}

    both(make, deny_tree(W + "/secret"), lambda c: ["treefd", str(c["fd"]), "key"],
         W + "/secret/key", "a detached tree of a denied directory")


def test_other_namespace_name_of_an_allowed_path():
    """In another mount namespace a denied directory is mounted where the
    sandbox's profile allows a path: /proc/PID/root gives the file a name
    relative to that namespace's root, which is the allowed one. Its mount
    is not in the sandbox's namespace: decided by identity, not that name."""
    link = W + "/target"

    def make(world):
        os.makedirs(W + "/pub")
        write(W + "/secret/key", SECRET)
        bind_in_other_namespace(world, "secret", "pub", link)
        return {}

    forbid = "default deny\n" + RUNTIME_RULES + "allow file r %s/pub/**\n" % W
    both(make, forbid, lambda c: ["read", link], W + "/secret/key",
         "a name relative to another namespace's root")


if __name__ == "__main__":
    sys.exit(main([v for k, v in sorted(globals().items()) if k.startswith("test_")], sys.argv))
