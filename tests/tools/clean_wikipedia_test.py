#!/usr/bin/env python3
"""clean_wikipedia.py on a small hand-made corpus: one article with every
kind of leftover its rules handle beside clean prose that must pass
unchanged, one article of debris only (dropped with its title) and a last
article with no `<|endoftext|>` after it. Checks the exact output, the
summary's counts, and that cleaning the output again changes nothing.

    python3 tests/tools/clean_wikipedia_test.py
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "clean_wikipedia.py")

ZWJ, HAIR, ZWSP = "\u200d", "\u200a", "\u200b"

IN = "\n".join([
    "Anarchism",
    "Anarchism is a political philosophy. It holds the state to be undesirable, unnecessary, or harmful.",
    "Etymology and terminology.",
    # placeholders: the sentence goes, the rest of the paragraph stays
    "The area of a disk is formula_1 where formula_2 is its radius. Archimedes knew it.",
    "formula_3",
    "Some write e.g. codice_4 for this. Others write pformula_5 instead. Most do not.",
    "where formula_6 is the mass.",
    # template, table, gallery and timeline lines
    " #if: ",
    " |title=Foo",
    " }}{{",
    "! Game information",
    "\">em;",
    " margin-left:0.9em;",
    "File:Cat.jpg|A cat in autumn",
    "</dl>",
    "<onlyinclude>",
    " <id>2198199</id>",
    # inline markup
    "He described <dfn id=\"\">pawn chains</dfn> well.<ref name=\"x\">http://a.example</ref> Then<br>more.",
    "Dungeons &amp; Dragons sold well&nbsp;in 1977.",
    "The commutator in a [[ring (algebra)|ring]] or an [[associative algebra]] is defined.",
    "[[Category:Algebra]]",
    "Retrieved 2010-9-26<span",
    "It launched lines.<ref</ref> It floats.",
    # leftovers of removed templates
    "Seville (, Spanish: \"Sevilla\" ], ]) is a city.",
    "Haifa (Hebrew: \"Heifa\", ], ]; Arabic: \"Hayfa\") is a port.",
    "The almond () is a tree. Yuxian (), was executed. Minogue (; born 28 May 1968) sings. Call f() here.",
    "Irssi (] ()) is an IRC client.",
    "s of 2014[ [update]], it had 46,000 clubs.",
    "The first of these, \"\", was released in 1990. It sold well.",
    "As of none }}, 169 states are party. The treaty holds.",
    "\"Buffy\"" + ZWJ + HAIR + "'" + ZWSP + "s finale aired.",
    # prose that looks like markup but is not, and spaces
    "If a<b and c>d then \"\"quoted\" words\" stay, as does |x|.",
    "In British English, \"( )\" marks are brackets; \"()\" is empty and f() a call.",
    "Two  spaces\tand a tab. ",
    "<|endoftext|>",
    "Debris only",
    " #if: ",
    "</dl>",
    "formula_7",
    "<|endoftext|>",
    "Last article &amp; more",
    "It has no end line.",
]) + "\n"

OUT = "\n".join([
    "Anarchism",
    "Anarchism is a political philosophy. It holds the state to be undesirable, unnecessary, or harmful.",
    "Etymology and terminology.",
    "Archimedes knew it.",
    "Most do not.",
    "He described pawn chains well. Then more.",
    "Dungeons & Dragons sold well in 1977.",
    "The commutator in a ring or an associative algebra is defined.",
    "Retrieved 2010-9-26",
    "It launched lines. It floats.",
    "Seville (Spanish: \"Sevilla\") is a city.",
    "Haifa (Hebrew: \"Heifa\"; Arabic: \"Hayfa\") is a port.",
    "The almond is a tree. Yuxian, was executed. Minogue (born 28 May 1968) sings. Call f() here.",
    "Irssi is an IRC client.",
    "As of 2014, it had 46,000 clubs.",
    "It sold well.",
    "The treaty holds.",
    "\"Buffy\"'s finale aired.",
    "If a<b and c>d then \"\"quoted\" words\" stay, as does |x|.",
    "In British English, \"( )\" marks are brackets; \"()\" is empty and f() a call.",
    "Two spaces and a tab.",
    "<|endoftext|>",
    "Last article & more",
    "It has no end line.",
]) + "\n"

SUMMARY = {
    # every line and word of IN and OUT (the <|endoftext|> lines and the titles too)
    "lines in": IN.count("\n"), "lines out": OUT.count("\n"),
    "words in": len(IN.split()), "words out": len(OUT.split()),
    "articles in": 3, "articles out": 2, "placeholders in": 7, "placeholders removed": 7,
    "sentences dropped: formula_N/codice_N": 6,
    "sentences dropped: template debris or empty quotes": 2,
    "lines dropped: every sentence dropped": 3,
    "lines dropped: markup (template, table, gallery, CSS, dump XML)": 9,
    "lines dropped: no letter or digit left": 4,  # </dl> twice, <onlyinclude>, [[Category:...]]
    "articles dropped: no paragraph left": 1,
    "entities decoded": 3, "tags removed": 9, "tags removed with their content": 1,
    "wiki links unwrapped": 2, "category/file links removed": 1, "stray ] removed": 5,
    "[update] marks removed": 1, "'As of' repaired": 1, "{{'s}} apostrophes repaired": 1,
    "empty parentheses removed": 4,  # almond, Yuxian, Irssi's "( ())" twice
    "separators trimmed inside parentheses": 2,
}


def clean(text, scratch, name):
    src, dst = os.path.join(scratch, name + ".in"), os.path.join(scratch, name + ".out")
    with open(src, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    r = subprocess.run([sys.executable, SCRIPT, src, dst], capture_output=True, text=True,
                       timeout=60, check=False)
    out = None
    if os.path.exists(dst):
        with open(dst, encoding="utf-8", newline="\n") as f:
            out = f.read()
    summary = {}
    for line in r.stderr.splitlines():
        key, _, value = line.rpartition(" ")
        if key.strip() and value.isdigit():
            summary[key.strip()] = int(value)
    return r, out, summary


def main():
    checks = []
    with tempfile.TemporaryDirectory(prefix="nextword-clean-") as scratch:
        r, out, summary = clean(IN, scratch, "first")
        checks.append(("exits 0 (%d)" % r.returncode, r.returncode == 0))
        checks.append(("the summary has a time line", any(
            line.startswith("time ") for line in r.stderr.splitlines())))
        ok = out == OUT
        if not ok:
            got, want = (out or "").split("\n"), OUT.split("\n")
            for i in range(max(len(got), len(want))):
                g = got[i] if i < len(got) else "<missing>"
                w = want[i] if i < len(want) else "<missing>"
                if g != w:
                    print("line %d:\n  got  %r\n  want %r" % (i + 1, g, w))
        checks.append(("the exact output", ok))
        for key, want in SUMMARY.items():
            got = summary.get(key)
            checks.append(("summary %s: %s (want %d)" % (key, got, want), got == want))
        extra = sorted(set(summary) - set(SUMMARY))
        checks.append(("no other count in the summary %s" % extra, not extra))
        r2, again, summary2 = clean(OUT, scratch, "again")
        checks.append(("cleaning the output again changes nothing", again == OUT))
        checks.append(("and drops nothing", summary2.get("lines out") == summary2.get("lines in")))
        r3, empty, _ = clean("", scratch, "empty")
        checks.append(("an empty file gives an empty file", r3.returncode == 0 and empty == ""))
        r4 = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, check=False)
        checks.append(("no arguments: usage, exit 2", r4.returncode == 2 and "IN OUT" in r4.stderr))
    for name, ok in checks:
        print(("ok   " if ok else "FAIL ") + name)
    failed = sum(1 for _, ok in checks if not ok)
    print("clean_wikipedia_test: %d passed, %d failed" % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
