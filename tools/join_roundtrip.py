#!/usr/bin/env python3
"""How often the word joiner gives a line back: each held-out line through
`nextword tokenize --join` (the line's tokens written as `generate` writes
them), compared with the line.

    python3 tools/join_roundtrip.py NEXTWORD [--wikipedia CLEAN.txt]
        [--stories CONTINUATION.txt] [--kinds N] [--json] [--ceiling]

--wikipedia: the cleaned Wikipedia text (tools/clean_wikipedia.py's output,
the clean.txt data/english/train.sh makes in its SCRATCH); its held-out lines
are the last 150 articles', as tools/wiki_split.py cuts them, read by the
english model. --stories: TinyStories' continuation file
(../shared/corpus/tinystories-train-continuation-lowercase.txt); its held-out
lines are tools/dev_split.sh's development split, read by the stories model
and compared lowercased (it reads lowercase; `generate` capitalizes its
sentences). Blank lines are skipped, and a line's leading and trailing
whitespace is not compared: no token holds it.

Prints, for each text, the lines given back byte for byte once their curly
quotes are read as straight ones (as the tokenizer reads them: the tokens
hold no other spelling), the lines given back with their curly quotes, the
lines whose joined text reads as the same ids again (`tokenize` of both),
and the others by the first place where they differ: its kind, the tokens
on each side as the line writes them ('a .': a word, a space, a period;
'9–': digits and an en dash, no space; a/A a word, x/X a single letter, 9
digits, a mark as itself), and whether the join wrote them apart or
together, with the count of lines and an example.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wiki_split  # noqa: E402  (the split's own rule for articles)

HERE = os.path.dirname(os.path.abspath(__file__))
DEV_ARTICLES = 150  # wiki_split.py's default, the english model's split


def wikipedia_lines(clean):
    articles = list(wiki_split.articles(clean))[-DEV_ARTICLES:]
    return [line for article in articles for line in article]


def stories_lines(continuation):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(HERE, "dev_split.sh"), continuation, tmp], check=True)
        with open(os.path.join(tmp, "heldout.txt"), encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f if line.strip()]


def run(nextword, model, lines, *options):
    """`nextword tokenize OPTIONS -m MODEL`'s line for each line, through one
    pipe."""
    text = "".join(line + "\n" for line in lines)
    r = subprocess.run([nextword, "tokenize", *options, "-m", model], input=text.encode(),
                       capture_output=True, check=False)
    if r.returncode != 0:
        sys.exit("join_roundtrip.py: tokenize %s exited %d: %s" % (
            " ".join(options), r.returncode, r.stderr.decode(errors="replace").strip()))
    out = r.stdout.decode("utf-8", errors="surrogateescape").split("\n")
    if out[-1] != "" or len(out) - 1 != len(lines):
        sys.exit("join_roundtrip.py: %d lines in, %d out" % (len(lines), len(out) - 1))
    return out[:-1]


def shape(token):
    """A token's kind: 9 digits, x/X one letter, a/A a word, a mark itself."""
    if token.isdigit():
        return "9"
    if token.isalpha() or re.fullmatch(r"\w[\w'-]*", token):
        small = "x" if len(token) == 1 else "a"
        return small.upper() if token[0].isupper() else small
    return token


def gaps(text):
    """The non-space characters of `text`, for each place between two of
    them whether whitespace stands there, and each one's index in `text`."""
    chars, spaced, places = [], [], []
    space = False
    for i, c in enumerate(text):
        if c.isspace():
            space = True
            continue
        if chars:
            spaced.append(space)
        chars.append(c)
        places.append(i)
        space = False
    return "".join(chars), spaced, places


def neighbours(chars, i, spaced):
    """The tokens on each side of the place after chars[i]: a run of letters
    and digits, or a mark alone, as the tokenizer cuts them."""
    def cut(j, step):
        k = j
        while (0 <= k + step < len(chars) and chars[k].isalnum() and chars[k + step].isalnum()
               and not spaced[min(k, k + step)]):
            k += step
        return chars[min(j, k):max(j, k) + 1]
    return cut(i, -1), cut(i + 1, 1)


def kind(line, out):
    """Why `out` is not `line`: the first difference, named, and the part of
    the line where it is."""
    a_chars, a_gaps, places = gaps(line)
    b_chars, b_gaps, out_places = gaps(out)
    if a_chars != b_chars:
        if a_chars.lower() == b_chars.lower():
            return "characters: a word read in another case", line, out
        return "characters: other", line, out
    for i, (a, b) in enumerate(zip(a_gaps, b_gaps)):
        if a != b:
            left, right = neighbours(a_chars, i, a_gaps)
            written = "%s%s%s" % (shape(left), " " if a else "", shape(right))
            at, out_at = places[i], out_places[i]
            return ("spacing: '%s' joined %s" % (written, "apart" if b else "together"),
                    line[max(0, at - 40):at + 40], out[max(0, out_at - 40):out_at + 40])
    return "whitespace: a run of spaces or a tab", line, out


CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
# The capitals the tokenizer lowers (data/FORMAT.md): A-Z and Latin-1's,
# U+00C0..U+00DE but the multiplication sign.
LOWER = str.maketrans({c: chr(ord(c) + 32) for c in
                       [chr(i) for i in range(ord("A"), ord("Z") + 1)] +
                       [chr(i) for i in range(0xC0, 0xDF) if i != 0xD7]})


def measure(nextword, model, lines, lowercase):
    """The lines given back byte for byte, and given back once the line's
    curly quotes are read as straight ones as the tokenizer reads them (the
    words hold no other spelling of them), with the kinds of the others."""
    outs = run(nextword, model, lines, "--join")
    # The joined text must read as the same tokens (the same ids) again.
    reread = sum(a == b for a, b in zip(run(nextword, model, lines), run(nextword, model, outs)))
    kinds = collections.Counter()
    examples = {}
    exact = same = 0
    for line, out in zip(lines, outs):
        line = line.strip()
        if lowercase:
            line, out = line.translate(LOWER), out.translate(LOWER)
        exact += out == line
        if out == line.translate(CURLY):
            same += 1
            continue
        k, line_part, out_part = kind(line.translate(CURLY), out)
        kinds[k] += 1
        examples.setdefault(k, (line_part, out_part))
    return {"lines": len(lines), "exact": exact, "same": same, "reread": reread,
            "share": same / len(lines) if lines else 0.0,
            "kinds": [{"kind": k, "lines": n, "line": examples[k][0], "joined": examples[k][1]}
                      for k, n in kinds.most_common()]}


CEILING_TOKEN = re.compile(r"[A-Za-z0-9\u00C0-\uFFFF]+|\S")


def ceiling(lines, context):
    """The share of `lines` an oracle gives back that puts a space in each
    gap between two tokens (runs of letters and digits, or one mark) exactly
    where the lines themselves most often do after the same `context` tokens
    (2: the two tokens either side; 3: and the one before): an upper bound
    on any joiner that decides from those tokens, since it is fitted to the
    very lines it is scored on."""
    spacing, seen = collections.defaultdict(collections.Counter), []
    for line in lines:
        tokens = [(m.group(), m.start(), m.end())
                  for m in CEILING_TOKEN.finditer(line.strip().translate(CURLY))]
        gaps = [(tuple(t[0] for t in tokens[max(0, i + 1 - context):i + 1]),
                 tokens[i][1] > tokens[i - 1][2]) for i in range(1, len(tokens))]
        for key, spaced in gaps:
            spacing[key][spaced] += 1
        seen.append(gaps)
    best = {key: counts.most_common(1)[0][0] for key, counts in spacing.items()}
    given = sum(all(best[key] == spaced for key, spaced in gaps) for gaps in seen)
    return given / len(lines) if lines else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword")
    parser.add_argument("--wikipedia", help="the cleaned Wikipedia text (CLEAN.txt)")
    parser.add_argument("--stories", help="TinyStories' continuation file")
    parser.add_argument("--kinds", type=int, default=12, help="kinds of difference listed")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--ceiling", action="store_true",
                        help="also the share oracles of 2 and 3 tokens give back (ceiling())")
    args = parser.parse_args()
    if not args.wikipedia and not args.stories:
        parser.error("give --wikipedia, --stories or both")
    report = {}
    if args.wikipedia:
        report["wikipedia"] = measure(args.nextword, "english", wikipedia_lines(args.wikipedia),
                                      False)
    if args.stories:
        report["stories"] = measure(args.nextword, "stories", stories_lines(args.stories), True)
    if args.ceiling and args.wikipedia:
        lines = wikipedia_lines(args.wikipedia)
        report["wikipedia"]["ceiling"] = {n: ceiling(lines, n) for n in (2, 3)}
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return
    for name, r in report.items():
        print("%s: %d of %d lines given back (%.2f%%); byte for byte with their curly "
              "quotes: %d (%.2f%%)" % (name, r["same"], r["lines"], 100 * r["share"],
                                       r["exact"], 100 * r["exact"] / r["lines"]))
        print("  read again as the same tokens: %d of %d lines" % (r["reread"], r["lines"]))
        for n, share in r.get("ceiling", {}).items():
            print("  an oracle of %d tokens fitted to these lines gives back %.2f%%" % (
                n, 100 * share))
        for k in r["kinds"][:args.kinds]:
            print("  %5d  %s" % (k["lines"], k["kind"]))
            print("         line:   %s" % k["line"][:160])
            print("         joined: %s" % k["joined"][:160])


if __name__ == "__main__":
    main()
