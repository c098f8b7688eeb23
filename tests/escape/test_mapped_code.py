#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Code that is mapped rather than executed: a library preloaded into an
allowed program, a memfd opened as a library, the dynamic loader run on a
program no exec rule allows, and a file mapped executable by hand.

Each route is tried by tests/escape/mapped_driver.py (one OK/ERR line per
attempt) twice (tests/escape/escape.py): under a forbidding profile, where
the mapping must be refused, the code must not run (the mark that
libbwmark.so's constructor, or the program, would write is not there) and
exactly one deny event must name the file (`op` mmap or mprotect, access
m); and, as its control, under a permissive profile, where it must run.

The loader does not say the errno of a mapping it could not make, only
"failed to map segment from shared object": the driver reports that as
ERR MAP_FAILED, and the event says it was a refusal. Where the route maps by
hand, the errno is EACCES.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from escape import (BUILD, BW, RUNTIME_RULES, SCRATCH, check, check_eq, denials,  # noqa: E402
                    got_through, main, outcome_lines, profile, refused, run)
from bwtest import rule_of  # noqa: E402

S = SCRATCH
HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "mapped_driver.py")
MARKLIB = os.path.join(BUILD, "tests", "libbwmark.so")
PY = "/usr/bin/python3"
LOADER = "/lib64/ld-linux-x86-64.so.2"
REPO = os.path.dirname(os.path.dirname(HERE))

# Forbidding: programs from /usr/bin and the build tree run, system libraries
# are mapped, the driver is read; the job directory is read-write and S/denied is readable (so
# that only an exec rule can stop what is in it), but nothing there may run.
FORBID = ("default deny\n" + RUNTIME_RULES + "allow file r %s\n" % DRIVER +
          "allow file rw %s/job/**\nallow file r %s/denied/**\n" % (S, S))
PERMISSIVE = "default allow\nallow exec memfd\n"


def setup():
    os.makedirs(S + "/job")
    os.makedirs(S + "/denied")
    shutil.copy(MARKLIB, S + "/denied/libbwmark.so")
    return S + "/denied/libbwmark.so"


def attempt(prof, *routes):
    return run(prof, [PY, DRIVER] + list(routes))


def code_denials(r):
    """Refusals to run or map code (ctypes' libffi may also be refused /proc)."""
    return [(e["op"], e["path"]) for e in denials(r.events)
            if e["op"] in ("exec", "mmap", "mprotect")]


def did_not_run(mark, what):
    check(not os.path.exists(mark), "%s: the refused code ran (%s was written)" % (what, mark))


def mapped(r, obj, what, op="mmap", errno_name="MAP_FAILED", key="path"):
    """Refused: the attempt failed, one deny event names obj, for mapping (m)."""
    e = refused(r, errno_name, obj, what, key=key)
    check_eq((e["op"], e["access"]), (op, "m"), what + ": the event's op and access")
    return e


def control(text, routes, mark, what, name="permissive"):
    if mark and os.path.exists(mark):
        os.unlink(mark)
    r = attempt(profile(text, name=name), *routes)
    got_through(r, what)
    if mark:
        check(os.path.exists(mark), "%s: the control did not run the code" % what)
    return r


def test_ld_preload_from_a_denied_directory():
    """A library in a directory no exec rule covers, preloaded into an allowed
    program: the loader's mapping of its code is refused, the program runs
    without it."""
    lib = setup()
    mark = S + "/job/mark-preload"
    r = attempt(profile(FORBID, name="forbid"), "preload:%s,%s" % (lib, mark))
    e = mapped(r, lib, "LD_PRELOAD")
    check_eq(e["proc"]["comm"], "true", "the allowed program mapped it")
    did_not_run(mark, "LD_PRELOAD")
    control(PERMISSIVE, ["preload:%s,%s" % (lib, mark)], mark, "LD_PRELOAD")


def test_dlopen_of_a_memfd():
    """A library written into a memfd and opened as /proc/self/fd/N runs only
    under `allow exec memfd`, like a program run from a memfd."""
    setup()
    mark = S + "/job/mark-memfd"
    route = "dlopen-memfd:%s,%s" % (MARKLIB, mark)
    r = attempt(profile(FORBID, name="forbid"), route)
    e = mapped(r, "", "dlopen of a memfd")
    check(e.get("pseudo_file"), "the memfd is flagged as having no path: %r" % e)
    did_not_run(mark, "dlopen of a memfd")
    control(PERMISSIVE, [route], mark, "dlopen of a memfd")
    # `allow exec memfd` is what lets it, not a default.
    os.unlink(mark)
    r = attempt(profile(FORBID + "allow exec memfd\n", name="memfd"), route)
    check_eq(outcome_lines(r), ["OK ran"], "dlopen of a memfd under `allow exec memfd`")
    check_eq(code_denials(r), [], "code refused under `allow exec memfd`")


def test_loader_runs_a_denied_program():
    """`ld.so PROG` under `allow exec /usr/**`, which covers the loader's own
    path on a merged-/usr system: the loader may run, but PROG, which no exec
    rule allows, is refused when the loader maps it. So is a program that a
    deny rule names, by that rule."""
    setup()
    check(os.path.realpath(LOADER).startswith("/usr/"), "the loader is under /usr")
    shutil.copy("/usr/bin/touch", S + "/denied/touch")
    mark = S + "/job/mark-loader"
    prof = profile(FORBID + "allow exec /usr/**\n", name="forbid")
    r = attempt(prof, "loader:%s/denied/touch,%s" % (S, mark))
    e = mapped(r, S + "/denied/touch", "the loader run directly")
    check_eq(e["rule"], "default", "refused by the default")
    did_not_run(mark, "the loader run directly")
    control(PERMISSIVE, ["loader:%s/denied/touch,%s" % (S, mark)], mark,
            "the loader run directly")

    prof = profile(FORBID + "allow exec /usr/**\ndeny exec /usr/bin/touch\n", name="forbid")
    os.unlink(mark)
    r = attempt(prof, "loader:/usr/bin/touch,%s" % mark)
    e = mapped(r, "/usr/bin/touch", "the loader on a program a deny rule names")
    check_eq(e["rule"], rule_of(prof, "deny exec /usr/bin/touch"), "refused by the deny rule")
    did_not_run(mark, "the loader on a denied program")


def test_a_file_mapped_executable_by_hand():
    """mmap with PROT_EXEC, and a readable mapping made executable with
    mprotect: each refused with EACCES and one event (mmap, mprotect)."""
    lib = setup()
    prof = profile(FORBID, name="forbid")
    r = attempt(prof, "mmap:" + lib)
    mapped(r, lib, "mmap PROT_EXEC", errno_name="EACCES")
    r = attempt(prof, "mprotect:" + lib)
    mapped(r, lib, "mprotect PROT_EXEC", op="mprotect", errno_name="EACCES")
    control(PERMISSIVE, ["mmap:" + lib, "mprotect:" + lib], None, "mapping by hand")


def test_libraries_allowed_as_libraries():
    """`allow exec lib DIR/**` lets a library there be preloaded, and mapped,
    without an event, but not run as a program; anonymous executable memory
    (what JITs use) is not governed; and a program whose loader may not be
    mapped does not start."""
    lib = setup()
    mark = S + "/job/mark-lib"
    shutil.copy("/usr/bin/true", S + "/denied/prog")
    prof = profile(FORBID + "allow exec lib %s/denied/**\n" % S, name="libs")
    r = run(prof, [PY, DRIVER, "preload:%s,%s" % (lib, mark), "mmap:" + lib, "anon"])
    check_eq(outcome_lines(r), ["OK ran", "OK", "OK"], "allowed as a library")
    check_eq(code_denials(r), [], "deny events")
    r = run(prof, [S + "/denied/prog"])
    check(r.rc != 0, "a library directory is not a program directory (rc %d)" % r.rc)
    check_eq(code_denials(r), [("exec", S + "/denied/prog")], "the exec refused")
    # Without a library rule for it, the loader cannot be mapped: the kernel
    # kills the program in its exec, past the point of no return.
    prof = profile("default allow file\ndefault deny exec\nallow exec /usr/bin/true\n",
                   name="nolibs")
    r = run(prof, ["/usr/bin/true"])
    check_eq(r.rc, 128 + 11, "killed by SIGSEGV (stderr %s)" % r.stderr)
    check_eq(code_denials(r), [("mmap", os.path.realpath(LOADER))], "the loader refused")


def test_shipped_profiles_still_run_programs():
    """python3 with C extension modules (_ctypes, _hashlib and libcrypto)
    under the shipped python-sandbox profile, a shell and its utilities under
    abstractions/base and shell, and a dynamically linked C program under
    abstractions/base: none of them is refused any code."""
    os.makedirs("/tmp/job", exist_ok=True)
    with open("/tmp/job/main.py", "w") as f:
        f.write("import ctypes, hashlib, json, zlib\n"
                "print('OK', hashlib.sha256(b'x').hexdigest()[:8], zlib.crc32(b'x'))\n")
    shipped = os.path.join(REPO, "profiles", "python-sandbox.profile")
    r = run(shipped, [PY, "/tmp/job/main.py"], timeout=600)
    check(r.rc == 0 and r.stdout.startswith("OK "),
          "python3 under the shipped profile: rc %d, stdout %r, stderr %r"
          % (r.rc, r.stdout, r.stderr))
    check_eq(code_denials(r), [], "code refused to python3 under the shipped profile")

    shell = profile('default deny\ninclude "abstractions/base"\ninclude "abstractions/shell"\n'
                    "allow file r /etc/**\n", name="shell")
    r = run(shell, ["/bin/sh", "-c", "ls /etc | sort | head -3 | wc -l; id -u >/dev/null"])
    check(r.rc == 0 and r.stdout.strip() == "3",
          "a shell script: rc %d, stdout %r, stderr %r" % (r.rc, r.stdout, r.stderr))
    check_eq(code_denials(r), [], "code refused to the shell")

    fsop = os.path.join(BUILD, "tests", "fsop")
    c = profile('default deny\ninclude "abstractions/base"\nallow exec %s\nallow file r %s\n'
                "allow file r %s/**\n" % (fsop, fsop, S), name="c")
    with open(S + "/in", "w") as f:
        f.write("x\n")
    r = run(c, [fsop, "-"], stdin="read %s/in\n" % S)
    check(r.rc == 0 and r.stdout.strip() == "OK",
          "a dynamically linked C program: rc %d, stdout %r, stderr %r"
          % (r.rc, r.stdout, r.stderr))
    check_eq(denials(r.events), [], "denials of the C program")


def test_learn_never_allows_the_loader():
    """A workload that runs the loader directly once: the learned profile has
    no rule to run it (a comment says why), it checks clean, and enforcing it
    refuses the loader route while the rest of the workload runs."""
    os.makedirs(S + "/job")
    out = S + "/learned.profile"
    work = ["/bin/sh", "-c", "%s /usr/bin/true && /usr/bin/true && echo done" % LOADER]
    r = subprocess.run([BW, "run", "--mode", "learn", "--output", out, "--log", S + "/l.log",
                        "--"] + work, capture_output=True, text=True)
    check_eq((r.returncode, r.stdout.strip()), (0, "done"), "learning run (%s)" % r.stderr)
    text = open(out).read()
    loader = os.path.realpath(LOADER)
    rules = [l for l in text.splitlines() if l.startswith(("allow", "deny"))]
    check(not any(l.startswith("allow exec ") and l.endswith(loader) and " lib " not in l
                  for l in rules), "a rule to run the loader was learned:\n" + text)
    check("# not written: allow exec " + loader in text, "the loader's comment:\n" + text)
    c = subprocess.run([BW, "check", out], capture_output=True, text=True)
    check_eq(c.returncode, 0, "bpfwarden check of the learned profile: %s" % c.stderr)
    r = run(out, ["/bin/sh", "-c", "/usr/bin/true && echo direct; %s /usr/bin/true || echo refused"
                  % LOADER])
    check_eq(r.stdout.split(), ["direct", "refused"], "the learned profile enforced (stderr %s)"
             % r.stderr)
    check_eq(code_denials(r), [("exec", loader)], "the loader refused")


TESTS = [
    test_ld_preload_from_a_denied_directory,
    test_dlopen_of_a_memfd,
    test_loader_runs_a_denied_program,
    test_a_file_mapped_executable_by_hand,
    test_libraries_allowed_as_libraries,
    test_shipped_profiles_still_run_programs,
    test_learn_never_allows_the_loader,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
