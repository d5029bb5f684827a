#!/usr/bin/env python3
"""Writes the Debian package's changelog from CHANGELOG.md (Keep a Changelog):
each released version, newest first, as a Debian changelog entry whose items
are that version's lines, each headed by its section (Added, Changed, ...).

    debian_changelog.py CHANGELOG.md VERSION "NAME <MAIL>" OUT

VERSION must be the newest released version of CHANGELOG.md (the one the
build says it is); the [Unreleased] section is not a release and is left out.
"""
import datetime
import re
import sys
import textwrap

RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})\s*$")


def plain(text):
    """Markdown's links and code marks as plain text."""
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", text)
    return text.replace("`", "").replace("**", "")


def releases(lines):
    """[(version, date, [(section, item text)])] in the file's order."""
    found, section, item = [], None, None
    for line in lines + ["## end"]:
        if item is not None and not line.startswith("  "):
            found[-1][2].append((section, plain(" ".join(item))))
            item = None
        if line.startswith("## "):
            m = RELEASE.match(line)
            if m:
                found.append((m.group(1), m.group(2), []))
            section = None if m else "skip"  # [Unreleased] and the end
        elif line.startswith("### "):
            section = line[4:].strip()
        elif line.startswith("- ") and found and section not in (None, "skip"):
            item = [line[2:].strip()]
        elif item is not None:
            item.append(line.strip())
    return found


def main(source, version, maintainer, out):
    with open(source, encoding="utf-8") as f:
        found = releases(f.read().splitlines())
    if not found or found[0][0] != version:
        newest = found[0][0] if found else "none"
        sys.exit(f"{source}: newest release: {newest}, but the build is version {version}")
    entries = []
    for number, date, items in found:
        when = datetime.datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=datetime.timezone.utc)
        body = [textwrap.fill(f"{section}: {text}", width=78, initial_indent="  * ",
                              subsequent_indent="    ", break_on_hyphens=False) for section, text in items]
        entries.append(f"nextword ({number}) unstable; urgency=medium\n\n" + "\n".join(body) +
                       f"\n\n -- {maintainer}  {when.strftime('%a, %d %b %Y %H:%M:%S +0000')}\n")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(entries))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
