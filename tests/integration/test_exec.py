#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Exec enforcement end to end: every route to running a program, tried by a
Python driver (os.execv, execveat through ctypes, memfd) in a governed
cgroup, checked by errno and by the events."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwtest import (LIB_RULES, SCRATCH, check, check_eq, denials, expect_driver, main, profile,
                    rule_of, run, write)

S = SCRATCH
HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "exec_driver.py")
PY = os.path.realpath("/usr/bin/python3")
LOADER = "/lib64/ld-linux-x86-64.so.2"
EACCES = "ERR EACCES"

BASE = "default allow file\ndefault deny exec\nallow exec %s\n" % PY + LIB_RULES


def expect(prof, cases):
    return expect_driver(prof, DRIVER, cases)


def test_allowed_and_denied_programs():
    p = profile(BASE + "allow exec /usr/bin/true\ndeny exec /usr/bin/id\n")
    r = expect(p, [("run:/usr/bin/true", "OK"), ("run:/usr/bin/id,-u", EACCES),
                   ("run:/usr/bin/whoami", EACCES)])
    d = [(e["op"], e["path"], e["access"], e["rule"], e.get("args")) for e in denials(r.events)]
    check_eq(d, [("exec", "/usr/bin/id", "x", rule_of(p, "deny exec /usr/bin/id"),
                  ["/usr/bin/id", "-u"]),
                 ("exec", "/usr/bin/whoami", "x", "default", ["/usr/bin/whoami"])], "events")


def test_copies_links_and_the_loader():
    os.makedirs(S + "/ok")
    shutil.copy("/usr/bin/true", S + "/prog")
    os.link(S + "/prog", S + "/ok/prog2")          # a second name of a denied program
    shutil.copy("/usr/bin/id", S + "/id-copy")     # a copy of a program the profile denies
    p = profile(BASE + "allow exec %s/ok/**\ndeny exec %s/prog\ndeny exec /usr/bin/id\n"
                % (S, S))
    r = expect(p, [("run:%s/ok/prog2" % S, EACCES),
                   ("run:%s/id-copy" % S, EACCES),
                   ("run:%s,%s/ok/prog2" % (LOADER, S), EACCES),
                   ("run:%s,/usr/bin/id" % LOADER, EACCES)])
    d = denials(r.events)
    check(d[0].get("by_inode") and d[0]["rule"] == rule_of(p, "deny exec %s/prog" % S),
          "hard link decided by inode: %r" % d[0])
    check_eq(d[1]["rule"], "default", "copy decided by the default")
    check_eq(os.path.realpath(d[2]["path"]), os.path.realpath(LOADER), "loader route refused")


def test_execveat_empty_path_and_memfd():
    p = profile(BASE + "allow exec /usr/bin/true\n")
    r = expect(p, [("execveat:/usr/bin/true", "OK"), ("execveat:/usr/bin/id", EACCES),
                   ("memfd:/usr/bin/true", EACCES)])
    d = denials(r.events)
    check_eq(d[1]["path"], "", "memfd has no path")
    check(d[1].get("pseudo_file"), "memfd flagged: %r" % d[1])
    p = profile(BASE + "allow exec /usr/bin/true\nallow exec memfd\n")
    expect(p, [("memfd:/usr/bin/true", "OK")])


def test_script_needs_its_interpreter():
    write(S + "/s.sh", "#!/bin/sh\nexit 0\n")
    write(S + "/s.py", "#!%s\nimport sys\nsys.exit(0)\n" % PY)
    os.chmod(S + "/s.sh", 0o755)
    os.chmod(S + "/s.py", 0o755)
    p = profile(BASE + "allow exec %s/s.sh\nallow exec %s/s.py\n" % (S, S))
    r = expect(p, [("run:%s/s.sh" % S, EACCES), ("run:%s/s.py" % S, "OK")])
    d = denials(r.events)
    check_eq(len(d), 1, "one refusal")
    check_eq(d[0]["path"], os.path.realpath("/bin/sh"), "the interpreter is what was refused")


def test_a_program_that_may_not_be_read_is_a_refused_exec():
    """The kernel opens a program to run it, and that open is decided by the
    file rules: a refusal there is told as the exec it stopped (access r),
    with the rule that refused it; a plain read of the same file stays an
    open."""
    p = profile(BASE + "allow exec /usr/bin/id\ndeny file r /usr/bin/id\n")
    r = expect(p, [("run:/usr/bin/id,-u", EACCES)])
    d = [(e["op"], e["path"], e["access"], e["rule"]) for e in denials(r.events)]
    check_eq(d, [("exec", "/usr/bin/id", "r", rule_of(p, "deny file r /usr/bin/id"))], "events")
    r = run(p, [PY, "-c", "open('/usr/bin/id', 'rb')"])
    d = [(e["op"], e["path"], e["access"]) for e in denials(r.events)]
    check_eq(d, [("open", "/usr/bin/id", "r")], "a read of it")


def test_audit_mode_runs_and_logs():
    p = profile(BASE)
    r = run(p, [PY, DRIVER, "run:/usr/bin/true"], mode="audit")
    check_eq(r.stdout.strip(), "OK", "audit mode does not block")
    audits = [(e["op"], e["path"]) for e in r.events if e["type"] == "audit"]
    check_eq(audits, [("exec", "/usr/bin/true")], "audit events")


TESTS = [
    test_allowed_and_denied_programs,
    test_copies_links_and_the_loader,
    test_execveat_empty_path_and_memfd,
    test_script_needs_its_interpreter,
    test_a_program_that_may_not_be_read_is_a_refused_exec,
    test_audit_mode_runs_and_logs,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
