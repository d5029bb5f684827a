#!/usr/bin/env python3
"""The latency of one keystroke through `nextword complete`, as a person
typing held-out text sees it: issue 67's goal for a GGUF model (SmolLM2-135M's
shape in Q8_0: p50 <= 60 ms, p90 <= 150 ms).

    python3 tests/bench/complete_latency.py NEXTWORD MODEL [--words 300]
        [--text ../shared/corpus/wikitext103-valid.tokens] [--threads 2]
        [--json OUT]

`nextword complete -f json -m MODEL` reads one text per line from a real
pipe; the script writes the text typed so far after each character (the
first --words words of the text's first paragraphs long enough to hold
them, WikiText's ` @-@ ` and ` @,@ ` joined back as written) and times,
with perf_counter, from just before the line is written to the end of
reading its record. Prints the median and the 90th percentile of every
keystroke, of those that start a word (after a space: the model's forward
pass and word search run) and of those inside a word (the last search
filtered). The first keystroke is reported on its own (the process may
still be loading the model). Never in CI: the figures are the machine's.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "shared")


def typed_text(path, words):
    """The first `words` words of the file's article text, as written."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("="):  # blank lines and headings
                continue
            line = line.replace(" @-@ ", "-").replace(" @,@ ", ",").replace(" @.@ ", ".")
            out += line.split()
            if len(out) >= words:
                break
    return " ".join(out[:words])


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("nextword")
    parser.add_argument("model")
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--text", default=os.path.join(SHARED, "corpus",
                                                       "wikitext103-valid.tokens"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    text = typed_text(args.text, args.words)
    process = subprocess.Popen([args.nextword, "complete", "-f", "json", "-m", args.model, "-t",
                                str(args.threads)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, bufsize=1)
    times = {"all": [], "word start": [], "inside a word": []}
    first = None
    for i in range(1, len(text) + 1):
        start = time.perf_counter()
        process.stdin.write(text[:i] + "\n")
        process.stdin.flush()
        record = process.stdout.readline()
        ms = 1e3 * (time.perf_counter() - start)
        if not record:
            sys.exit("nextword complete ended at keystroke %d" % i)
        json.loads(record)
        if first is None:
            first = ms
            continue
        times["all"].append(ms)
        times["word start" if text[i - 1] == " " else "inside a word"].append(ms)
    process.stdin.close()
    process.wait()
    result = {"model": args.model, "words": args.words, "keystrokes": len(text),
              "first_ms": first}
    print("%s: %d words, %d keystrokes; the first %.0f ms" % (
        args.model, args.words, len(text), first))
    for name, values in times.items():
        result[name] = {"p50_ms": statistics.median(values), "p90_ms": quantile(values, 0.9),
                        "count": len(values)}
        print("  %-14s p50 %7.1f ms  p90 %7.1f ms  (%d)" % (
            name, result[name]["p50_ms"], result[name]["p90_ms"], len(values)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
