# SPDX-License-Identifier: GPL-2.0-only
"""Escape routes through the decision cache (docs/enforcement.md, "The
decision cache"): a verdict kept for a file's name must not outlive what
made it true. The sandbox opens a file until its verdict is kept (the
slot's "verdicts kept" counter says so), then, outside the sandbox, the
harness renames the file or its directory into a denied tree, moves the
mount holding it there, links it to a deny rule's place, or reuses the
slot for another profile; the sandbox's next open, through the very
dentry whose verdict was kept, must be refused.

Each route runs tests/helpers/dcroute.c (or openhammer, for the races)
under a forbidding profile, and under a permissive one as its control:
there the same open gets through, so the change really leads where the
forbidding profile says no.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from escape import (BUILD, BW, SCRATCH, Failure, cgroup_root, check, check_eq, events,
                    got_through, kept_of, main, profile, read, refused, wait_for, wait_governed,
                    write)

S = SCRATCH
W = S + "/w"
DCROUTE = os.path.join(BUILD, "tests", "dcroute")
HAMMER = os.path.join(BUILD, "tests", "openhammer")
SECRET = "s3cret-bytes"
PERMISSIVE = "default allow\n"
OPENS = 50


class Outcome:
    def __init__(self, rc, stdout, stderr, log, kept):
        self.rc, self.stdout, self.stderr, self.log = rc, stdout, stderr, log
        self.events = events(log)
        self.kept = kept


def attempt(prof_text, first, second, change, mode=None):
    """dcroute in a sandbox: FIRST opened OPENS times, then change() outside
    (given the sandbox's cgroup, if it takes an argument), then SECOND
    opened once. The kept counter is read before the change."""
    prof = profile(prof_text)
    fd, log = tempfile.mkstemp(prefix="bw-", suffix=".log", dir=S)
    os.close(fd)
    ready, go = log + ".ready", log + ".go"
    p = subprocess.Popen([BW, "run", "--profile", prof, "--log", log] +
                         (["--mode", mode] if mode else []) +
                         ["--", DCROUTE, first, str(OPENS), ready, go, second],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_governed(p, log)
        wait_for(lambda: os.path.exists(ready) or p.poll() is not None, timeout=60,
                 what="the sandbox's first opens")
        if p.poll() is not None:
            out, err = p.communicate()
            raise Failure("dcroute ended before its second open: %r %r" % (out, err))
        kept = kept_of(p.pid)
        if change.__code__.co_argcount:
            change(re.search(r"governing (\S+) with profile", read(log)).group(1))
        else:
            change()
        write(go, "")
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return Outcome(p.returncode, out, err, log, kept)


class World:
    """Mounts a test made, undone in reverse order. Moves are made in the
    mount namespace of process ns_pid when it is set: a `run` sandbox has a
    namespace of its own, a slave of the host's, and mount --move needs
    private parents, whose changes do not propagate; so root outside the
    sandbox moves them where the sandbox sees them (nsenter)."""

    def __init__(self):
        self.undo = []
        self.ns_pid = None

    def mount(self, *args):
        subprocess.run(["mount"] + list(args), check=True)
        self.undo.append(args[-1])

    def move(self, src, dst):
        if self.ns_pid:
            subprocess.run(["nsenter", "-t", str(self.ns_pid), "-m", "mount", "--move", src, dst],
                           check=True)
            return  # the sandbox's namespace goes with it
        subprocess.run(["mount", "--move", src, dst], check=True)
        self.undo = [dst if u == src else u for u in self.undo]

    def close(self):
        for target in reversed(self.undo):
            subprocess.run(["umount", "-l", target], stderr=subprocess.DEVNULL)
        self.undo = []


def fresh(world):
    """W: a private tmpfs of its own (mount --move needs private parents),
    with W/a/f holding the secret and an empty W/d."""
    shutil.rmtree(W, ignore_errors=True)
    os.makedirs(W)
    world.mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", W)
    subprocess.run(["mount", "--make-private", W], check=True)
    os.makedirs(W + "/d")
    write(W + "/a/f", SECRET + "\n")


def both(forbid, first, second, change, what, obj=None, make=fresh, mode=None):
    """The route under the forbidding profile, then its control under the
    permissive one, each in a world made afresh; change(world, cgroup)."""
    results = []
    for prof_text in (forbid, PERMISSIVE):
        world = World()
        try:
            make(world)
            results.append(attempt(prof_text, first, second,
                                   lambda cg, world=world: change(world, cg), mode=mode))
        finally:
            world.close()
    for r in results:
        check(r.kept >= 1, "%s: the first opens kept no verdict (status says %d): the route "
              "does not go through the cache" % (what, r.kept))
    refused(results[0], "EACCES", obj or second, what)
    check(SECRET not in results[0].stdout, "%s: the secret was read: %r" % (what, results[0].stdout))
    got_through(results[1], what)
    check(SECRET in results[1].stdout, "%s: the control did not read the secret: %r"
          % (what, results[1].stdout))
    return results


def deny_d():
    return "default allow\ndeny file rw %s/d/**\n" % W


def test_cached_file_renamed_into_a_denied_tree():
    """A file whose verdict is kept, renamed into a denied directory: the same dentry, a new path."""
    both(deny_d(), W + "/a/f", W + "/d/f", lambda w, cg: os.rename(W + "/a/f", W + "/d/f"),
         "a kept file renamed into a denied tree")


def test_cached_directory_renamed_into_a_denied_tree():
    """The kept file's directory renamed into a denied directory: the file's dentry is untouched."""
    both(deny_d(), W + "/a/f", W + "/d/a/f", lambda w, cg: os.rename(W + "/a", W + "/d/a"),
         "a kept file's directory renamed into a denied tree")


def with_mount(world):
    """fresh(), and W/m, a tmpfs mounted in W, holding the secret as W/m/f."""
    fresh(world)
    os.makedirs(W + "/m")
    world.mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", W + "/m")
    write(W + "/m/f", SECRET + "\n")


def test_cached_mount_moved_into_a_denied_tree():
    """The mount holding a kept file moved (mount --move, by root in the sandbox's mount namespace) into a denied directory: same mount, same dentry."""
    def change(world, cg):
        os.makedirs(W + "/d/m")
        world.ns_pid = read(cgroup_root() + cg + "/cgroup.procs").split()[0]
        world.move(W + "/m", W + "/d/m")

    both(deny_d(), W + "/m/f", W + "/d/m/f", change, "a kept file's mount moved into a denied tree",
         make=with_mount)


def test_cached_file_linked_to_a_denied_place():
    """A kept file hard-linked, from outside, to where a deny rule points: its old name is denied too."""
    forbid = "default allow\ndeny file rw %s/d/new\n" % W
    both(forbid, W + "/a/f", W + "/a/f", lambda w, cg: os.link(W + "/a/f", W + "/d/new"),
         "a kept file linked to a deny rule's place")


def test_learned_access_after_the_switch_to_enforce():
    """An access learn mode let through and kept, then the cgroup switched to enforce mode: refused."""
    def change(world, cg):
        subprocess.run([BW, "mode", "--cgroup", cg, "enforce"], check=True,
                       stdout=subprocess.DEVNULL)

    r = both("default deny\n", W + "/a/f", W + "/a/f", change,
             "a kept learned access after the switch to enforce", mode="learn")
    learned = [e for e in r[0].events if e["type"] == "learn" and e.get("path") == W + "/a/f"]
    check_eq(len(learned), 1, "learn records of %s/a/f before the switch" % W)


def test_verdict_kept_under_a_released_slot():
    """A verdict kept under one profile, then the same file opened under the next profile given the same slot."""
    results = []
    for prof_text in (deny_d().replace("/d/**", "/a/**"), PERMISSIVE):
        world = World()
        try:
            fresh(world)
            first = attempt(PERMISSIVE, W + "/a/f", W + "/a/f", lambda: None)
            check(first.kept >= 1, "the first sandbox kept no verdict (%d)" % first.kept)
            check_eq(first.stdout.strip(), "OK " + SECRET, "the first sandbox's last read")
            results.append(second_sandbox(prof_text))
        finally:
            world.close()
    refused(results[0], "EACCES", W + "/a/f", "a verdict of the slot's previous profile")
    got_through(results[1], "a verdict of the slot's previous profile")


def second_sandbox(prof_text):
    """The next sandbox opens W/a/f once (dcroute's first opens are a file it may read)."""
    write(W + "/ok", "ok\n")
    return attempt(prof_text, W + "/ok", W + "/a/f", lambda: None)


def hammer_counts(p):
    """Ask openhammer for its counts (SIGUSR1) and read them: {file: (ok, eacces, other)},
    counted since it was last asked."""
    os.kill(p.hammer, signal.SIGUSR1)
    counts = {}
    while True:
        line = p.stdout.readline()
        if line in ("--\n", ""):
            break
        path, ok, eacces, other = line.split()
        counts[path] = (int(ok), int(eacces), int(other))
    return counts


def race(files, change, make, what, rounds=15, toggles=41):
    """openhammer opens FILES (an allowed name, then the same file's name
    in the denied tree) in a sandbox while change(world, denied) moves the
    file between them outside. Each round: toggles changes, the last one
    into the denied tree; then, in a quiet phase whose opens all began
    after it, no open of the denied name may get through: a kept verdict
    that survived the race would let it. Opens racing a change may go
    either way (the kernel decides on the object's name at the time of the
    check, cache or no cache), so only the quiet phases are judged. The
    control, under PERMISSIVE, opens the denied name in its quiet phases."""
    quiet = {}
    for prof_text in (deny_d(), PERMISSIVE):
        world = World()
        prof = profile(prof_text)
        fd, log = tempfile.mkstemp(prefix="bw-", suffix=".log", dir=S)
        os.close(fd)
        try:
            make(world)
            p = subprocess.Popen([BW, "run", "--profile", prof, "--log", log, "--event-rate", "20",
                                  "--", HAMMER] + files,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                wait_governed(p, log)
                check_eq(p.stdout.readline(), "ready\n", "openhammer started")
                cg = re.search(r"governing (\S+) with profile", read(log)).group(1)
                p.hammer = [int(pid) for pid in read(cgroup_root() + cg + "/cgroup.procs").split()
                            if read("/proc/%s/comm" % pid).strip() == "openhammer"][0]
                world.ns_pid = p.hammer
                total = {f: [0, 0, 0] for f in files}
                calm = {f: [0, 0, 0] for f in files}
                denied = False
                for _ in range(rounds):
                    for _ in range(toggles):
                        denied = not denied
                        change(world, denied)
                        time.sleep(0.001)  # long enough for the hammer to meet each state
                    check(denied, "the race ends with the file in the denied tree")
                    for f, c in hammer_counts(p).items():
                        total[f] = [a + b for a, b in zip(total[f], c)]
                    time.sleep(0.05)
                    for f, c in hammer_counts(p).items():
                        calm[f] = [a + b for a, b in zip(calm[f], c)]
                    denied = False
                    change(world, denied)
                kept = kept_of(p.pid)
                os.kill(p.hammer, signal.SIGTERM)
                p.communicate(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        finally:
            world.close()
        quiet[prof_text] = (calm, total, kept)
    allowed, denied_name = files
    calm, total, kept = quiet[deny_d()]
    check(total[allowed][0] > 0, "%s: the hammer never opened %s" % (what, allowed))
    check(kept < total[allowed][0] / 2,
          "%s: %d verdicts kept for %d opens of %s: the opens did not go through the cache"
          % (what, kept, total[allowed][0], allowed))
    check(calm[denied_name][1] > 0, "%s: no quiet open of %s was refused: %r" % (what, denied_name, calm))
    if calm[denied_name][0]:
        raise Failure("%s: %d opens of %s got through its deny rule after the race: %r"
                      % (what, calm[denied_name][0], denied_name, calm))
    ctl = quiet[PERMISSIVE][0]
    if not ctl[denied_name][0]:
        raise Failure("%s: the control never opened %s in a quiet phase: the race proves "
                      "nothing: %r" % (what, denied_name, ctl))


def test_rename_race_against_kept_verdicts():
    """A file renamed in and out of a denied tree while the sandbox opens both names; after each race, the denied name is refused."""
    def change(world, denied):
        if denied:
            os.rename(W + "/a/f", W + "/d/f")
        else:
            os.rename(W + "/d/f", W + "/a/f")

    race([W + "/a/f", W + "/d/f"], change, fresh, "renames racing kept verdicts")


def test_mount_move_race_against_kept_verdicts():
    """A mount moved in and out of a denied tree while the sandbox opens the file in both places; after each race, the denied place is refused."""
    def make(world):
        with_mount(world)
        os.makedirs(W + "/d/m")

    def change(world, denied):
        if denied:
            world.move(W + "/m", W + "/d/m")
        else:
            world.move(W + "/d/m", W + "/m")

    race([W + "/m/f", W + "/d/m/f"], change, make, "mount moves racing kept verdicts",
         rounds=6, toggles=11)


if __name__ == "__main__":
    sys.exit(main([v for k, v in sorted(globals().items()) if k.startswith("test_")], sys.argv))
