#!/usr/bin/env python3
"""Cleans WikiExtractor's leftovers out of the 2015 Wikipedia training text
(wikipedia-en-2015.txt, ../shared/corpus/SOURCES.md), so that a model
trained on it does not learn to predict `formula_1` or `}}{{`.

    python3 tools/clean_wikipedia.py IN OUT

IN and OUT are in the corpus's document format: an article's title line, its
paragraphs one per line, then a line `<|endoftext|>`. The file is streamed
one article at a time. Titles are real titles and are kept (entities decoded,
spaces squeezed). A summary goes to stderr: lines, words (split at
whitespace) and articles in and out, the placeholders found and removed, and
what each rule did. Cleaning OUT again changes nothing.

The rules, in the order they apply to a paragraph line, with what they did
to the 2015 file (1,251,860 lines, 23,391 placeholders):

1. Dump XML. A line that is an element of the dump's XML (`<id>2198199</id>`,
   `<revision>`, `<timestamp>`; 193) is dropped: ids and user names.
2. Entities and invisible marks. HTML entities (`&amp;`, `&quot;`,
   `&#x1208D;`; 103) are decoded: they stand for real characters. The
   `{{'s}}` template left zero-width and hair spaces around an apostrophe
   after a quote (`"Buffy"` ZWJ, hair space, `'`, ZWSP, `s`; 1,016): they
   become `"Buffy"'s`. Other zero-width spaces go, no-break spaces become
   spaces.
3. Tags. Elements whose content is markup go with it when open and close are
   on one line: `<ref>` (citations), `<rp>`/`<rt>` (ruby annotations),
   `<math>`, `<score>` (1,030). Every other HTML or MediaWiki tag
   (`</dl>`, `<onlyinclude>`, `<poem>`, `<dfn>`, `<span ...>` ...; about
   15,600) goes and its content stays (`<dfn>pawn chains</dfn>`); `<br>`
   becomes a space, a tag cut by the line's end (`2010-9-26<span`) goes.
   Only the listed names are tags, one-letter ones only bare (`<b>`), so
   `a<b and c>d`, `List<T>` and `<EOM>` in prose stay.
4. Links and brackets. `[[a|b]]` becomes b and `[[a]]` a (2,759; some
   articles were extracted raw), `[[Category:...]]` and `[[File:...]]` go
   (232). The "As of" template left "s of 2014[ [update]]": the mark goes
   (1,824) and a sentence starting "s of" gets its "A" back (1,083). Removed
   pronunciation templates left a lone `]` ("Seville (, Spanish: "Sevilla"
   ], ])"): a `]` that closes no `[` and ends no word goes, with the space
   and the separator before it (2,456).
5. Markup lines. A line of template, table or timeline debris has no prose
   and is dropped (18,451): it starts with a template's `|`, `{{`, `}}` or
   `{|` (8,118), a parser function `#if:`, `#switch:` (6,993), a timeline's
   `">` (1,721), a table header `!` (189), or is a CSS declaration
   (`margin-left:0.9em;`, 1,303) or a gallery's `File:x.jpg|caption` (127).
6. Sentences. A sentence that holds a `formula_N` or `codice_N` placeholder
   is dropped whole (13,075 sentences, all 23,391 placeholders): without the
   placeholder "the volume is formula_13" would be broken text, and its
   words mean little without the formula. So is a sentence with template
   debris inside prose (`{{`, `}}`, `#if:`, `[[`, `]]`: "As of none }},
   169 states are party") or an empty quotation where a template gave a
   title ("The first of these, "", was released"; 4,320). A sentence ends at
   `.`, `!` or `?` (a closing quote or bracket may follow) before a space
   and a capital, a digit, a quote, a bracket or a placeholder; "e.g.",
   "i.e.", "cf.", "vs.", "viz." end none. A line whose every sentence goes is
   dropped (5,922; mostly display formulas, a line `formula_4`).
7. Empty parentheses left by removed templates, "()", "( )", "(; )",
   "(, , )", go with the space before them (3,657): "The almond () is" ->
   "The almond is". A call's `f()` and the marks named in quotes, `"( )"`,
   stay. Separators left at a parenthesis' start or end go (2,296):
   "Minogue (; born 28 May 1968)" -> "Minogue (born 28 May 1968)".
8. Spaces. Runs of whitespace become one space, lines are stripped. A line
   left with no letter or digit (`</dl>`, `<onlyinclude>`, `|`) is dropped
   (8,789).

An article left with no paragraph is dropped with its title (186, all of
them titles alone in the input already).

Left as they are: section headings ("Etymology and terminology.") and all
other prose; program code and plain-text formulas in lines of their own
("= 93"), which are real text of their articles; a few hundred odd leftovers
too rare to be worth a rule ("Media related to at Wikimedia Commons",
"Listen to this article").
"""
import html
import re
import sys
import time
from collections import Counter

END = "<|endoftext|>"

ENTITY = re.compile(r"&(?:[A-Za-z]+|#[0-9]+|#[xX][0-9A-Fa-f]+);")
TAG_NAMES = (
    # HTML (the one- and two-letter ones below, bare only: `a<b and c>d` is prose)
    "abbr|big|blockquote|body|caption|center|cite|code|dd|del|div|dl|dt|font|h[1-6]|head|html"
    "|ins|li|meta|noscript|object|ol|pre|rb|rp|rt|ruby|samp|script|small|span|strike|strong"
    "|sub|sup|table|td|th|tr|ul|var|dfn|applet|video|kbd"
    # MediaWiki
    "|categorytree|gallery|imagemap|includeonly|math|noinclude|nowiki|onlyinclude|poem|ref"
    "|references|score|section|source|syntaxhighlight|timeline")
WITH_CONTENT = re.compile(r"<(ref|rp|rt|math|score)\b[^<>]*/>|<(ref|rp|rt|math|score)\b[^<>]*>.*?</\2\s*>",
                          re.I)
BREAK = re.compile(r"<br\s*/?\s*>", re.I)
TAG = re.compile(r"</?(?:%s)\b(?:[^<>]*>|[^<>\s]*(?=\s*(?:<|$)))|</?(?:a|b|em|hr|i|p|q|s|tt|u)\s*/?>" % TAG_NAMES, re.I)
QUOTE_APOSTROPHE = re.compile(r"(?<=\")(?:[\u200a\u200b\u200d]+'[\u200b\u200d]*|'[\u200b\u200d]+)")
AS_OF = re.compile(r"(?:^|(?<=[.!?] ))s of (?=[^.\[\]]{0,60}\[ ?\[update\]\])")
UPDATE = re.compile(r"\[ ?\[update\]\]")
SPECIAL_LINK = re.compile(r"\[\[\s*(?:Category|File|Image)\s*:[^\[\]]*\]\]", re.I)
LINK = re.compile(r"\[\[(?:[^\[\]|]*\|)?([^\[\]|]*)\]\]")
DUMP_LINE = re.compile(r"\s*</?(?:comment|contributor|format|id|minor|model|ns|page|parentid|redirect"
                       r"|revision|sha1|timestamp|username)\b[^<>]*>")
MARKUP_LINE = re.compile(
    r"\s*(?:\||\{\{|\}\}|\{\||!|#[a-z]+:|\"?/?>)"          # template, table, parser function, timeline
    r"|\s*(?:File|Image)\s*:[^|]*\|"                        # gallery
    r"|\s*[a-z-]+\s*:[^ ]*;\s*$")                            # CSS declaration
PLACEHOLDER = re.compile(r"(?:formula|codice)_[0-9]+")
DEBRIS = re.compile(r"\{\{|\}\}|#[a-z]+:|\[\[|\]\]|(?:^|(?<=[\s(]))\"\"(?!\w)")
SUSPECT = re.compile(r"formula_|codice_|\{\{|\}\}|#[a-z]+:|\[\[|\]\]|\"\"")
SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?(?:[A-Z0-9]|formula_|codice_))")
NOT_AN_END = re.compile(r"(?:^|[\s(])(?:e\.g|i\.e|cf|vs|viz)\.$")
EMPTY_PARENS = re.compile(r"(\S?)(\s*)\((?:\s|[;,])*\)")
LEADING_SEPARATORS = re.compile(r"\(\s*(?:[;,]\s*)+(?=[^\s;,)])")
TRAILING_SEPARATORS = re.compile(r"(?<=[^\s(;,])\s*(?:[;,]\s*)+\)")
SPACES = re.compile(r"\s+")
WORDISH = re.compile(r"[^\W_]")


def sentences(line):
    parts = SENTENCE_END.split(line)
    out = []
    for part in parts:
        if out and NOT_AN_END.search(out[-1]):
            out[-1] += " " + part
        else:
            out.append(part)
    return out


def drop_stray_brackets(line):
    """Removes each `]` that closes no `[` and is not attached to a word,
    with the space and the separator before it: `"Heifa", ], ];` -> `"Heifa";`."""
    depth, out, removed = 0, [], 0
    for ch in line:
        if ch == "[":
            depth += 1
        elif ch == "]":
            if depth:
                depth -= 1
            elif not out or out[-1] in " \t(;,\"":
                removed += 1  # with the space and the separator before it
                while out and out[-1] in " \t":
                    out.pop()
                if out and out[-1] in ",;":
                    out.pop()
                    while out and out[-1] in " \t":
                        out.pop()
                continue
        out.append(ch)
    return "".join(out), removed


class Cleaner:
    def __init__(self):
        self.n = Counter()

    def entities(self, line):
        def decode(m):
            char = html.unescape(m.group(0))
            self.n["entities decoded"] += char != m.group(0)  # &T; is no entity
            return char
        line = ENTITY.sub(decode, line) if "&" in line else line
        if "\u200a" in line or "\u200b" in line or "\u200d" in line:
            line, k = QUOTE_APOSTROPHE.subn("'", line)
            self.n["{{'s}} apostrophes repaired"] += k
            line = line.replace("\u200b", "")
        return line.replace("\u00a0", " ")

    def tags(self, line):
        if "<" not in line:
            return line
        line, k = WITH_CONTENT.subn("", line)
        self.n["tags removed with their content"] += k
        line, k = BREAK.subn(" ", line)
        self.n["tags removed"] += k
        k = 1
        while k:  # a tag whose attribute held a tag: <div title="x</ref>">
            line, k = TAG.subn("", line)
            self.n["tags removed"] += k
        return line

    def links(self, line):
        if "[" not in line and "]" not in line:
            return line
        if "[update]]" in line:
            line, k = AS_OF.subn("As of ", line)
            self.n["'As of' repaired"] += k
            line, k = UPDATE.subn("", line)
            self.n["[update] marks removed"] += k
        if "[[" in line:
            line, k = SPECIAL_LINK.subn("", line)
            self.n["category/file links removed"] += k
            line, k = LINK.subn(r"\1", line)
            self.n["wiki links unwrapped"] += k
        if "]" in line:
            line, k = drop_stray_brackets(line)
            self.n["stray ] removed"] += k
        return line

    def drop_sentences(self, line):
        if not SUSPECT.search(line):
            return line
        kept = []
        for s in sentences(line):
            placeholders = len(PLACEHOLDER.findall(s))
            if placeholders:
                self.n["sentences dropped: formula_N/codice_N"] += 1
                self.n["placeholders removed"] += placeholders
            elif DEBRIS.search(s):
                self.n["sentences dropped: template debris or empty quotes"] += 1
            else:
                kept.append(s)
        return " ".join(kept)

    def parentheses(self, line):
        if "(" not in line:
            return line

        def empty(m):
            if m.group(1) and not m.group(2) and (m.group(1).isalnum() or m.group(1) in "_)]\"'"):
                return m.group(0)  # a call f(), or the marks named: "( )"
            self.n["empty parentheses removed"] += 1
            return m.group(1)
        before = None
        while line != before:  # "( ())" -> "( )" -> ""
            before, line = line, EMPTY_PARENS.sub(empty, line)
        line, k = LEADING_SEPARATORS.subn("(", line)
        self.n["separators trimmed inside parentheses"] += k
        line, k = TRAILING_SEPARATORS.subn(")", line)
        self.n["separators trimmed inside parentheses"] += k
        return line

    def paragraph(self, line):
        """The cleaned line, or None when it is dropped."""
        if DUMP_LINE.match(line):
            self.n["lines dropped: markup (template, table, gallery, CSS, dump XML)"] += 1
            return None
        line = self.entities(line)
        line = self.tags(line)
        line = self.links(line)
        if MARKUP_LINE.match(line):
            self.n["lines dropped: markup (template, table, gallery, CSS, dump XML)"] += 1
            self.n["placeholders removed"] += len(PLACEHOLDER.findall(line))
            return None
        before = line
        line = self.drop_sentences(line)
        if not line.strip() and before.strip():
            self.n["lines dropped: every sentence dropped"] += 1
            return None
        line = self.parentheses(line)
        line = SPACES.sub(" ", line).strip()
        if not WORDISH.search(line):
            self.n["lines dropped: no letter or digit left"] += 1
            return None
        return line

    def article(self, lines):
        """lines: the title and the paragraphs of one article (no END)."""
        title, out = SPACES.sub(" ", self.entities(lines[0])).strip(), []
        for line in lines[1:]:
            cleaned = self.paragraph(line)
            if cleaned is not None:
                out.append(cleaned)
        if not out:
            self.n["articles dropped: no paragraph left"] += 1
            return []
        return [title] + out


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    started = time.monotonic()
    cleaner = Cleaner()
    stats = Counter()
    with open(argv[1], encoding="utf-8", errors="surrogateescape", newline="\n") as src, \
            open(argv[2], "w", encoding="utf-8", errors="surrogateescape", newline="\n") as dst:
        lines = []

        def flush(ended):
            if lines:
                stats["articles in"] += 1
                out = cleaner.article(lines)
                if out:
                    stats["articles out"] += 1
                    if ended:
                        out.append(END)
                    stats["lines out"] += len(out)
                    stats["words out"] += sum(len(x.split()) for x in out)
                    dst.write("\n".join(out) + "\n")
            lines.clear()

        for raw in src:
            line = raw.rstrip("\n")
            stats["lines in"] += 1
            stats["words in"] += len(line.split())
            if "formula_" in line or "codice_" in line:
                stats["placeholders in"] += len(PLACEHOLDER.findall(line))
            if line == END:
                flush(True)
            elif lines or line.strip():
                lines.append(line)
            else:
                stats["lines dropped: blank"] += 1
        flush(False)
    report = [("lines in", stats["lines in"]), ("lines out", stats["lines out"]),
              ("words in", stats["words in"]), ("words out", stats["words out"]),
              ("articles in", stats["articles in"]), ("articles out", stats["articles out"]),
              ("placeholders in", stats["placeholders in"])]
    if stats["lines dropped: blank"]:
        report.append(("lines dropped: blank", stats["lines dropped: blank"]))
    report += sorted(cleaner.n.items())
    width = max(len(k) for k, _ in report)
    for k, v in report:
        print("%-*s %d" % (width, k, v), file=sys.stderr)
    print("%-*s %.1f s" % (width, "time", time.monotonic() - started), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
