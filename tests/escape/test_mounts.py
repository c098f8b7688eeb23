#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Routes that rename the world around a profile: mounts, chroot,
pivot_root, new user namespaces, another mount namespace.

Rules name objects by the path a governed process sees, so a process that
changes how its paths resolve could put a secret under an allowed name. Each
route is run by tests/helpers/mountop (one step at a time, one OK/ERR line
each) twice: under a forbidding profile, where the change of the view must
fail with EPERM, nothing must be read, changed or run, and exactly one deny
event must name what was attempted; and, as its control, under the same
profile plus the keyword that allows the change (`allow mount`, `allow
chroot`, `allow userns`), where the route must get through: the secret read
or written, the denied program run, with no deny event at all. A control
that fails is a broken test, not a pass (tests/escape/escape.py).
"""
import ctypes
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from escape import (BUILD, BW, RUNTIME_RULES, SCRATCH, check, check_eq, denials, got_through,  # noqa: E402
                    main, outcome_lines, profile, read, refused, run, skip, write)
from bwtest import Result, rule_of  # noqa: E402

S = SCRATCH
MOUNTOP = os.path.join(BUILD, "tests", "mountop")
BUSYBOX = "/usr/bin/busybox"  # static: it runs in a new root without libraries
SECRET = "topsecret"
NOBODY = 65534

# Every forbidding profile: default deny, what mountop needs to start, and
# busybox denied by name (the "denied program" whose copies the routes run).
BASE = "default deny\n" + RUNTIME_RULES + "deny exec %s\n" % BUSYBOX
ALLOW = {"mount": "allow mount\n", "chroot": "allow chroot\n", "userns": "allow userns\n"}


def steps(*groups):
    """mountop's argv: each group is one step and its arguments."""
    argv = [MOUNTOP]
    for g in groups:
        if len(argv) > 1:
            argv.append(";")
        argv += list(g)
    return argv


def permissive():
    """The control of the overlay routes. Through an overlay 6.1 let its files be
    read by the mount's own names and 6.12 names them relative to the layer's
    private mount: which object a file rule sees there is the identity work's
    (docs/threat-model.md, "Overlays and detached trees"); here the overlay
    itself is the route, so its control allows every file."""
    return profile("default allow\n" + "".join(ALLOW.values()), name="permissive")


def pair(rules, allow):
    """The forbidding profile and its control: the same rules plus `allow KEYWORDS`."""
    forbid = profile(BASE + rules, name="forbid")
    control = profile(BASE + rules + "".join(ALLOW[a] for a in allow), name="control")
    return forbid, control


def refused_then_through(forbid, control, route, obj, what, last, key="path", first=None,
                         pass_fds=()):
    """The route refused under forbid (one deny event naming obj by key), the
    secret not read; then through under control, its last line `last`. first:
    (step, outcome) tried before the route under forbid, such as the object
    refused by its real name. pass_fds: descriptors both runs inherit."""
    pre = steps(first[0]) + [";"] if first else [MOUNTOP]
    r = run(forbid, pre + route[1:], pass_fds=pass_fds)
    if first:
        check_eq(outcome_lines(r)[0], first[1], what + ": by its real name")
    refused(r, "EPERM", obj, what, key=key)
    not_read(r)
    did_not_run(r)
    r = run(control, route, pass_fds=pass_fds)
    got_through(r, what)
    check_eq(outcome_lines(r)[-1], last, what + ": what the route got")
    return r


def secret_file(path):
    write(path, SECRET + "\n")
    os.chmod(path, 0o666)


def untouched(path):
    check_eq(read(path), SECRET + "\n", "%s is unchanged" % path)


def not_read(r):
    check(SECRET not in r.stdout, "the secret was read: %r" % r.stdout)


def did_not_run(r):
    check("evil ran" not in r.stdout, "the denied program ran: %r" % r.stdout)


EVIL = ("exec", "/usr/bin/tool", "busybox", "echo", "OK evil ran")


# ---- mount topology ----

def test_bind_mount_as_root():
    """In a private mount namespace, root binds a file no rule allows over an
    allowed one, then reads and writes it there."""
    secret_file(S + "/secret/key")
    write(S + "/pub/file", "public\n")
    route = steps(["unshare-m"], ["bind", S + "/secret/key", S + "/pub/file"],
                  ["read", S + "/pub/file"], ["write", S + "/pub/file", "changed"])
    forbid, control = pair("allow file rw %s/pub/**\n" % S, ["mount"])
    r = run(forbid, route)
    refused(r, "EPERM", S + "/pub/file", "bind mount as root")
    not_read(r)
    untouched(S + "/secret/key")
    check_eq(read(S + "/pub/file"), "public\n", "the allowed file")
    r = run(control, route)
    got_through(r, "bind mount as root")
    check("OK " + SECRET in outcome_lines(r), "the secret read through the bind: %r" % r.stdout)
    check_eq(read(S + "/secret/key"), "changed", "the secret written through the bind")


def test_bind_mount_unprivileged_in_user_namespace():
    """A user without any privilege makes a user and mount namespace of its own
    (`unshare -Urm`), where it is root, and binds there."""
    secret_file(S + "/secret/key")
    write(S + "/pub/file", "public\n")
    route = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"] + \
        steps(["unshare-urm"], ["bind", S + "/secret/key", S + "/pub/file"],
              ["read", S + "/pub/file"], ["write", S + "/pub/file", "changed"])
    # Writing its uid_map is a write to /proc; setpriv reads the user database.
    rules = "allow file rw %s/pub/**\nallow file rw /proc/**\nallow file r /etc/**\n" % S
    forbid, control = pair(rules, ["userns", "mount"])
    r = run(forbid, route)
    e = refused(r, "EPERM", "userns", "a user namespace, unprivileged", key="op")
    check_eq(e["proc"]["uid"], NOBODY, "refused for the unprivileged user")
    not_read(r)
    # With its user namespace allowed, the bind itself is refused.
    r = run(profile(BASE + rules + ALLOW["userns"], name="userns-only"), route)
    refused(r, "EPERM", S + "/pub/file", "bind mount in an unprivileged user namespace")
    not_read(r)
    untouched(S + "/secret/key")
    r = run(control, route)
    got_through(r, "bind mount in an unprivileged user namespace")
    check("OK " + SECRET in outcome_lines(r), "the secret read through the bind: %r" % r.stdout)
    check_eq(read(S + "/secret/key"), "changed", "the secret written through the bind")


def test_bind_denied_program_over_allowed_one():
    """A program the profile does not let run is bound over one it does, and run."""
    os.makedirs(S + "/tools")
    write(S + "/tools/tool", "#!/bin/sh\n")
    os.chmod(S + "/tools/tool", 0o755)
    shutil.copy(BUSYBOX, S + "/evil")  # a copy: denied by the default, not by a pin
    route = steps(["unshare-m"], ["bind", S + "/evil", S + "/tools/tool"],
                  ["exec", S + "/tools/tool", "busybox", "echo", "OK evil ran"])
    forbid, control = pair("allow exec %s/tools/**\nallow file r %s/tools/**\n" % (S, S),
                           ["mount"])
    r = run(forbid, steps(["?exec", S + "/evil", "busybox", "true"]) + [";"] + route[1:])
    check_eq(outcome_lines(r)[0], "ERR EACCES", "the program is denied by its own name")
    refused(r, "EPERM", S + "/tools/tool", "bind of a denied program")
    did_not_run(r)
    r = run(control, route)
    got_through(r, "bind of a denied program")
    check_eq(outcome_lines(r)[-1], "OK evil ran", "the denied program ran")


def load_overlay():
    """overlayfs is a module in Debian's kernels: load it from the VM cache."""
    if os.path.isdir("/sys/module/overlay"):
        return True
    cache = os.environ.get("BW_VM_CACHE", "/var/cache/bpfwarden-vm")
    kernel = os.environ.get("BW_VM_KERNEL", "")
    for sub in ("fsmods", "extra"):
        ko = os.path.join(cache, kernel, sub, "overlay.ko")
        if kernel and os.path.exists(ko):
            subprocess.run(["insmod", ko], capture_output=True)
            break
    return os.path.isdir("/sys/module/overlay")


def test_overlay_over_denied_directory():
    """An overlay whose lower layer is a directory no rule allows, mounted at an
    allowed path."""
    if not load_overlay():
        skip("no overlay module for this kernel in the VM cache "
             "(tools/vm/fetch-modules.sh or fetch-containers.sh puts it there)")
    secret_file(S + "/secret/key")
    for d in ("up", "work", "pub/ov"):
        os.makedirs(S + "/" + d)
    route = steps(["unshare-m"],
                  ["overlay", S + "/secret", S + "/up", S + "/work", S + "/pub/ov"],
                  ["read", S + "/pub/ov/key"])
    forbid, control = pair("allow file rw %s/pub/**\nallow file rw %s/up/**\n"
                           "allow file rw %s/work/**\n" % (S, S, S), ["mount"])
    r = run(forbid, route)
    refused(r, "EPERM", S + "/pub/ov", "overlay over a denied directory")
    not_read(r)
    r = run(permissive(), route)
    got_through(r, "overlay over a denied directory")
    check_eq(outcome_lines(r)[-1], "OK " + SECRET, "read through the overlay")


def test_detached_tree_moved_into_place():
    """open_tree(OPEN_TREE_CLONE) copies a denied tree, move_mount attaches it
    at an allowed path."""
    secret_file(S + "/secret/key")
    os.makedirs(S + "/pub/mnt")
    route = steps(["unshare-m"], ["open-tree", S + "/secret"], ["move-tree", S + "/pub/mnt"],
                  ["read", S + "/pub/mnt/key"])
    refused_then_through(*pair("allow file rw %s/pub/**\n" % S, ["mount"]), route,
                         "open_tree", "open_tree clone and move_mount", "OK " + SECRET,
                         key="op")


def test_new_mount_api_detached_overlay():
    """fsopen, fsconfig, fsmount: an overlay of a denied directory, attached
    nowhere, read through its descriptor."""
    if not load_overlay():
        skip("no overlay module for this kernel in the VM cache "
             "(tools/vm/fetch-modules.sh or fetch-containers.sh puts it there)")
    secret_file(S + "/secret/key")
    os.makedirs(S + "/empty")
    route = steps(["fsopen", "overlay"], ["fsconfig", "lowerdir", S + "/secret:" + S + "/empty"],
                  ["fscreate"], ["fsmount"], ["read-at", "key"])
    forbid, _ = pair("", ["mount"])
    r = run(forbid, route)
    refused(r, "EPERM", "fsopen", "fsopen", key="op")
    not_read(r)
    r = run(permissive(), route)
    got_through(r, "a detached overlay")
    check_eq(outcome_lines(r)[-1], "OK " + SECRET, "read through the detached overlay")


def new_mount_point(path):
    """A tmpfs mounted at path before the sandbox starts (in the VM's namespace)."""
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", path], check=True)


def umount(path):
    subprocess.run(["umount", "-l", path], capture_output=True)


# One change of the mount topology each, in an order in which each one works
# once allowed: (the step, the op of its event, the path it names or None).
def topology_cases():
    m, b, c = S + "/m", S + "/b", S + "/c"
    return [
        (["fsopen", "tmpfs"], "fsopen", None),
        (["fspick", m], "fspick", None),
        (["open-tree", m], "open_tree", None),
        (["setattr-ro", m], "mount_setattr", None),
        (["remount-ro", m], "mount", m),
        (["private", m], "mount", m),
        (["bind", m, b], "mount", b),
        (["move-mount", b, c], "move_mount", c),
        (["move", c, b], "mount", b),
        (["umount", m], "umount", m),
    ]


def test_every_change_of_mount_topology():
    """mount(2) in each form (remount, propagation, bind, move), umount,
    move_mount, and the new mount API's calls, each tried in one sandbox: each
    refused with an event of its own; each going through once allowed."""
    forbid, control = pair("", ["mount"])
    os.makedirs(S + "/b")
    os.makedirs(S + "/c")
    new_mount_point(S + "/m")
    try:
        cases = topology_cases()
        r = run(forbid, steps(["unshare-m"], *[["?" + c[0][0]] + c[0][1:] for c in cases]))
        check_eq(outcome_lines(r), ["OK"] + ["ERR EPERM"] * len(cases), "each one refused")
        got = [(e["op"], e.get("path"), e["rule"]) for e in denials(r.events)]
        check_eq(got, [(op, path, "default") for _, op, path in cases],
                 "one deny event each, naming the mount point if the call has one")
        r = run(control, steps(["unshare-m"], *[c[0] for c in cases]))
        got_through(r, "every change of mount topology")
        check_eq(outcome_lines(r), ["OK"] * (len(cases) + 1), "each one allowed")
    finally:
        umount(S + "/m")


def test_fsmount_of_a_context_made_outside():
    """A file system context made outside the sandbox and inherited: fsmount
    itself is refused."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(430, b"tmpfs", 0)          # fsopen
    check(fd >= 0, "fsopen outside the sandbox: errno %d" % ctypes.get_errno())
    check_eq(libc.syscall(431, fd, 6, None, None, 0), 0, "FSCONFIG_CMD_CREATE outside")
    forbid, control = pair("", ["mount"])
    try:
        for prof, want in ((forbid, "refused"), (control, "allowed")):
            fd_log, log = tempfile.mkstemp(prefix="bw-", suffix=".log", dir=SCRATCH)
            os.close(fd_log)
            p = subprocess.run([BW, "run", "--profile", prof,
                                "--log", log, "--"] + steps(["fsmount", str(fd)]),
                               pass_fds=(fd,), capture_output=True, text=True, timeout=60)
            r = Result(p, log)
            if want == "refused":
                refused(r, "EPERM", "fsmount", "fsmount of an inherited context", key="op")
            else:
                got_through(r, "fsmount of an inherited context")
    finally:
        os.close(fd)


def test_modes_audit_and_learn():
    """Audit lets a bind through with an audit event; learn lets it through
    once with a learn event, and the learned profile says `allow mount`;
    a `deny mount` rule still refuses in learn mode."""
    secret_file(S + "/secret/key")
    write(S + "/pub/file", "public\n")
    route = steps(["unshare-m"], ["bind", S + "/secret/key", S + "/pub/file"],
                  ["bind", S + "/secret/key", S + "/pub/file"])
    p = profile(BASE + "allow file rw %s/pub/**\n" % S)
    r = run(p, route, mode="audit")
    check_eq(outcome_lines(r), ["OK"] * 3, "audit mode does not block")
    audits = [(e["op"], e["path"]) for e in r.events if e["type"] == "audit"]
    check_eq(audits, [("mount", S + "/pub/file")] * 2, "an audit event each")
    out = S + "/learned.profile"
    r = run(p, route, mode="learn", extra=["--output", out])
    check_eq(outcome_lines(r), ["OK"] * 3, "learn mode does not block")
    learned = [(e["op"], e["path"]) for e in r.events if e["type"] == "learn"]
    check_eq(learned, [("mount", S + "/pub/file")], "one learn event for the mount")
    check("\nallow mount\n" in read(out), "learned profile:\n" + read(out))
    p = profile(BASE + "allow file rw %s/pub/**\ndeny mount\n" % S)
    r = run(p, route, mode="learn")
    e = refused(r, "EPERM", S + "/pub/file", "deny mount in learn mode")
    check_eq(e["rule"], rule_of(p, "deny mount"), "the deny rule decided")


# ---- chroot, pivot_root, another mount namespace ----

def test_chroot_runs_own_copy_as_allowed_program():
    """The sandbox copies a program it may not run into a directory it may
    write, as usr/bin/tool, chroots there, and runs it as /usr/bin/tool."""
    os.makedirs(S + "/jail/usr/bin")
    route = steps(["copy", BUSYBOX, S + "/jail/usr/bin/tool"], ["chroot", S + "/jail"],
                  ["chdir", "/"], EVIL)
    forbid, control = pair("allow file rw %s/jail/**\n" % S, ["chroot"])
    r = run(forbid, steps(["copy", BUSYBOX, S + "/jail/usr/bin/tool"],
                          ["?exec", S + "/jail/usr/bin/tool", "busybox", "true"]))
    check_eq(outcome_lines(r), ["OK", "ERR EACCES"], "the copy does not run by its real name")
    refused_then_through(forbid, control, route, S + "/jail", "chroot into a writable directory",
                         "OK evil ran")


def test_chroot_reaches_denied_tree_by_another_name():
    """A directory no rule allows holds usr/share/...: after chroot there, it
    is /usr/share/..., which the profile lets every program read."""
    secret_file(S + "/jail/usr/share/doc/key")
    route = steps(["chroot", S + "/jail"], ["read", "/usr/share/doc/key"])
    refused_then_through(*pair("", ["chroot"]), route, S + "/jail",
                         "chroot to rename a denied tree", "OK " + SECRET,
                         first=(["?read", S + "/jail/usr/share/doc/key"], "ERR EACCES"))


class Listener:
    """A unix stream socket outside the sandbox that answers every connection."""

    def __init__(self, path, answer):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.answer = answer
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            c.sendall(self.answer)
            c.close()

    def close(self):
        self.sock.close()


def test_chroot_moves_a_unix_socket_under_its_rule():
    """The profile allows connecting to /run/app.sock only; another service's
    socket is at JAIL/run/app.sock; after chroot(JAIL) the rule would match
    it by the name the sandbox sees. The sandbox (its own mount namespace
    under `run`) reaches a socket bound outside its namespace, which is named
    by its path where it was bound, the real object: with chroot allowed the
    connect is still refused, naming JAIL/run/app.sock; the route is real
    (a rule naming that path lets the chrooted sandbox reach the service)."""
    os.makedirs(S + "/jail/run")
    real = S + "/jail/run/app.sock"
    srv = Listener(real, (SECRET + "\n").encode())
    try:
        route = steps(["chroot", S + "/jail"], ["connect", "/run/app.sock"])
        forbid, chrooted = pair("allow net connect unix /run/app.sock\n", ["chroot"])
        r = run(forbid, steps(["?connect", real]) + [";"] + route[1:])
        check_eq(outcome_lines(r)[0], "ERR EPERM", "by its real name")
        refused(r, "EPERM", S + "/jail", "chroot to move a socket under a rule")
        not_read(r)
        r = run(chrooted, route)
        check_eq(outcome_lines(r), ["OK", "ERR EPERM"], "chroot allowed, the socket still refused")
        named = [e for e in denials(r.events) if e.get("unix") == real]
        check(len(named) == 1, "one deny event naming %s: %r" % (real, denials(r.events)))
        not_read(r)
        r = run(profile(BASE + "allow net connect unix %s\nallow chroot\n" % real,
                        name="control"), route)
        got_through(r, "chroot and connect to the socket by its real name")
        check_eq(outcome_lines(r)[-1], "OK " + SECRET, "the service reached")
    finally:
        srv.close()


def test_pivot_root_runs_own_copy_as_allowed_program():
    """In a new mount namespace, pivot_root into a file system the sandbox can
    write, holding its copy of a denied program at /usr/bin/tool."""
    root = S + "/newroot"
    new_mount_point(root)
    try:
        os.makedirs(root + "/usr/bin")
        os.makedirs(root + "/old")
        route = steps(["unshare-m"], ["copy", BUSYBOX, root + "/usr/bin/tool"],
                      ["pivot", root, root + "/old"], ["chdir", "/"], EVIL)
        refused_then_through(*pair("allow file rw %s/**\n" % root, ["mount"]), route, root,
                             "pivot_root", "OK evil ran")
    finally:
        umount(root)


def test_setns_into_another_mount_namespace():
    """A process outside the sandbox has a mount namespace where an allowed name
    is bound to a secret; the sandbox enters it, through a descriptor of the
    namespace opened outside and inherited (/proc/PID/ns/mnt of a process
    outside is refused before setns, by the process boundary: test_processes.py)."""
    secret_file(S + "/secret/key")
    write(S + "/pub/file", "public\n")
    ready = S + "/ns-ready"
    other = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         "mount --bind %s/secret/key %s/pub/file && touch %s && exec sleep 120"
         % (S, S, ready)])
    try:
        for _ in range(200):
            if os.path.exists(ready):
                break
            threading.Event().wait(0.05)
        check(os.path.exists(ready), "the other namespace is ready")
        nsfd = os.open("/proc/%d/ns/mnt" % other.pid, os.O_RDONLY)
        route = steps(["setns", "/proc/self/fd/%d" % nsfd], ["read", S + "/pub/file"])
        refused_then_through(*pair("allow file r %s/pub/**\nallow file r /proc/**\n" % S,
                                   ["chroot"]), route, "setns",
                             "setns into another mount namespace", "OK " + SECRET, key="op",
                             pass_fds=(nsfd,))
        os.close(nsfd)
    finally:
        other.kill()
        other.wait()


def test_a_new_mount_namespace_alone_changes_no_name():
    """What stays allowed: a new mount namespace without any change shows the
    same names, decided as before."""
    secret_file(S + "/secret/key")
    forbid, _ = pair("allow file r %s/pub/**\n" % S, [])
    r = run(forbid, steps(["unshare-m"], ["read", S + "/secret/key"]))
    check_eq(outcome_lines(r), ["OK", "ERR EACCES"], "same decision in the new namespace")
    check_eq([(e["op"], e["path"]) for e in denials(r.events)],
             [("open", S + "/secret/key")], "the real name in the event")


def test_events_name_the_real_object():
    """A refusal after the sandbox changed its view names the object twice:
    by the path the sandbox used, and as the agent sees it (`real_path`).
    With `allow mount` a file under `deny file r` is bound over an allowed
    one in the sandbox's own namespace and read there; with `allow chroot`
    the sandbox chroots into the denied file's directory and reads it by
    its short name. Each read is refused (EACCES) with one deny event whose
    path is the sandbox's and real_path the file's real one. Read by its
    real name, the event carries no real_path: the names are the same."""
    secret_file(S + "/secret/key")
    write(S + "/pub/file", "public\n")
    rules = "allow file rw %s/pub/**\ndeny file r %s/secret/**\n" % (S, S)
    cases = (
        (ALLOW["mount"], steps(["unshare-m"], ["bind", S + "/secret/key", S + "/pub/file"],
                               ["read", S + "/pub/file"]), S + "/pub/file", "a bind mount"),
        (ALLOW["chroot"], steps(["chroot", S + "/secret"], ["read", "/key"]), "/key", "a chroot"),
        ("", steps(["read", S + "/secret/key"]), S + "/secret/key", "its real name"))
    for allow, route, seen, what in cases:
        r = run(profile(BASE + rules + allow, name="real"), route)
        check_eq(outcome_lines(r)[-1], "ERR EACCES", what + ": the read")
        not_read(r)
        named = [e for e in denials(r.events) if e.get("path") == seen]
        check(len(named) == 1, "%s: one deny event naming %s: %r" % (what, seen, denials(r.events)))
        if seen == S + "/secret/key":
            check("real_path" not in named[0], "%s: no real_path when the names are the same: %r"
                  % (what, named[0]))
        else:
            check_eq(named[0].get("real_path"), S + "/secret/key", what + ": the real object")



def test_mount_and_unix_events_name_the_real_object():
    """In a chroot (its profile allows `chroot`), a mount the profile does not
    allow and a unix socket bound or reached by its name inside the chroot:
    each refusal (EPERM) names the sandbox's path and, as real_path, the
    object as the agent sees it, JAIL/... The controls allow the mount (the
    sandbox's own namespace under `run`) and the socket by its chroot name."""
    jail = S + "/jail"
    os.makedirs(jail + "/mnt")
    files = "allow file rw %s/**\nallow file rw /app.sock\n" % jail
    cases = (
        ("mount", "", steps(["chroot", jail], ["mount-fs", "tmpfs", "/mnt"]), "path", "/mnt",
         jail + "/mnt", ALLOW["mount"]),
        ("bind", "", steps(["chroot", jail], ["listen", "/app.sock"]), "unix", "/app.sock",
         jail + "/app.sock", "allow net bind unix /app.sock\n"),
        ("connect", "allow net bind unix /app.sock\n",
         steps(["chroot", jail], ["listen", "/app.sock"], ["connect", "/app.sock"]), "unix",
         "/app.sock", jail + "/app.sock", "allow net connect unix /app.sock\n"))
    for op, rules, route, key, seen, real, allow in cases:
        if os.path.exists(jail + "/app.sock"):
            os.unlink(jail + "/app.sock")
        base = BASE + files + ALLOW["chroot"] + rules
        r = run(profile(base, name="real"), route)
        check_eq(outcome_lines(r)[-1], "ERR EPERM", op + ": refused")
        named = [e for e in denials(r.events) if e.get("op") == op]
        check(len(named) == 1, "%s: one deny event: %r" % (op, denials(r.events)))
        check_eq(named[0].get(key), seen, op + ": the sandbox's name")
        check_eq(named[0].get("real_path"), real, op + ": the real object")
        if os.path.exists(jail + "/app.sock"):
            os.unlink(jail + "/app.sock")
        r = run(profile(base + allow, name="control"), route)
        got_through(r, op + " in a chroot")
        check_eq(outcome_lines(r)[-1][:2], "OK", op + ": the control's last step")


def test_unix_bind_through_another_name_of_its_directory():
    """`deny net bind unix DIR/app.sock`: the sandbox (its own mount
    namespace under `run`, mounts and chroot allowed) makes that socket file
    through other names of DIR: a chroot into DIR, and a bind mount of DIR
    in its namespace. The rule is kept at the socket file's place (DIR's
    identity and the name): EPERM, one event naming the sandbox's name and,
    as real_path, DIR/app.sock; nothing made. Another name in DIR gets
    through, and so does each route under the same profile without the
    rule."""
    d = S + "/place"
    os.makedirs(d + "/run")
    os.makedirs(d + "/view")
    sock = d + "/run/app.sock"
    base = "default allow\n" + ALLOW["mount"] + ALLOW["chroot"]
    forbid = profile(base + "deny net bind unix %s\n" % sock, name="forbid")
    control = profile(base, name="control")
    routes = (("a chroot into the directory", "/app.sock", "/other.sock",
               lambda name: steps(["chroot", d + "/run"], ["listen", name])),
              ("a bind mount of the directory", d + "/view/app.sock", d + "/view/other.sock",
               lambda name: steps(["bind", d + "/run", d + "/view"], ["listen", name])))
    for what, name, other, route in routes:
        r = run(forbid, route(name))
        e = refused(r, "EPERM", name, what, key="unix")
        check_eq(e.get("real_path"), sock, what + ": the real object")
        check_eq(e.get("by_inode"), True, what + ": decided by the place")
        check(not os.path.exists(sock), what + ": the socket file was made")
        r = run(forbid, route(other))
        got_through(r, what + ", another name")
        os.unlink(d + "/run/other.sock")
        r = run(control, route(name))
        got_through(r, what + " without the rule")
        os.unlink(sock)


TESTS = [
    test_bind_mount_as_root,
    test_bind_mount_unprivileged_in_user_namespace,
    test_bind_denied_program_over_allowed_one,
    test_overlay_over_denied_directory,
    test_detached_tree_moved_into_place,
    test_new_mount_api_detached_overlay,
    test_every_change_of_mount_topology,
    test_fsmount_of_a_context_made_outside,
    test_modes_audit_and_learn,
    test_chroot_runs_own_copy_as_allowed_program,
    test_chroot_reaches_denied_tree_by_another_name,
    test_chroot_moves_a_unix_socket_under_its_rule,
    test_pivot_root_runs_own_copy_as_allowed_program,
    test_setns_into_another_mount_namespace,
    test_a_new_mount_namespace_alone_changes_no_name,
    test_events_name_the_real_object,
    test_mount_and_unix_events_name_the_real_object,
    test_unix_bind_through_another_name_of_its_directory,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
