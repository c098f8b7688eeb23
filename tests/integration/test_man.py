#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The man pages and the bash completion say what the programs say of
themselves: every command and every option of --help is in bpfwarden(8)
under its command, the hook's usage in bpfwarden-hook(8), each section of
docs/profile-language.md in bpfwarden-profile(5), every exit status in the
table, and the pages render without a warning. The completion, run in bash,
completes commands, options and modes. No privilege, no BPF: runs on the
build host (make hosttest). The --help text is read here on its own, not
through tools/man.py, so the two cannot agree by sharing a mistake."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwtest import BUILD, BW, REPO, check, check_eq, main  # noqa: E402

HOOK = os.path.join(BUILD, "bpfwarden-hook")
MAN = os.path.join(BUILD, "man")
COMPLETION = os.path.join(BUILD, "completion", "bpfwarden")


def out(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          check=True, **kw).stdout


def render(page):
    """The page as text: no hyphenation, lines long enough not to break an option."""
    return out(["groff", "-k", "-t", "-man", "-Tutf8", "-rHY=0", "-rLL=300n", "-P", "-cbou",
                os.path.join(MAN, page)], env=dict(os.environ, LC_ALL="C.UTF-8"))


def commands():
    text = out([BW, "--help"])
    names = re.findall(r"^  ([a-z]+) +\S", text.split("Commands:")[1].split("\n\n")[0], re.M)
    check(len(names) >= 10, "bpfwarden --help lists its commands: %r" % names)
    return names


def options(name):
    """Each option line's -x and --long, as argp prints them."""
    text = out([BW, name, "--help"])
    found = []
    for line in text.split("\n"):
        m = re.match(r"^  (?:(-\w), |    )(--[\w-]+)", line)
        if m:
            found += [o for o in m.groups() if o]
    check("--help" in found, "%s --help lists --help" % name)
    return found


def sections(text):
    """bpfwarden(8)'s COMMANDS section, split at each command's heading."""
    body = text.split("\nCOMMANDS\n")[1].split("\nEXIT STATUS\n")[0]
    parts = re.split(r"^   ([a-z]+)$", body, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_command_and_option():
    """Each command has its section, with its usage line and every option."""
    per = sections(render("bpfwarden.8"))
    for name in commands():
        check(name in per, "bpfwarden(8) has a section for %s (has %s)" % (name, sorted(per)))
        usage = out([BW, name, "--help"]).split("\n")[0][len("Usage: "):]
        check(usage in per[name], "%s's usage line %r in its section" % (name, usage))
        for opt in options(name):
            check(re.search(r"(^|[\s,])%s([\s=,]|$)" % re.escape(opt), per[name], re.M),
                  "%s's option %s in its section of bpfwarden(8)" % (name, opt))


def test_exit_statuses():
    """The exit status table has every status the commands use."""
    text = render("bpfwarden.8")
    table = text.split("\nEXIT STATUS\n")[1].split("\nENVIRONMENT\n")[0]
    for status in ("0", "1", "2", "3", "125", "126", "127", "CMD's"):
        check(re.search(r"│\s*%s\s*│" % re.escape(status), table),
              "exit status %s in the table:\n%s" % (status, table))


def test_hook_page():
    """bpfwarden-hook(8) shows the hook's own usage and its exit statuses."""
    text = render("bpfwarden-hook.8")
    for line in out([HOOK, "--help"]).strip().split("\n"):
        check(" ".join(line.split()) in " ".join(text.split()),
              "the hook's --help line %r in bpfwarden-hook(8)" % line)
    for word in ("EXIT STATUS", "BW_HOOK_SOCKET", "BW_SELECTORS", "createRuntime", "invoke"):
        check(word in text, "%s in bpfwarden-hook(8)" % word)


def test_profile_page():
    """bpfwarden-profile(5) has every section of docs/profile-language.md."""
    text = render("bpfwarden-profile.5")
    with open(os.path.join(REPO, "docs", "profile-language.md")) as f:
        heads = re.findall(r"^##+ (.*)$", f.read(), re.M)
    check(len(heads) > 10, "profile-language.md has sections")
    flat = " ".join(text.split())
    for h in heads:
        plain = " ".join(re.sub(r"[`*]", "", h).split())
        check(plain in flat, "section %r in bpfwarden-profile(5)" % plain)


def test_pages_render_clean():
    """man(1) renders each page with every warning on and says nothing."""
    for page in sorted(os.listdir(MAN)):
        r = subprocess.run(["man", "--warnings", "-l", os.path.join(MAN, page)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8"))
        check_eq(r.returncode, 0, "man -l %s exit status" % page)
        # tbl cannot always fit a wide table's cell to 80 columns; nothing else.
        noise = [line for line in r.stderr.split("\n")
                 if line and "cannot adjust line" not in line]
        check_eq(noise, [], "man --warnings on %s" % page)
        first = r.stdout.split("\n")[0]
        check(first.startswith(page.split(".")[0].upper() + "(" + page.split(".")[1] + ")"),
              "%s's title line %r" % (page, first))


def complete(*words):
    """What the completion offers for the last of words, completed in bash."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
              '_bpfwarden; printf "%s\\n" "${COMPREPLY[@]}"')
    return out(["bash", "-c", script, "complete", COMPLETION] + list(words)).split()


def test_completion():
    """The completion completes commands, each command's options, modes and files."""
    check_eq(complete("bpfwarden", "de"), ["detach"], "completing 'de'")
    check_eq(sorted(complete("bpfwarden", "")), sorted(commands() + ["--help", "--version"]),
             "completing the command")
    for name in commands():
        got = [w.rstrip("=") for w in complete("bpfwarden", name, "-")]
        check_eq(sorted(set(got)), sorted(set(options(name))), "completing %s's options" % name)
    check_eq(complete("bpfwarden", "run", "--mode", "le"), ["learn"], "completing a mode")
    check_eq(complete("bpfwarden", "mode", "au"), ["audit"], "completing mode's MODE")
    prof = os.path.join(REPO, "profiles", "python-sandbox.profile")
    check_eq(complete("bpfwarden", "run", "-p", prof[:-6]), [prof], "completing a profile file")


if __name__ == "__main__":
    sys.exit(main([test_every_command_and_option, test_exit_statuses, test_hook_page,
                   test_profile_page, test_pages_render_clean, test_completion], sys.argv))
