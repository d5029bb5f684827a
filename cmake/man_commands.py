#!/usr/bin/env python3
"""Writes help2man's --include file for nextword.1: a COMMANDS section with
one subsection per command, each command's own `--help` set in roff, and a
SEE ALSO section naming the documentation where it is installed.

    python3 cmake/man_commands.py NEXTWORD OUTPUT [SOURCE PACKAGE_DOCDIR DOCDIR]

SOURCE is the repository (its README.md, docs/*.md and data/'s README.md
and FORMAT.md, each named with its title); they are installed in the same
layout in PACKAGE_DOCDIR by the Debian package and in DOCDIR by `cmake
--install` (CMAKE_INSTALL_FULL_DOCDIR).

The commands are the ones `NEXTWORD --help` lists under "Subcommands:"
(CLI11's layout), so the page follows the binary: no list of commands or
options is written here. Run at build time by cmake/NextwordShell.cmake.
"""
import os
import re
import subprocess
import sys


def run_help(nextword, *command):
    r = subprocess.run([nextword, *command, "--help"], capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        sys.exit(f"man_commands.py: {' '.join([nextword, *command, '--help'])} "
                 f"exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def commands(help_text):
    """The first word of each indented line of the "Subcommands:" section."""
    names, inside = [], False
    for line in help_text.splitlines():
        if re.match(r"^\S.*:$", line):
            inside = line.strip().lower() == "subcommands:"
        elif inside and re.match(r"^  \S", line):
            names.append(line.split()[0])
    return names


def roff(text):
    """Text escaped for roff: backslashes, minus signs, a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def section(command, help_text):
    """One command's help as a roff subsection: the usage line, headings in
    bold, each entry ("  -k,--top-k INT  description", its description
    possibly on the lines below, further indented) a tagged paragraph, any
    other text a filled paragraph."""
    out = [f'.SS "nextword {command}"']
    entry = None  # the tagged paragraph being read: [tag, description lines]

    def flush():
        nonlocal entry
        if entry is not None:
            tag = entry[0].split(" ", 1)
            out.append(".TP")
            out.append(f"\\fB{roff(tag[0])}\\fR" + (" " + roff(tag[1]) if len(tag) > 1 else ""))
            out.append(roff(" ".join(entry[1])) if entry[1] else "\\&")
            entry = None

    paragraph = False
    for line in help_text.splitlines():
        if not line.strip():
            flush()
            paragraph = False
        elif line.startswith("Usage:"):
            flush()
            out += [".PP", roff(line), ".PP"]
            paragraph = False
        elif re.match(r"^\S[^ ]*( \S+)?:$", line):  # Options:, Positionals:, Keys:
            flush()
            out += [".PP", f"\\fB{roff(line)}\\fR"]
            paragraph = False
        elif re.match(r"^  \S", line):
            flush()
            parts = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            entry = [parts[0], parts[1:]]
        elif line.startswith("   ") and entry is not None:
            entry[1].append(line.strip())
        else:
            flush()
            if not paragraph:
                out.append(".PP")
                paragraph = True
            out.append(roff(line.strip()))
    flush()
    return out


# The documents SEE ALSO names, in this order; docs/ adds its others after.
FIRST_DOCS = ["README.md", "docs/usage.md"]
LAST_DOCS = ["data/README.md", "data/FORMAT.md"]


def see_also(source, package_docdir, docdir):
    """The SEE ALSO section: each document's installed path and title."""
    docs = sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(source, "docs"))
                  if f.endswith(".md"))
    names = FIRST_DOCS + [d for d in docs if d not in FIRST_DOCS] + LAST_DOCS
    where = r"\fI%s\fR" % roff(package_docdir)
    if docdir != package_docdir:
        where += r" (the Debian package) or \fI%s\fR (\fBcmake \-\-install\fR)" % roff(docdir)
    lines = ["[SEE ALSO]", "The documentation, in Markdown, in %s:" % where]
    for name in names:
        with open(os.path.join(source, name), encoding="utf-8") as f:
            title = f.readline().lstrip("#").strip()
        lines += [".TP", r"\fB%s\fR" % roff(name), roff(title)]
    return lines


def main():
    if len(sys.argv) not in (3, 6):
        sys.exit(__doc__)
    nextword, output = sys.argv[1], sys.argv[2]
    names = commands(run_help(nextword))
    if not names:
        sys.exit(f"man_commands.py: no Subcommands: section in {nextword} --help")
    lines = ["[COMMANDS]",
             "Each command's options, as `nextword COMMAND \\-\\-help` prints them."]
    for name in names:
        lines += section(name, run_help(nextword, name))
    if len(sys.argv) == 6:
        lines += see_also(*sys.argv[3:6])
    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
