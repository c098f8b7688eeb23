#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Man pages and bash completion, made from what the programs say of themselves.

bpfwarden(8)'s COMMANDS section and the completion's words are read from the
built binaries' --help, so neither can say something the program does not;
the prose around them is docs/man/*.md, the exit statuses are docs/operations.md's
table, and bpfwarden-profile(5) is docs/profile-language.md. lowdown turns the
Markdown into roff.

    tools/man.py AGENT HOOK OUTDIR     writes OUTDIR/man/{bpfwarden.8,
                                       bpfwarden-hook.8,bpfwarden-profile.5}
                                       and OUTDIR/completion/bpfwarden
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# argp's boilerplate after the options of a command with short options.
ARGP_NOTE = "Mandatory or optional arguments to long options are also mandatory"
OPTION = re.compile(r"^  (?:-(\w), |    )(--[\w-]+)(?:=(\S+))?\s*(.*)$")


def run_help(argv):
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"man.py: {' '.join(argv)} exited {out.returncode}:\n{out.stdout}")
    return out.stdout


def md_text(s):
    """Help text as Markdown: code spans kept, every other mark escaped."""
    parts = s.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"([\\*_\[\]<>#|!])", r"\\\1", parts[i])
    return "`".join(parts)


def paragraphs(lines):
    """Blank-line separated paragraphs, each joined into one line."""
    out, cur = [], []
    for line in lines:
        if line.strip():
            cur.append(line.strip())
        elif cur:
            out.append(" ".join(cur))
            cur = []
    if cur:
        out.append(" ".join(cur))
    return out


class Command:
    """One command's argp --help, parsed."""

    def __init__(self, name, text):
        lines = text.rstrip("\n").split("\n")
        if not lines[0].startswith("Usage: "):
            sys.exit(f"man.py: {name} --help does not start with Usage:")
        self.name = name
        self.usage = lines[0][len("Usage: "):]
        self.options = []  # (short, long, arg, text)
        head, i = [], 1
        while i < len(lines) and not OPTION.match(lines[i]):
            head.append(lines[i])
            i += 1
        while i < len(lines):
            m = OPTION.match(lines[i])
            if m:
                self.options.append([m.group(1), m.group(2), m.group(3), m.group(4)])
            elif lines[i].startswith(" " * 20) and self.options:
                self.options[-1][3] += " " + lines[i].strip()
            elif lines[i].strip():
                break
            i += 1
        self.head = paragraphs(head)
        self.tail = [p for p in paragraphs(lines[i:]) if not p.startswith(ARGP_NOTE)]

    def markdown(self):
        out = [f"## {self.name}", "", f"**{md_text(self.usage)}**", ""]
        for p in self.head:
            out += [md_text(p), ""]
        for short, long, arg, text in self.options:
            term = (f"`-{short}`, " if short else "") + f"`{long}`"
            if arg:
                term += f"=*{md_text(arg)}*"
            out += [term, f":   {md_text(text)}", ""]
        for p in self.tail:
            out += [md_text(p), ""]
        return out


def top_commands(text):
    """The names of the commands the top-level --help lists."""
    cmds, inside = [], False
    for line in text.split("\n"):
        if line.startswith("Commands:"):
            inside = True
        elif inside and line.startswith("  "):
            cmds.append(line.split()[0])
        elif inside and not line.strip():
            break
    if not cmds:
        sys.exit("man.py: no Commands: in bpfwarden --help")
    return cmds


def table(md_path, title):
    """The table of a '### title' section of a Markdown file."""
    with open(md_path) as f:
        text = f.read()
    m = re.search(rf"^###? {re.escape(title)}\n(.*?)(?=^#)", text, re.S | re.M)
    rows = [line for line in (m.group(1).split("\n") if m else []) if line.startswith("|")]
    if not rows:
        sys.exit(f"man.py: no table under '{title}' in {md_path}")
    return "\n".join(rows)


def version(agent):
    # "bpfwarden 0.1.0+git... (BPF objects ...)": the release, not the build.
    words = run_help([agent, "--version"]).split()
    return words[1].split("+")[0] if len(words) > 1 else "unknown"


def fill(template, **parts):
    with open(template) as f:
        text = f.read()
    for key, value in parts.items():
        marker = f"<!-- {key} -->"
        if marker not in text:
            sys.exit(f"man.py: {template} has no {marker}")
        text = text.replace(marker, value)
    return text


def lowdown(markdown, out_path):
    roff = subprocess.run(["lowdown", "-s", "-Tman", "--out-no-smarty"], input=markdown,
                          stdout=subprocess.PIPE, text=True, check=True).stdout
    with open(out_path, "w") as f:
        f.write(roff)


def header(name, section_no, ver):
    # lowdown's metadata block: the .TH line.
    return (f"title: {name}\nsection: {section_no}\nsource: bpfwarden {ver}\n"
            f"volume: bpfwarden\n\n")


def completion(cmds):
    """A bash completion: the commands, each one's options, and the value of an
    option by the name --help gives it (FILE, PATH, DIR: a file; MODE: a mode)."""
    takes = {}
    for c in cmds:
        for short, long, arg, _ in c.options:
            kind = "mode" if arg == "MODE" else "file" if arg in ("FILE", "PATH", "DIR") else None
            if kind:
                takes.setdefault(kind, set()).update([long] + ([f"-{short}"] if short else []))
    lines = [
        "# bash completion for bpfwarden; made by tools/man.py from --help",
        "_bpfwarden()",
        "{",
        "\tlocal cur prev cmd",
        "\tcur=${COMP_WORDS[COMP_CWORD]}",
        "\tprev=${COMP_WORDS[COMP_CWORD-1]}",
        "\tcmd=${COMP_WORDS[1]}",
        "\tif [ \"$COMP_CWORD\" -eq 1 ]; then",
        "\t\tCOMPREPLY=($(compgen -W '%s --help --version' -- \"$cur\"))" %
        " ".join(c.name for c in cmds),
        "\t\treturn",
        "\tfi",
        "\tcase $prev in",
        "\t%s)" % "|".join(sorted(takes["file"])),
        "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))",
        "\t\treturn",
        "\t\t;;",
        "\t%s)" % "|".join(sorted(takes["mode"])),
        "\t\tCOMPREPLY=($(compgen -W 'enforce audit learn' -- \"$cur\"))",
        "\t\treturn",
        "\t\t;;",
        "\tesac",
        "\tcase $cmd in",
    ]
    for c in cmds:
        words = []
        for short, long, arg, _ in c.options:
            if short:
                words.append(f"-{short}")
            words.append(long + ("=" if arg else ""))
        lines.append(f"\t{c.name}) COMPREPLY=($(compgen -W '{' '.join(words)}' -- \"$cur\"))")
        if c.name == "check":
            lines.append("\t\t[ \"${cur#-}\" = \"$cur\" ] && COMPREPLY+=($(compgen -f -- \"$cur\"))")
        if c.name == "mode":
            lines.append("\t\t[ \"${cur#-}\" = \"$cur\" ] && "
                         "COMPREPLY+=($(compgen -W 'enforce audit learn' -- \"$cur\"))")
        lines.append("\t\t;;")
    lines += [
        "\tesac",
        "\t# --opt= takes its value in the same word.",
        "\t[[ ${COMPREPLY-} == *= ]] && compopt -o nospace",
        "}",
        "complete -F _bpfwarden bpfwarden",
        "",
    ]
    return "\n".join(lines)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    agent, hook, outdir = sys.argv[1:]
    ver = version(agent)
    mandir = os.path.join(outdir, "man")
    os.makedirs(mandir, exist_ok=True)
    os.makedirs(os.path.join(outdir, "completion"), exist_ok=True)

    top = run_help([agent, "--help"])
    cmds = [Command(name, run_help([agent, name, "--help"])) for name in top_commands(top)]
    body = []
    for c in cmds:
        body += c.markdown()
    agent_md = fill(os.path.join(ROOT, "docs/man/bpfwarden.8.md"),
                    commands="\n".join(body),
                    exit_statuses=table(os.path.join(ROOT, "docs/operations.md"),
                                          "Exit statuses"))
    lowdown(header("BPFWARDEN", 8, ver) + agent_md, os.path.join(mandir, "bpfwarden.8"))

    hook_md = fill(os.path.join(ROOT, "docs/man/bpfwarden-hook.8.md"),
                   usage="\n".join("    " + line for line in
                                   run_help([hook, "--help"]).strip().split("\n")))
    lowdown(header("BPFWARDEN-HOOK", 8, ver) + hook_md,
            os.path.join(mandir, "bpfwarden-hook.8"))

    with open(os.path.join(ROOT, "docs/profile-language.md")) as f:
        lang = f.read()
    # The page's title becomes NAME; its sections stay in order below.
    lang = re.sub(r"\A# [^\n]*\n", "", lang)
    lang = re.sub(r"^## ", "# ", lang, flags=re.M)
    lang = re.sub(r"^### ", "## ", lang, flags=re.M)
    profile_md = ("# NAME\n\nbpfwarden-profile - the profile language of bpfwarden\n\n"
                  "# DESCRIPTION\n" + lang +
                  "\n# SEE ALSO\n\nbpfwarden(8), bpfwarden-hook(8)\n")
    lowdown(header("BPFWARDEN-PROFILE", 5, ver) + profile_md,
            os.path.join(mandir, "bpfwarden-profile.5"))

    with open(os.path.join(outdir, "completion", "bpfwarden"), "w") as f:
        f.write(completion(cmds))


if __name__ == "__main__":
    main()
