#!/usr/bin/env python3
"""Two builds of nextword side by side in one run: is the new one slower?

    python3 tests/bench/compare_builds.py OLD_NEXTWORD NEW_NEXTWORD
        [--model data/stories] [--threads 2] [--phrases 2000] [--rounds 5] [--json OUT]
        [--score TEXT_FILE]

For a redesign that must not change speed: both binaries read the
same model and phrases, and every figure is taken in alternating rounds
(old, new, old, new, ...) so that the noise of a shared machine falls on both
alike. Reported, each as old, new and new/old of the medians:

  - `nextword --version` as a process (start-up alone);
  - one phrase as a process (start, load, predict, print);
  - a stream of phrases through stdin (whole process), tokens/s;
  - with --score, `score -f tsv` of a text file (whole process), words/s;
  - `nextword bench`: model load, the JSON loader, and the latency of each
    batch size x phrase length;
  - peak memory (max RSS) predicting the stream.

Both must print the same predictions for the stream, probabilities within
1e-4 (the last bits may differ between kernel families); the
script stops if not.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare_torch import machine, max_rss, timed, write_phrases  # noqa: E402


def old_new_table(figures, width, digits):
    """Prints each figure's old and new medians and new/old, one row each
    (figures: {"old": {figure: [values]}, "new": ...}); returns them."""
    print("%-*s %10s %10s %8s" % (width, "figure (median)", "old", "new", "new/old"))
    results = {}
    for figure in figures["old"]:
        old = statistics.median(figures["old"][figure])
        new = statistics.median(figures["new"][figure])
        results[figure] = {"old": old, "new": new, "ratio": new / old}
        print("%-*s %10.*f %10.*f %8.2f" % (width, figure, digits, old, digits, new, new / old))
    return results


def bench(nextword, model, threads):
    out = subprocess.run([nextword, "bench", "-m", model, "-t", threads, "-b", "1", "16", "64",
                          "-l", "8", "64", "--seconds", "0.5", "-f", "json"],
                         check=True, stdout=subprocess.PIPE).stdout
    b = json.loads(out)
    figures = {"bench load_ms": b["load_ms"], "bench json_loader_ms": b["json_loader"]["ours_ms"]}
    for run in b["runs"]:
        figures["bench %dx%d median_ms" % (run["batch"], run["tokens"])] = run["median_ms"]
    return figures


def same_predictions(old, new, tolerance=1e-4):
    """Whether two `predict -f tsv` streams agree: the same lines, and at each
    rank the same probability within `tolerance` (a kernel family's last bits
    may change between kernel families), the words the same unless their probabilities are
    that close (a near tie may swap)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if len(old_lines) != len(new_lines):
        return False
    for a, b in zip(old_lines, new_lines):
        fa, fb = a.split("\t"), b.split("\t")
        if len(fa) != len(fb):
            return False
        for i in range(0, len(fa) - 1, 2):
            pa, pb = float(fa[i + 1]), float(fb[i + 1])
            if abs(pa - pb) > tolerance:
                return False
            if fa[i] != fb[i] and fb[i] not in fa and fa[i] not in fb:
                return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--model", default=os.path.join(HERE, "..", "..", "data", "stories"))
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--phrases", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--score", help="also time `score` of this text file")
    args = parser.parse_args()
    builds = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    model, n = os.path.abspath(args.model), str(args.threads)

    tmp = tempfile.TemporaryDirectory()
    phrases, phrase_file = write_phrases(model, args.phrases, tmp.name)
    tokens = sum(len(p.split()) for p in phrases)

    figures = {name: {} for name in builds}  # build -> figure -> [values]
    outputs = {}

    def add(name, figure, value):
        figures[name].setdefault(figure, []).append(value)

    for _ in range(args.rounds):
        for name, nw in builds.items():
            for _ in range(4):
                add(name, "--version ms", 1e3 * timed([nw, "--version"])[0])
                add(name, "one phrase ms", 1e3 * timed(
                    [nw, "predict", "-m", model, "-f", "tsv", "-t", n, "once upon a"])[0])
            seconds, out, _ = timed([nw, "predict", "-m", model, "-f", "tsv", "-q", "-t", n],
                                    phrase_file)
            outputs[name] = out
            add(name, "stream tokens/s", tokens / seconds)
            for figure, value in bench(nw, model, n).items():
                add(name, figure, value)
            if args.score:
                seconds, out, _ = timed([nw, "score", "-m", model, "-f", "tsv", "-q", "-t", n],
                                        os.path.abspath(args.score))
                words = sum(int(line.split("\t")[3]) for line in out.splitlines() if line)
                add(name, "score words/s", words / seconds)
    if not same_predictions(outputs["old"], outputs["new"]):
        sys.exit("the two builds predict differently on the stream (beyond 1e-4)")
    for name, nw in builds.items():
        add(name, "stream peak MB",
            max_rss([nw, "predict", "-m", model, "-f", "tsv", "-q", "-t", n], phrase_file) / 1e6)

    print("machine   %s; %d threads; %d rounds, alternating" % (machine(), args.threads,
                                                                args.rounds))
    print("old       %s\nnew       %s" % (builds["old"], builds["new"]))
    results = old_new_table(figures, 28, 2)
    print("(times: a ratio below 1 is faster; tokens/s: above 1 is faster)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": machine(), "threads": args.threads, "figures": results}, f,
                      indent=2)


if __name__ == "__main__":
    main()
