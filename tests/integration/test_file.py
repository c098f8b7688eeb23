#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""File enforcement end to end: real syscalls from C, shell and Python
(ctypes) in governed cgroups, checked by errno, file contents and events."""
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwtest import (BUILD, BW, rule_of, FSOP, RUNTIME_RULES, SCRATCH, check, check_eq, cgroup_root,
                    denials, events, expect_ops, fsops, main, profile, read, run, wait_for,
                    write)

S = SCRATCH
EACCES = "ERR EACCES"


def expect_denials(r, want):
    """want: [(op, path, access, rule)], exactly the deny events, in order."""
    got = [(e["op"], e["path"], e["access"], e["rule"]) for e in denials(r.events)]
    check_eq(got, want, "deny events")
    for e in denials(r.events):
        for key in ("ts", "type", "op", "decision", "cgroup", "proc", "path", "access",
                    "profile", "rule"):
            check(key in e, "event lacks %s: %r" % (key, e))
        check_eq(e["decision"], "deny", "decision")
        for key in ("pid", "tid", "ppid", "uid", "gid", "comm", "exe"):
            check(key in e["proc"], "event proc lacks %s: %r" % (key, e))
        check(e["cgroup"]["path"].startswith("/bpfwarden/run-"), "cgroup path %r" % e["cgroup"])


def test_exact_and_subtree():
    write(S + "/ro/f", "f\n")
    write(S + "/ro/sub/g", "g\n")
    write(S + "/ro2/x", "x\n")
    write(S + "/one.txt", "1\n")
    write(S + "/one.txt.bak", "2\n")
    p = profile("default deny\n" + RUNTIME_RULES +
                "allow file r %s/ro/**\nallow file r %s/one.txt\n" % (S, S))
    r = expect_ops(p, [
        (("read", S + "/ro/f"), "OK"),
        (("read", S + "/ro/sub/g"), "OK"),
        (("readdir", S + "/ro"), "OK"),
        (("readdir", S + "/ro/sub"), "OK"),
        (("read", S + "/one.txt"), "OK"),
        (("read", S + "/one.txt.bak"), EACCES),
        (("read", S + "/ro2/x"), EACCES),
        (("readdir", S), EACCES),
    ])
    expect_denials(r, [
        ("open", S + "/one.txt.bak", "r", "default"),
        ("open", S + "/ro2/x", "r", "default"),
        ("open", S, "r", "default"),
    ])
    check_eq(r.rc, 13, "exit status of the last failed operation")


def test_name_prefix_rules():
    """DIR/NAME* allows the names in DIR beginning with NAME, made before or
    during the run (what a service's per-run segments are), and nothing below
    a directory whose name matches, nor other names in DIR, nor DIR itself."""
    write(S + "/shm/PostgreSQL.111", "x\n")
    write(S + "/shm/PostgreSQL.d/inner", "x\n")
    write(S + "/shm/Other.1", "x\n")
    p = profile("default deny\n" + RUNTIME_RULES +
                "allow file rw %s/shm/PostgreSQL.*\n" % S)
    r = expect_ops(p, [
        (("read", S + "/shm/PostgreSQL.111"), "OK"),
        (("write", S + "/shm/PostgreSQL.111"), "OK"),
        (("create", S + "/shm/PostgreSQL.3292570658"), "OK"),
        (("unlink", S + "/shm/PostgreSQL.3292570658"), "OK"),
        (("read", S + "/shm/PostgreSQL.d/inner"), EACCES),
        (("read", S + "/shm/Other.1"), EACCES),
        (("create", S + "/shm/Postgres"), EACCES),
        (("rename", S + "/shm/PostgreSQL.111", S + "/shm/Other.2"), EACCES),
        (("readdir", S + "/shm"), EACCES),
    ])
    denied = sorted(set(e["path"] for e in r.events if e["type"] == "deny"))
    check_eq(denied, sorted([S + "/shm", S + "/shm/Other.1", S + "/shm/Other.2",
                             S + "/shm/PostgreSQL.d/inner", S + "/shm/Postgres"]),
             "the refused names")
    check(os.path.exists(S + "/shm/PostgreSQL.111") and
          not os.path.exists(S + "/shm/PostgreSQL.3292570658"), "the allowed changes were made")


def test_own_proc_entries():
    """/proc/self/** is a process's own /proc/PID, whatever its PID: the
    kernel sees /proc/PID (the self link resolved) and matches it to the
    rule only when PID is the reader's own. Another process's entries, PID 1's
    and the parent's outside the sandbox, stay refused; so does /proc/self
    where a deny rule on it is more specific."""
    parent = os.getpid()
    p = profile("default deny\n" + RUNTIME_RULES +
                "allow file r /proc/self/**\ndeny file r /proc/self/environ\n")
    r = expect_ops(p, [
        (("read", "/proc/self/status"), "OK"),
        (("read", "/proc/self/stat"), "OK"),
        (("readdir", "/proc/self/fd"), "OK"),
        (("read", "/proc/thread-self/stat"), "OK"),
        (("read", "/proc/self/environ"), EACCES),
        (("read", "/proc/1/status"), EACCES),
        (("read", "/proc/%d/status" % parent), EACCES),
    ])
    denied = [e["path"] for e in r.events if e["type"] == "deny"]
    check_eq(sorted(d.split("/")[-1] for d in denied), ["environ", "status", "status"],
             "the refusals: %s" % denied)
    check(all(d.startswith("/proc/") and d.split("/")[2].isdigit() for d in denied),
          "events name the real /proc/PID: %s" % denied)
    # A sibling in the same sandbox: the child reads its own stat (allowed),
    # then the parent opens the child's, which is not its own.
    script = ("import os, subprocess, sys\n"
              "c = subprocess.Popen([sys.executable, '-c', \"open('/proc/self/stat').read(); "
              "print('child ok', flush=True); import time; time.sleep(5)\"], "
              "stdout=subprocess.PIPE, text=True)\n"
              "print(c.stdout.readline().strip())\n"
              "try:\n    open('/proc/%d/stat' % c.pid).read(); print('parent read the child')\n"
              "except OSError as e:\n    print('parent', e.errno)\n"
              "c.kill()\n")
    r = run(p, ["/usr/bin/python3", "-c", script])
    check_eq(r.stdout.split("\n")[:2], ["child ok", "parent 13"],
             "a sibling's own entry (stderr %s)" % r.stderr)
    # The other way round: every process's environ is readable but one's own.
    # The parent reads the child's (allowed), then the child its own: a
    # verdict kept from the parent's open must not answer the child's.
    p = profile("default deny\n" + RUNTIME_RULES +
                "allow file r /proc/**\ndeny file r /proc/self/environ\n")
    script = ("import os, subprocess, sys\n"
              "c = subprocess.Popen([sys.executable, '-c', \"import sys; sys.stdin.readline()\\n"
              "try:\\n    open('/proc/self/environ').read(); print('child read its own')\\n"
              "except OSError as e:\\n    print('child', e.errno)\"], stdin=subprocess.PIPE, "
              "stdout=subprocess.PIPE, text=True)\n"
              "for i in range(3):\n    open('/proc/%d/environ' % c.pid).read()\n"
              "print('parent read the child')\n"
              "c.stdin.write('go\\n'); c.stdin.flush()\n"
              "print(c.stdout.readline().strip()); c.wait()\n")
    r = run(p, ["/usr/bin/python3", "-c", script])
    check_eq(r.stdout.split("\n")[:2], ["parent read the child", "child 13"],
             "one's own environ after another process read it (stderr %s)" % r.stderr)


def test_path_not_utf8_is_exact_in_the_log():
    """A denied file whose name is not UTF-8 (caf + a Latin-1 e-acute): the
    deny event's path has U+FFFD for the byte and path_b64 the name's exact
    bytes, and the line is strict UTF-8 (bwtest.events reads every line so)."""
    name = S.encode() + b"/latin1/caf\xe9"
    os.makedirs(os.path.dirname(name), exist_ok=True)
    with open(name, "w") as f:
        f.write("x\n")
    p = profile("default allow\ndeny file r %s/latin1/**\n" % S)
    r = run(p, ["/usr/bin/python3", "-c", "import os, sys\ntry:\n"
                "    open(os.fsencode(sys.argv[1])).close()\n    print('OK')\n"
                "except OSError as e:\n    print('ERR', e.errno)", os.fsdecode(name)])
    check_eq(r.stdout.split(), ["ERR", "13"], "the read (stderr %s)" % r.stderr)
    named = [e for e in r.events if e["type"] == "deny" and "path_b64" in e]
    check_eq(len(named), 1, "deny events with path_b64: %r" % r.events)
    check_eq(base64.b64decode(named[0]["path_b64"]), name, "the exact bytes")
    check_eq(named[0]["path"], S + "/latin1/caf\ufffd", "the text")


def test_r_versus_w():
    write(S + "/ro/f", "orig\n")
    os.makedirs(S + "/rw")
    p = profile("default deny\n" + RUNTIME_RULES +
                "allow file r %s/ro/**\nallow file rw %s/rw/**\n" % (S, S))
    r = expect_ops(p, [
        (("read", S + "/ro/f"), "OK"),
        (("write", S + "/ro/f"), EACCES),
        (("rdwr", S + "/ro/f"), EACCES),
        (("create", S + "/rw/new"), "OK"),
        (("write", S + "/rw/new"), "OK"),
        (("read", S + "/rw/new"), "OK"),
    ])
    check_eq(read(S + "/ro/f"), "orig\n", "read-only file")
    check(os.path.exists(S + "/rw/new"), "file created in the writable directory")
    # No rule covers w there: the default decides, and the event says so.
    expect_denials(r, [("open", S + "/ro/f", "w", "default"),
                       ("open", S + "/ro/f", "rw", "default")])


def test_most_specific_and_deny_ties():
    write(S + "/t/x", "x\n")
    write(S + "/t/private/y", "y\n")
    write(S + "/t/private/ok.txt", "ok\n")
    write(S + "/tie.txt", "tie\n")
    p = profile("default deny\n" + RUNTIME_RULES +
                "allow file r %s/t/**\n" % S +
                "deny file r %s/t/private/**\n" % S +
                "allow file r %s/t/private/ok.txt\n" % S +
                "allow file r %s/tie.txt\n" % S +
                "deny file r %s/tie.txt\n" % S)
    r = expect_ops(p, [
        (("read", S + "/t/x"), "OK"),
        (("read", S + "/t/private/y"), EACCES),
        (("read", S + "/t/private/ok.txt"), "OK"),
        (("read", S + "/tie.txt"), EACCES),
    ])
    expect_denials(r, [
        ("open", S + "/t/private/y", "r", rule_of(p, "deny file r %s/t/private/**" % S)),
        ("open", S + "/tie.txt", "r", rule_of(p, "deny file r %s/tie.txt" % S)),
    ])


def test_default_allow_and_default_deny():
    write(S + "/a", "a\n")
    write(S + "/b", "b\n")
    p = profile("default allow\ndeny file r %s/b\n" % S)
    r = expect_ops(p, [(("read", S + "/a"), "OK"), (("read", S + "/b"), EACCES),
                       (("write", S + "/a"), "OK")])
    expect_denials(r, [("open", S + "/b", "r", rule_of(p, "deny file r"))])
    p = profile("default deny\n" + RUNTIME_RULES)
    r = expect_ops(p, [(("read", S + "/a"), EACCES), (("read", "/etc/hostname"), EACCES)])
    expect_denials(r, [("open", S + "/a", "r", "default"), ("open", "/etc/hostname", "r", "default")])
    # A category default only covers its category.
    p = profile("default allow file\ndefault allow exec\ndefault deny net\n")
    expect_ops(p, [(("read", S + "/a"), "OK")])


def test_every_write_route_refused():
    write(S + "/ro/f", "orig\n")
    write(S + "/ro/f2", "orig2\n")
    os.makedirs(S + "/ro/empty")
    write(S + "/outside", "out\n")
    p = profile("default allow\ndeny file w %s/ro/**\n" % S)
    cases = [
        ("write", S + "/ro/f"),
        ("append", S + "/ro/f"),
        ("trunc-open", S + "/ro/f"),
        ("rdwr", S + "/ro/f"),
        ("truncate", S + "/ro/f"),
        ("create", S + "/ro/new"),
        ("mkdir", S + "/ro/newdir"),
        ("mkfifo", S + "/ro/fifo"),
        ("rmdir", S + "/ro/empty"),
        ("unlink", S + "/ro/f"),
        ("rename", S + "/ro/f", S + "/moved"),
        ("rename", S + "/outside", S + "/ro/in"),
        ("link", S + "/ro/f", S + "/lnk"),
        ("link", S + "/outside", S + "/ro/lnk2"),
        ("symlink", "target", S + "/ro/sym"),
        ("chmod", S + "/ro/f"),
        ("chown", S + "/ro/f"),
        ("utimes", S + "/ro/f"),
    ]
    before = os.stat(S + "/ro/f")
    r, got = fsops(p, cases)
    bad = ["%s -> %s" % (" ".join(c), g) for c, g in zip(cases, got) if g != EACCES]
    check(not bad, "write routes not refused:\n  " + "\n  ".join(bad))
    check_eq(read(S + "/ro/f"), "orig\n", "content")
    check_eq(sorted(os.listdir(S + "/ro")), ["empty", "f", "f2"], "directory entries")
    after = os.stat(S + "/ro/f")
    check_eq((after.st_mode, after.st_uid, after.st_mtime_ns, after.st_nlink),
             (before.st_mode, before.st_uid, before.st_mtime_ns, before.st_nlink), "metadata")
    check(os.path.exists(S + "/outside") and not os.path.exists(S + "/moved"), "rename ends")
    rule = rule_of(p, "deny file w")
    want = [("open", S + "/ro/f", "w"), ("open", S + "/ro/f", "w"), ("open", S + "/ro/f", "w"),
            ("open", S + "/ro/f", "rw"), ("truncate", S + "/ro/f", "w"),
            ("create", S + "/ro/new", "w"), ("mkdir", S + "/ro/newdir", "w"),
            ("create", S + "/ro/fifo", "w"), ("rmdir", S + "/ro/empty", "w"),
            ("unlink", S + "/ro/f", "w"), ("rename", S + "/ro/f", "w"),
            ("rename", S + "/ro/in", "w"), ("link", S + "/ro/f", "rw"),
            ("link", S + "/ro/lnk2", "w"), ("symlink", S + "/ro/sym", "w"),
            ("chmod", S + "/ro/f", "w"), ("chown", S + "/ro/f", "w"), ("utimes", S + "/ro/f", "w")]
    expect_denials(r, [w + (rule,) for w in want])
    ends = [e.get("end") for e in denials(r.events) if e["op"] == "rename"]
    check_eq(ends, ["from", "to"], "rename ends in events")


def test_other_names_of_a_denied_file():
    """Symlink, hard link, bind mount and /proc/self/fd of an O_PATH descriptor."""
    write(S + "/secret/key", "k\n")
    write(S + "/pub/readme", "r\n")
    os.symlink(S + "/secret/key", S + "/pub/sym")
    os.link(S + "/secret/key", S + "/pub/hard")
    os.makedirs(S + "/mnt")
    write(S + "/bindfile", "")
    subprocess.run(["mount", "--bind", S + "/secret", S + "/mnt"], check=True)
    subprocess.run(["mount", "--bind", S + "/secret/key", S + "/bindfile"], check=True)
    try:
        p = profile("default allow\ndeny file rw %s/secret/**\n" % S)
        r = expect_ops(p, [
            (("read", S + "/pub/readme"), "OK"),
            (("read", S + "/secret/key"), EACCES),
            (("read", S + "/pub/sym"), EACCES),
            (("read", S + "/pub/hard"), EACCES),
            (("read", S + "/mnt/key"), EACCES),
            (("read", S + "/bindfile"), EACCES),
            (("opath-reopen", S + "/pub/hard"), EACCES),
            (("opath-reopen", S + "/secret/key"), EACCES),
        ])
        d = denials(r.events)
        check_eq(len(d), 7, "deny events")
        check_eq(d[1]["path"], S + "/secret/key", "a symlink is checked on its target")
        check(all(e["rule"] == rule_of(p, "deny file rw") for e in d), "deciding rule")
        check(d[2].get("by_inode") and d[2]["path"] == S + "/pub/hard", "hard link by inode")
    finally:
        subprocess.run(["umount", S + "/mnt"])
        subprocess.run(["umount", S + "/bindfile"])


def test_long_paths():
    """Past the trie's 252 bytes rules still decide by prefix; past the kernel
    buffer (4096 bytes) the path is refused and flagged."""
    comp = "d" * 200
    mid = S + "/ok/" + "/".join([comp] * 2)          # about 420 bytes
    os.makedirs(mid)
    write(mid + "/f", "f\n")
    write(S + "/other/f", "o\n")
    p = profile("default deny\n" + RUNTIME_RULES + "allow file r %s/ok/**\n" % S)
    r = expect_ops(p, [(("read", mid + "/f"), "OK"), (("read", S + "/other/f"), EACCES)])
    expect_denials(r, [("open", S + "/other/f", "r", "default")])
    # 21 components of 200 bytes: over 4096 bytes, reached by relative steps.
    fd = os.open(S, os.O_RDONLY)
    for _ in range(21):
        os.mkdir(comp, dir_fd=fd)
        nfd = os.open(comp, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    with open(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as f:
        f.write("deep\n")
    os.close(fd)
    code = ("import os\nos.chdir(%r)\nfor _ in range(21): os.chdir(%r)\n"
            "try:\n    os.close(os.open('deep.txt', os.O_RDONLY))\n    print('OK')\n"
            "except OSError as e:\n    print('ERR', e.errno)\n" % (S, comp))
    p = profile("default allow\n")
    r = run(p, ["/usr/bin/python3", "-c", code])
    check_eq(r.stdout.strip(), "ERR 13", "open of a path over 4096 bytes (stderr %s)" % r.stderr)
    d = denials(r.events)
    check_eq(len(d), 1, "deny events")
    check(d[0].get("path_too_long") is True, "flagged: %r" % d[0])
    check_eq(d[0]["rule"], "default", "rule of a too-long path")


def test_denied_tree_through_other_mounts_and_namespaces():
    """A bind mount of a directory inside a denied tree, /proc/self/root, and
    a bind mount made by the sandboxed process in its own mount namespace."""
    write(S + "/secret/sub/key", "k\n")
    os.makedirs(S + "/view")
    subprocess.run(["mount", "--bind", S + "/secret/sub", S + "/view"], check=True)
    try:
        p = profile("default allow\ndeny file rw %s/secret/**\n" % S)
        r = expect_ops(p, [
            (("read", S + "/view/key"), EACCES),
            (("read", "/proc/self/root" + S + "/secret/sub/key"), EACCES),
        ])
        check(denials(r.events)[0].get("by_inode"), "bind mount of a subdirectory: by inode")
        os.makedirs(S + "/ns")
        script = ("mount --make-rprivate / && mount --bind %s/secret %s/ns && %s read %s/ns/sub/key"
                  % (S, S, FSOP, S))
        # Mounts are refused in a governed cgroup unless the profile allows them.
        p = profile("default allow\nallow mount\ndeny file rw %s/secret/**\n" % S)
        r = run(p, ["unshare", "-m", "sh", "-c", script])
        check_eq(r.stdout.strip(), EACCES, "read in a new mount namespace (stderr %s)" % r.stderr)
        check_eq([e["path"] for e in denials(r.events)], [S + "/ns/sub/key"], "deny events")
    finally:
        subprocess.run(["umount", S + "/view"])


def test_python_ctypes_route():
    """Hostile Python: libc's open() through ctypes, under the interpreter's own rules."""
    write(S + "/secret", "s\n")
    p = profile("default allow\ndeny file rw %s/secret\n" % S)
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "fd = libc.open(b'%s/secret', os.O_RDONLY)\n"
            "print(fd, ctypes.get_errno())\n" % S)
    r = run(p, ["/usr/bin/python3", "-c", code])
    check_eq(r.stdout.strip(), "-1 13", "ctypes open result and errno (stderr %s)" % r.stderr)
    check_eq([e["path"] for e in denials(r.events)], [S + "/secret"], "deny events")


def test_audit_mode_logs_without_blocking():
    write(S + "/f", "orig\n")
    p = profile("default allow\ndeny file rw %s/f\n" % S)
    r = expect_ops(p, [(("read", S + "/f"), "OK"), (("append", S + "/f"), "OK")], mode="audit")
    check_eq(denials(r.events), [], "deny events in audit mode")
    audits = [(e["op"], e["path"], e["access"], e["decision"]) for e in r.events
              if e["type"] == "audit"]
    check_eq(audits, [("open", S + "/f", "r", "allow"), ("open", S + "/f", "w", "allow")],
             "audit events")


def test_concurrent_sandboxes():
    write(S + "/a.txt", "a\n")
    write(S + "/b.txt", "b\n")
    pa = profile("default allow\ndeny file r %s/a.txt\n" % S, name="pa")
    pb = profile("default allow\ndeny file r %s/b.txt\n" % S, name="pb")
    script = ("while [ ! -e %s/go ]; do sleep 0.05; done; "
              "%s read %s/a.txt; %s read %s/b.txt; exit 0" % (S, FSOP, S, FSOP, S))
    procs = []
    for p, log in ((pa, S + "/a.log"), (pb, S + "/b.log")):
        procs.append(subprocess.Popen([BW, "run", "--profile", p, "--log", log, "--",
                                       "sh", "-c", script], stdout=subprocess.PIPE, text=True))
    wait_for(lambda: all(os.path.exists(l) and "governing" in read(l)
                         for l in (S + "/a.log", S + "/b.log")), what="both sandboxes")
    write(S + "/go", "")
    outs = [p.communicate(timeout=60)[0].split() for p in procs]
    check_eq(outs[0], ["ERR", "EACCES", "OK"], "sandbox A")
    check_eq(outs[1], ["OK", "ERR", "EACCES"], "sandbox B")
    da = [(e["path"], e["profile"]) for e in denials(events(S + "/a.log"))]
    db = [(e["path"], e["profile"]) for e in denials(events(S + "/b.log"))]
    check_eq(da, [(S + "/a.txt", "pa")], "A's events")
    check_eq(db, [(S + "/b.txt", "pb")], "B's events")


MANY = 80


def test_many_sandboxes_each_with_its_own_profile():
    """More sandboxes at once than the 64 policy slots of earlier builds, each
    under a profile of its own: each is refused its own file and reads its
    neighbour's (the control: the same read, another profile), and each deny
    event is its own profile's."""
    d = S + "/many"
    os.makedirs(d, exist_ok=True)
    for i in range(MANY):
        write("%s/f%d" % (d, i), "%d\n" % i)
    procs = []
    try:
        for i in range(MANY):
            p = profile("default allow\ndeny file r %s/f%d\n" % (d, i), name="many%d" % i)
            script = ("while [ ! -e %s/go ]; do sleep 0.2; done; %s read %s/f%d; %s read %s/f%d; "
                      "exit 0" % (d, FSOP, d, i, FSOP, d, (i + 1) % MANY))
            procs.append(subprocess.Popen([BW, "run", "--profile", p, "--log", "%s/%d.log" % (d, i),
                                           "--", "sh", "-c", script],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        wait_for(lambda: all(os.path.exists("%s/%d.log" % (d, i)) and "governing" in
                             read("%s/%d.log" % (d, i)) for i in range(MANY))
                 or any(p.poll() is not None for p in procs),
                 timeout=600, what="%d sandboxes governing" % MANY)
        early = [(i, p.communicate()[1].strip()) for i, p in enumerate(procs)
                 if p.poll() is not None]
        check(not early, "sandboxes that ended before the go: %s" % early[:3])
        write(d + "/go", "")
        outs = [p.communicate(timeout=120)[0].split() for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for i in range(MANY):
        check_eq(outs[i], ["ERR", "EACCES", "OK"], "sandbox %d" % i)
        got = [(e["path"], e["profile"]) for e in denials(events("%s/%d.log" % (d, i)))]
        check_eq(got, [("%s/f%d" % (d, i), "many%d" % i)], "sandbox %d's events" % i)


def bpftool_json(*args):
    """bpftool's JSON output (it may exit non-zero after printing it, as 7.5 does
    for a pinned link in the guest)."""
    r = subprocess.run(["bpftool", "-j"] + list(args), capture_output=True, text=True)
    check(r.stdout.strip(), "bpftool %s: %s" % (" ".join(args), r.stderr.strip()))
    return json.loads(r.stdout)


def file_open_links():
    """The BPF LSM links on file_open: those with bw_file_open's target."""
    ours = bpftool_json("link", "show", "pinned", "/sys/fs/bpf/bpfwarden/links/bw_file_open")
    return [l for l in bpftool_json("link", "show") if l.get("attach_type") == "lsm_mac"
            and l.get("target_btf_id") == ours["target_btf_id"]]


def test_start_with_a_full_file_open_trampoline():
    """A hook takes at most 38 BPF programs (BPF_MAX_TRAMP_LINKS). With
    file_open's full, a start must still govern: a trial attach there would
    get E2BIG (54 concurrent starts saw it), and E2BIG is no refusal of BPF
    LSM. Filled with the probe object, each load attaching one program to
    file_open; the control is the next load, which the kernel refuses."""
    write(S + "/secret", "s\n")
    prof = profile("default allow\ndeny file r %s/secret\n" % S)
    check_eq(run(prof, [FSOP, "read", S + "/secret"]).lines, [EACCES], "a first start")
    fill = "/sys/fs/bpf/bwfill"
    probe_obj = os.path.join(BUILD, "bpf", "probe.bpf.o")
    try:
        os.makedirs(fill, exist_ok=True)
        for i in range(40):
            r = subprocess.run(["bpftool", "prog", "loadall", probe_obj, "%s/%d" % (fill, i),
                                "autoattach"], capture_output=True, text=True)
            if r.returncode:
                break
        full = file_open_links()
        check_eq(len(full), 38, "programs on file_open after filling (last load: %s)"
                 % r.stderr.strip()[-300:])
        r = subprocess.run(["bpftool", "prog", "loadall", probe_obj, fill + "/more",
                            "autoattach"], capture_output=True, text=True)
        check(r.returncode and ("E2BIG" in r.stderr or "too long" in r.stderr),
              "the control: one more attach to file_open is refused with E2BIG: rc %d, %s"
              % (r.returncode, r.stderr.strip()[-300:]))
        r = run(prof, [FSOP, "read", S + "/secret"])
        check_eq(r.lines, [EACCES], "a start with file_open's trampoline full (stderr %s)"
                 % r.stderr.strip())
        check_eq([e["path"] for e in denials(r.events)], [S + "/secret"], "its deny event")
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        check("BPF LSM program attaches       yes  bw_file_open is attached (pinned)" in st, st)
    finally:
        subprocess.run(["rm", "-rf", fill])


PINS = "/sys/fs/bpf/bpfwarden"
ASK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ask_driver.py")


def slot_key(slot):
    return ["%d" % x for x in slot.to_bytes(4, "little")]


def rule_tries():
    """The policy slots holding a trie in each of the rule maps of maps (none
    before the first agent has pinned them). Slot by slot below bw_slot_end:
    bpftool's dump of a map of maps takes 17 s on 6.1 in the guest."""
    out = {"file": set(), "exec": set(), "net": set()}
    if not os.path.exists(PINS + "/bw_slot_end"):
        return out
    end = bpftool_json("map", "dump", "pinned", PINS + "/bw_slot_end")[0]["formatted"]["value"]
    for kind in out:
        for slot in range(end):
            r = subprocess.run(["bpftool", "map", "lookup", "pinned",
                                "%s/bw_%s_rules" % (PINS, kind), "key"] + slot_key(slot),
                               capture_output=True, text=True)
            if r.returncode == 0:
                out[kind].add(slot)
    return out


def test_each_slot_has_its_own_rule_tries():
    """A profile's file, exec and network rules are tries of its policy slot's
    own (bpf/maps.bpf.h): a second sandbox's start adds three, its end takes
    them away and leaves the first's, which still decides. A governed process
    whose slot has lost a trie is refused what that trie decides (fails
    closed), where the same operation passed just before. On another object
    each time (another file, another port): a verdict kept before the trie
    went stands until the generation moves on (docs/enforcement.md), which
    this deletion, made behind every agent's back, does not do."""
    write(S + "/secret", "s\n")
    for i in range(4):
        write("%s/n%d" % (S, i), "n\n")
    lsns = []
    for _ in range(2):
        lsns.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        lsns[-1].bind(("127.0.0.1", 0))
        lsns[-1].listen(16)
    port, port2 = (lsn.getsockname()[1] for lsn in lsns)
    base = rule_tries()
    pa = profile("default allow\ndeny file r %s/secret\n" % S, name="ta")
    pb = profile("default allow\ndeny file r %s/n0\n" % S, name="tb")
    a = subprocess.Popen([BW, "run", "--profile", pa, "--log", S + "/a.log", "--",
                          "/usr/bin/python3", "-u", ASK], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    b = None

    def ask(q):
        a.stdin.write(q + "\n")
        a.stdin.flush()
        return a.stdout.readline().strip()

    try:
        check_eq(a.stdout.readline().strip(), "READY", "the driver in sandbox A")
        mine = {k: v - base[k] for k, v in rule_tries().items()}
        check(all(len(v) == 1 for v in mine.values()), "A's new tries: %s" % mine)
        slot_a = mine["file"]
        check_eq(mine["exec"], slot_a, "A's exec trie's slot")
        check_eq(mine["net"], slot_a, "A's net trie's slot")

        b = subprocess.Popen([BW, "run", "--profile", pb, "--log", S + "/b.log", "--",
                              "sh", "-c", "read x"], stdin=subprocess.PIPE, text=True)
        wait_for(lambda: os.path.exists(S + "/b.log") and "governing" in read(S + "/b.log"),
                 what="sandbox B")
        both = rule_tries()
        slot_b = both["file"] - base["file"] - slot_a
        check_eq(len(slot_b), 1, "B's file trie (slots %s)" % both)
        for kind in both:
            check_eq(both[kind] - base[kind], slot_a | slot_b, "%s tries with A and B" % kind)
        b.communicate("\n", timeout=60)
        check_eq(b.returncode, 0, "sandbox B's exit status")
        for kind, slots in rule_tries().items():
            check_eq(slots - base[kind], slot_a, "%s tries after B ended" % kind)
        check_eq(ask("open %s/secret" % S), EACCES, "A's denied file after B ended")
        check_eq(ask("open %s/n0" % S), "OK", "B's denied file in A")

        key = slot_key(next(iter(slot_a)))

        def drop(kind):
            r = subprocess.run(["bpftool", "map", "delete", "pinned",
                                "%s/bw_%s_rules" % (PINS, kind), "key"] + key,
                               capture_output=True, text=True)
            check_eq(r.returncode, 0, "deleting A's %s trie: %s" % (kind, r.stderr))

        check_eq(ask("connect %d" % port), "OK", "connect with A's net trie")
        drop("net")
        check_eq(ask("connect %d" % port2), "ERR EPERM", "connect without it")
        check_eq(ask("exec /usr/bin/true"), "OK", "exec with A's exec trie")
        drop("exec")
        check_eq(ask("exec /usr/bin/false"), EACCES, "exec without it")
        check_eq(ask("open %s/n1" % S), "OK", "open with A's file trie")
        drop("file")
        check_eq(ask("open %s/n2" % S), EACCES, "open without it")
    finally:
        for lsn in lsns:
            lsn.close()
        # Their commands end with their input, and the agents let their cgroups go
        # (a killed agent would leave its cgroup governed for the tests after).
        for p in (a, b):
            if p and p.poll() is None:
                p.stdin.close()
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    check_eq(a.returncode, 0, "sandbox A's exit status")


def test_attach_child_cgroup_outside_and_detach():
    write(S + "/secret", "s\n")
    root = cgroup_root()
    cg = os.path.join(root, "bwtest-attach")
    child = os.path.join(cg, "child")
    os.makedirs(cg, exist_ok=True)
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    log = S + "/attach.log"
    agent = subprocess.Popen([BW, "attach", "--cgroup", "bwtest-attach", "--profile", p,
                              "--log", log])

    def in_cgroup(dirname):
        cmd = "echo $$ > %s/cgroup.procs && exec %s read %s/secret" % (dirname, FSOP, S)
        return subprocess.run(["sh", "-c", cmd], capture_output=True, text=True).stdout.strip()

    try:
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
        check_eq(in_cgroup(cg), EACCES, "process in the attached cgroup")
        os.makedirs(child)  # created after attach
        check_eq(in_cgroup(child), EACCES, "process in a child cgroup created after attach")
        out = subprocess.run([FSOP, "read", S + "/secret"], capture_output=True, text=True)
        check_eq(out.stdout.strip(), "OK", "process outside every governed cgroup")
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        check("/bwtest-attach/child" in st, "status lists the child:\n" + st)
        d = subprocess.run([BW, "detach", "--cgroup", cg], capture_output=True, text=True)
        check_eq(d.returncode, 0, "detach exit status (%s)" % d.stderr)
        agent.wait(timeout=30)
        check_eq(in_cgroup(child), "OK", "child cgroup after detach")
        check_eq(in_cgroup(cg), "OK", "cgroup after detach")
        paths = [e["cgroup"]["path"] for e in denials(events(log))]
        check_eq(paths, ["/bwtest-attach", "/bwtest-attach/child"], "event cgroups")
    finally:
        if agent.poll() is None:
            agent.kill()
        for d in (child, cg):
            if os.path.isdir(d):
                subprocess.run(["sh", "-c", "cat %s/cgroup.procs | while read p; do echo $p > "
                                "%s/cgroup.procs; done; rmdir %s" % (d, root, d)])


def test_attach_detaches_on_sigterm():
    write(S + "/secret", "s\n")
    root = cgroup_root()
    cg = os.path.join(root, "bwtest-term")
    os.makedirs(cg, exist_ok=True)
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    log = S + "/term.log"
    agent = subprocess.Popen([BW, "attach", "--cgroup", cg, "--profile", p, "--log", log])
    try:
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
        agent.send_signal(signal.SIGTERM)
        check_eq(agent.wait(timeout=30), 0, "attach exit status on SIGTERM")
        cmd = "echo $$ > %s/cgroup.procs && exec %s read %s/secret" % (cg, FSOP, S)
        out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True).stdout.strip()
        check_eq(out, "OK", "after SIGTERM the cgroup is free")
    finally:
        if agent.poll() is None:
            agent.kill()
        subprocess.run(["sh", "-c", "cat %s/cgroup.procs | while read p; do echo $p > "
                        "%s/cgroup.procs; done; rmdir %s" % (cg, root, cg)])


def test_full_ring_buffer_reports_lost_events():
    """With the agent stopped, denials overflow the ring buffer: every one is
    either a deny event or counted in a `lost` record, none vanish."""
    write(S + "/secret", "s\n")
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    n = 20000  # about 2.5 MiB of events for a 1 MiB ring buffer
    code = ("import os\nn = 0\nopen('%s/ready', 'w')\nwhile not os.path.exists('%s/go'): pass\n"
            "for _ in range(%d):\n    try:\n        os.close(os.open('%s/secret', os.O_RDONLY))\n"
            "    except PermissionError:\n        n += 1\nprint(n)\nopen('%s/done', 'w')\n"
            % (S, S, n, S, S))
    log = S + "/lost.log"
    # No event rate limit: this is about the ring buffer itself.
    agent = subprocess.Popen([BW, "run", "--profile", p, "--log", log, "--event-rate", "0", "--",
                              "/usr/bin/python3", "-c", code], stdout=subprocess.PIPE, text=True)
    # The program running, not only the agent's "governing" line: an agent
    # stopped before it lets its child go would leave no program to flood it.
    wait_for(lambda: os.path.exists(S + "/ready"), what="the program")
    agent.send_signal(signal.SIGSTOP)
    write(S + "/go", "")
    # The agent cannot read while stopped; wait until the child is done.
    wait_for(lambda: os.path.exists(S + "/done"), timeout=300, what="the denials")
    agent.send_signal(signal.SIGCONT)
    out, _ = agent.communicate(timeout=120)
    check_eq(out.strip(), str(n), "denials seen by the program")
    evs = events(log)
    denied = len(denials(evs))
    lost = sum(e["count"] for e in evs if e["type"] == "lost")
    check(lost > 0, "the ring buffer overflowed (%d deny events)" % denied)
    check_eq(denied + lost, n, "deny events + lost count")
    check(all(e["reason"] == "ring buffer full or not read" for e in evs if e["type"] == "lost"),
          "reasons")


def test_exe_named_after_exit_or_exec():
    """An event's proc.exe is the program that acted, also when the agent
    reads the event after the process has exited (nothing left to read in
    /proc) or exec'd another program: the kernel puts the executable's
    device and inode in the event, and the agent names a program it has
    named before from them. Controls: a program never seen before, gone by
    then, has no exe (the route is real: the agent was too late to read
    it); one that exec'd since is named by what it runs now."""
    write(S + "/secret", "s\n")
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    code = """
import os, subprocess, sys, time
S = %r
def wait(f):
    while not os.path.exists(S + f):
        time.sleep(0.01)
def refused():
    try:
        open(S + "/secret")
    except PermissionError:
        return
    sys.exit("not refused")
# Seen while alive: cat (kept alive by reading stdin) and this python.
cat = subprocess.Popen(["/usr/bin/cat", S + "/secret", "-"], stdin=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
refused()
wait("/seen")
cat.stdin.close()
cat.wait()
open(S + "/ready", "w").close()
wait("/go")  # the agent is stopped from here on
subprocess.run(["/usr/bin/cat", S + "/secret"], stderr=subprocess.DEVNULL)
subprocess.run(["/usr/bin/head", S + "/secret"], stderr=subprocess.DEVNULL)
perl = subprocess.Popen(["/usr/bin/perl", "-e",
                         'open(F, "<", $ARGV[0]) and die; exec "/usr/bin/sleep", "5"',
                         S + "/secret"])
refused()
with open(S + "/pids", "w") as f:
    f.write("%%d %%d" %% (os.getpid(), perl.pid))
os.execv("/usr/bin/sleep", ["sleep", "5"])
""" % S
    log = S + "/exe.log"
    agent = subprocess.Popen([BW, "run", "--profile", p, "--log", log, "--",
                              "/usr/bin/python3", "-c", code])
    try:
        def seen(comm):
            return [e for e in denials(events(log)) if e["proc"]["comm"] == comm]
        wait_for(lambda: seen("cat") and seen("python3"), what="the first events")
        write(S + "/seen", "")
        wait_for(lambda: os.path.exists(S + "/ready"), what="the first cat's exit")
        agent.send_signal(signal.SIGSTOP)
        write(S + "/go", "")
        wait_for(lambda: os.path.exists(S + "/pids") and read(S + "/pids"), what="the pids")
        pids = read(S + "/pids").split()

        def runs_sleep(pid):
            try:
                return os.readlink("/proc/%s/exe" % pid) == "/usr/bin/sleep"
            except OSError:
                return False
        wait_for(lambda: all(runs_sleep(pid) for pid in pids), what="the execs of sleep")
        agent.send_signal(signal.SIGCONT)
        check_eq(agent.wait(timeout=60), 0, "agent exit status")
    finally:
        if agent.poll() is None:
            agent.send_signal(signal.SIGCONT)
            agent.kill()
    evs = denials(events(log))
    got = [(e["proc"]["comm"], e["proc"]["exe"]) for e in evs]
    python = os.path.realpath("/usr/bin/python3")
    # Each pair's own order is the race of two processes: compared as sets.
    check_eq(sorted(got[:2]), [("cat", "/usr/bin/cat"), ("python3", python)], "seen alive")
    check_eq(sorted(got[2:]), [("cat", "/usr/bin/cat"), ("head", ""), ("perl", "/usr/bin/sleep"),
                               ("python3", python)], "read after exit or exec")


def test_event_rate_throttles_a_flood_of_denials():
    """A program retrying a denied open in a loop: every attempt is refused,
    at most --event-rate events a second are logged, the rest are counted."""
    write(S + "/secret", "s\n")
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    n = 5000
    code = ("import os\nn = 0\nfor _ in range(%d):\n    try:\n"
            "        os.close(os.open('%s/secret', os.O_RDONLY))\n"
            "    except PermissionError:\n        n += 1\nprint(n)\n" % (n, S))
    r = run(p, ["/usr/bin/python3", "-c", code], extra=("--event-rate", "50"))
    check_eq(r.stdout.strip(), str(n), "every attempt refused")
    denied = len(denials(r.events))
    throttled = sum(e["count"] for e in r.events
                    if e["type"] == "lost" and e["reason"] == "throttled")
    check(0 < denied < n / 4, "events were limited: %d" % denied)
    check_eq(denied + throttled, n, "events + throttled")


def test_learn_mode_and_switching_modes():
    """Learn sends each distinct access once and keeps the profile's denies;
    `bpfwarden mode` switches a running cgroup to enforce and audit."""
    write(S + "/a", "a\n")
    write(S + "/secret", "s\n")
    root = cgroup_root()
    cg = os.path.join(root, "bwtest-learn")
    os.makedirs(cg, exist_ok=True)
    p = profile("default deny\n" + RUNTIME_RULES + "allow file r /etc/**\n"
                "deny file r %s/secret\n" % S)
    log = S + "/learn.log"
    agent = subprocess.Popen([BW, "attach", "--cgroup", cg, "--profile", p, "--mode", "learn",
                              "--log", log])

    def in_cgroup(*ops):
        cmd = "echo $$ > %s/cgroup.procs && exec %s -" % (cg, FSOP)
        return subprocess.run(["sh", "-c", cmd], input="".join(" ".join(o) + "\n" for o in ops),
                              capture_output=True, text=True).stdout.split("\n")[:-1]

    try:
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
        got = in_cgroup(("read", S + "/a"), ("read", S + "/a"), ("append", S + "/a"),
                        ("read", S + "/secret"))
        check_eq(got, ["OK", "OK", "OK", EACCES], "learn mode outcomes")
        wait_for(lambda: S + "/secret" in read(log), what="events")
        evs = [e for e in events(log) if e.get("path", "").startswith(S)]
        check_eq([(e["type"], e["path"], e["access"], e["mode"]) for e in evs],
                 [("learn", S + "/a", "r", "learn"), ("learn", S + "/a", "w", "learn"),
                  ("deny", S + "/secret", "r", "learn")], "one learn event per access")
        out = subprocess.run([BW, "mode", "--cgroup", cg, "enforce"], capture_output=True,
                             text=True)
        check_eq(out.returncode, 0, "mode switch (%s)" % out.stderr)
        check_eq(in_cgroup(("read", S + "/a"), ("read", S + "/secret")), [EACCES, EACCES],
                 "enforce after the switch")
        subprocess.run([BW, "mode", "--cgroup", cg, "audit"], check=True, capture_output=True)
        check_eq(in_cgroup(("read", S + "/a")), ["OK"], "audit after the switch")
        wait_for(lambda: sum(1 for e in events(log) if e["type"] == "audit") >= 1, what="audit")
        check(agent.poll() is None, "the agent stayed attached through the switches")
        # Each event carries the mode the kernel decided under, not the one
        # the agent was started with.
        evs = [e for e in events(log) if e.get("path", "").startswith(S)][3:]
        check_eq([(e["type"], e["path"], e["decision"], e["mode"]) for e in evs],
                 [("deny", S + "/a", "deny", "enforce"), ("deny", S + "/secret", "deny", "enforce"),
                  ("audit", S + "/a", "allow", "audit")], "events after the switches")
        # The slot's counters: each denied operation counted once, by what
        # its mode made of it (2 learned, 1 learn-mode deny, 2 enforce
        # denies, 1 audited).
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        line = [l for l in st.splitlines() if "agent pid %d " % agent.pid in l and "denied" in l]
        check_eq(len(line), 1, "the slot's counters in status:\n" + st)
        check("3 denied, 1 audited, 2 learned, 0 lost" in line[0], "counters: " + line[0])
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
        subprocess.run(["sh", "-c", "cat %s/cgroup.procs | while read p; do echo $p > "
                        "%s/cgroup.procs; done; rmdir %s" % (cg, root, cg)])


def test_on_deny_kill_ends_the_whole_cgroup():
    """`on-deny kill`: the first denial kills every process of the governed
    cgroup through cgroup.kill, which a process that ignores SIGTERM cannot
    escape, and leaves the rest of its work undone."""
    write(S + "/secret", "s\n")
    p = profile("default allow\non-deny kill\ndeny file r %s/secret\n" % S)
    script = ("trap '' TERM INT HUP; (trap '' TERM; sleep 300) & "
              "cat %s/secret; sleep 1; echo survived > %s/after" % (S, S))
    start = time.time()
    r = run(p, ["sh", "-c", script], timeout=120)
    check(time.time() - start < 60, "the sleeping child did not keep the run alive")
    check_eq(r.rc, 128 + signal.SIGKILL, "exit status of a killed command")
    check(not os.path.exists(S + "/after"), "nothing ran after the denial")
    msgs = [e.get("msg", "") for e in r.events if e["type"] == "agent"]
    check(any("on-deny kill" in m for m in msgs), "agent record: %r" % msgs)


def test_run_exit_status_and_cleanup():
    """run returns CMD's status; like env(1) and podman, 127 for a CMD not
    found, 126 for one that cannot run (not executable, or refused by the
    profile), 125 for its own failure (a profile that does not parse)."""
    p = profile("default allow\n")
    r = run(p, ["sh", "-c", "exit 7"])
    check_eq(r.rc, 7, "exit status of the command")
    check_eq(run(p, [S + "/no-such-program"]).rc, 127, "a command not found")
    write(S + "/not-executable", "#!/bin/sh\n")
    check_eq(run(p, [S + "/not-executable"]).rc, 126, "a command not executable")
    r = run(profile("default allow\ndeny exec /usr/bin/true\n"), ["/usr/bin/true"])
    check_eq(r.rc, 126, "a command the profile refuses (%s)" % r.stderr.strip())
    check_eq(run(profile("default allow\nallow file q /x\n"), ["true"]).rc, 125,
             "a profile that does not parse")
    left = os.listdir(os.path.join(cgroup_root(), "bpfwarden"))
    check_eq([d for d in left if d.startswith("run-")], [], "run cgroups left behind")
    st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
    check("governed cgroups:\n  none" in st, "nothing governed after run:\n" + st)


def test_run_stays_in_the_callers_cgroup():
    """run makes its command's cgroup below the caller's own, the way a
    systemd unit or a CI job holds its processes: the caller's pids.max (a
    unit's TasksMax=) still limits the command, the profile governs it there,
    and nothing is left behind. A caller whose cgroup takes no child gets the
    command under /bpfwarden, and --verbose says why."""
    write(S + "/secret", "s\n")
    root = cgroup_root()
    unit = os.path.join(root, "bwtest-unit")
    os.makedirs(unit, exist_ok=True)
    had_pids = "pids" in read(root + "/cgroup.subtree_control").split()
    if not had_pids:
        write(root + "/cgroup.subtree_control", "+pids")
    prog = ("import errno, os, time\n"
            "print(open('/proc/self/cgroup').read().strip())\n"
            "try:\n    open(%r)\n    print('read')\n"
            "except OSError as e:\n    print(errno.errorcode[e.errno])\n"
            "n = 0\n"
            "try:\n"
            "    while n < 40:\n"
            "        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n"
            "        n += 1\n"
            "    print(n, 'forks')\n"
            "except OSError as e:\n    print(n, errno.errorcode[e.errno])\n") % (S + "/secret")
    p = profile("default allow\ndeny file r %s/secret\n" % S)

    def run_in_unit():
        log = S + "/unit.log"
        if os.path.exists(log):
            os.unlink(log)
        cmd = ('echo $$ > %s/cgroup.procs && exec %s run --verbose --log %s --profile %s -- '
               '%s -c "$0"' % (unit, BW, log, p, sys.executable))
        r = subprocess.run(["sh", "-c", cmd, prog], capture_output=True, text=True, timeout=120)
        d = [(e["path"], e["cgroup"]["path"]) for e in denials(events(log))]
        return r, r.stdout.split("\n")[:-1], d

    try:
        write(unit + "/pids.max", "16")
        r, out, d = run_in_unit()
        check_eq(r.returncode, 0, "the command's status (stderr: %s)" % r.stderr[-2000:])
        check(len(out) == 3 and out[0].startswith("0::/bwtest-unit/bpfwarden-run-"),
              "the command's cgroup is below the caller's: %r" % out)
        where = out[0][3:]
        check("the command's cgroup: %s, below this process's own" % where in r.stderr,
              "--verbose says where: " + r.stderr[-2000:])
        check_eq(out[1], "EACCES", "the profile governs the command there")
        check_eq(d, [(S + "/secret", where)], "the denial, with the command's cgroup")
        n, why = out[2].split()
        check(why == "EAGAIN" and int(n) < 16,
              "the caller's pids.max limits the command: %s" % out[2])
        check_eq([c for c in os.listdir(unit) if c.startswith("bpfwarden-run-")], [],
                 "cgroups left below the caller's")

        write(unit + "/pids.max", "max")
        write(unit + "/cgroup.max.descendants", "0")
        r, out, d = run_in_unit()
        check_eq(r.returncode, 0, "the command's status (stderr: %s)" % r.stderr[-2000:])
        check(len(out) == 3 and out[0].startswith("0::/bpfwarden/run-"),
              "a caller whose cgroup takes no child: under /bpfwarden: %r" % out)
        check("cannot make a cgroup below this process's own, /bwtest-unit (Resource "
              "temporarily unavailable): the command's goes under /bpfwarden" in r.stderr,
              "--verbose says why: " + r.stderr[-2000:])
        check_eq(out[1], "EACCES", "the profile governs the command there too")
        check_eq(out[2], "40 forks", "outside the caller's cgroup, its limit is not the command's")
    finally:
        os.rmdir(unit)
        if not had_pids:
            try:
                write(root + "/cgroup.subtree_control", "-pids")
            except OSError:
                pass


def test_bad_profile_changes_nothing():
    """A profile that does not parse, or parses and does not compile, is
    refused with a diagnostic and leaves the running policy as it was: the
    governed cgroup keeps its profile, its denials and its agent."""
    write(S + "/a", "a\n")
    write(S + "/secret", "s\n")
    root = cgroup_root()
    cg = os.path.join(root, "bwtest-bad")
    os.makedirs(cg, exist_ok=True)
    good = profile("default allow\ndeny file r %s/secret\n" % S)
    log = S + "/good.log"
    agent = subprocess.Popen([BW, "attach", "--cgroup", cg, "--profile", good, "--log", log])

    def in_cgroup(*ops):
        cmd = "echo $$ > %s/cgroup.procs && exec %s -" % (cg, FSOP)
        return subprocess.run(["sh", "-c", cmd], input="".join(" ".join(o) + "\n" for o in ops),
                              capture_output=True, text=True).stdout.split("\n")[:-1]

    def governed():
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        return st[st.index("governed cgroups:"):]

    try:
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), what="attach")
        check_eq(in_cgroup(("read", S + "/a"), ("read", S + "/secret")), ["OK", EACCES],
                 "the good profile holds")
        before = governed()
        bad_parse = profile("default allow\nallow file q /tmp\n")
        # Parses, but cannot compile: more port ranges on one address than a key holds.
        bad_compile = profile("default deny net\n" + "".join(
            "allow net connect tcp 127.0.0.1:%d\n" % (1000 + i) for i in range(40)))
        for bad, where in ((bad_parse, bad_parse + ":3:"), (bad_compile, bad_compile + ":")):
            r = run(bad, ["true"])
            check_eq(r.rc, 125, "run with a bad profile: exit status")
            check(where in r.stderr, "diagnostic names the line: " + r.stderr)
            out = subprocess.run([BW, "attach", "--cgroup", cg, "--profile", bad],
                                 capture_output=True, text=True, timeout=30)
            check_eq(out.returncode, 1, "attach with a bad profile: exit status")
            check(out.stderr.strip(), "attach says why")
        check_eq(governed(), before, "what status shows as governed")
        check_eq(in_cgroup(("read", S + "/a"), ("read", S + "/secret")), ["OK", EACCES],
                 "the good profile still holds")
        check(agent.poll() is None, "the governing agent is still attached")
        runs = os.path.join(root, "bpfwarden")
        left = os.listdir(runs) if os.path.isdir(runs) else []
        check_eq([d for d in left if d.startswith("run-")], [], "run cgroups left behind")
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
        subprocess.run(["sh", "-c", "cat %s/cgroup.procs | while read p; do echo $p > "
                        "%s/cgroup.procs; done; rmdir %s" % (cg, root, cg)])


TESTS = [
    test_path_not_utf8_is_exact_in_the_log,
    test_exact_and_subtree,
    test_name_prefix_rules,
    test_own_proc_entries,
    test_r_versus_w,
    test_most_specific_and_deny_ties,
    test_default_allow_and_default_deny,
    test_every_write_route_refused,
    test_other_names_of_a_denied_file,
    test_long_paths,
    test_denied_tree_through_other_mounts_and_namespaces,
    test_python_ctypes_route,
    test_audit_mode_logs_without_blocking,
    test_concurrent_sandboxes,
    test_many_sandboxes_each_with_its_own_profile,
    test_start_with_a_full_file_open_trampoline,
    test_each_slot_has_its_own_rule_tries,
    test_attach_child_cgroup_outside_and_detach,
    test_attach_detaches_on_sigterm,
    test_full_ring_buffer_reports_lost_events,
    test_exe_named_after_exit_or_exec,
    test_event_rate_throttles_a_flood_of_denials,
    test_learn_mode_and_switching_modes,
    test_on_deny_kill_ends_the_whole_cgroup,
    test_run_exit_status_and_cleanup,
    test_run_stays_in_the_callers_cgroup,
    test_bad_profile_changes_nothing,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
