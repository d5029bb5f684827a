#!/usr/bin/env python3
"""Writes help2man's --include file for nextword.1: a COMMANDS section with
one subsection per command, each command's own `--help` set in roff.

    python3 cmake/man_commands.py NEXTWORD OUTPUT

The commands are the ones `NEXTWORD --help` lists under "Subcommands:"
(CLI11's layout), so the page follows the binary: no list of commands or
options is written here. Run at build time by cmake/NextwordShell.cmake.
"""
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


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    nextword, output = sys.argv[1], sys.argv[2]
    names = commands(run_help(nextword))
    if not names:
        sys.exit(f"man_commands.py: no Subcommands: section in {nextword} --help")
    lines = ["[COMMANDS]",
             "Each command's options, as `nextword COMMAND \\-\\-help` prints them."]
    for name in names:
        lines += section(name, run_help(nextword, name))
    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
