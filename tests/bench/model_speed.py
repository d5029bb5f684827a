#!/usr/bin/env python3
"""Two models side by side with one binary: the speed goals of a new default
model against the model it replaces.

    python3 tests/bench/model_speed.py build/nextword OLD_MODEL_DIR NEW_MODEL_DIR
        [--old-nextword OLD_BINARY] [--text FILE] [--words 2000] [--rounds 5] [--json OUT]

Every figure is taken in alternating rounds (old, new, old, new, ...), so
that the noise of a shared machine falls on both alike, and reported as
old, new and new/old of the medians. The old model runs on --old-nextword
when given (a build of the commit that shipped it: what a user had), else on
the same binary as the new one; one phrase is timed for the old model on the
new binary as well, so both comparisons show.

  - one phrase as a whole process (`predict "once upon a"`: start, load,
    predict, print), ms;
  - `generate "once upon a" -n 200`, greedy, as a whole process: words/s
    (the load counted in);
  - keystrokes: `eval --ksr -k 6` typing the first --words words of --text
    (the development split; default: tools/dev_split.sh's heldout.txt,
    written to a scratch directory) one character at a time through the
    completer that `complete` and `type` use, on one thread: median and p90
    ms per keystroke, word starts included, and the same with --learn
    --no-repeat; and `nextword bench`'s 200 generated words typed the same
    way;
  - `score -f tsv --document` of the first 300 of those words as a whole
    process: words/s (before, this scored the text's path as a line).

The goals are printed with the figures: one phrase no slower than
the old model (on --old-nextword when given), generate at least 1,000 words/s, p90 per keystroke at most
1 ms.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from compare_builds import old_new_table  # noqa: E402
from compare_presage import first_words, split_continuation  # noqa: E402
from compare_torch import machine, timed  # noqa: E402


SCORED_WORDS = 300


def development_split(corpus, scratch):
    split_continuation(corpus, scratch)
    return os.path.join(scratch, "heldout.txt")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword")
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--old-nextword", help="the binary the old model runs on (default: NEXTWORD)")
    parser.add_argument("--text", help="text to type and score (default: the development split)")
    parser.add_argument("--corpus", default=os.path.join(REPO, "..", "shared", "corpus"))
    parser.add_argument("--words", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    nextword = os.path.abspath(args.nextword)
    models = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    binaries = {"old": os.path.abspath(args.old_nextword or args.nextword), "new": nextword}

    tmp = tempfile.TemporaryDirectory()
    source = args.text or development_split(args.corpus, tmp.name)
    with open(source, encoding="utf-8") as f:
        typed = first_words(f.read(), args.words)
    text = os.path.join(tmp.name, "typed.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write(typed)
    # score reads its own text: the first SCORED_WORDS words as one document
    # (every word past max_len gets a window of its own, so the whole text
    # would take minutes on a model with a long context).
    scored = os.path.join(tmp.name, "scored.txt")
    with open(scored, "w", encoding="utf-8") as f:
        f.write(first_words(typed, SCORED_WORDS))

    figures = {name: {} for name in models}

    def add(name, figure, value):
        figures[name].setdefault(figure, []).append(value)

    def one_phrase(binary, model):
        return 1e3 * timed([binary, "predict", "-m", model, "-f", "tsv", "once upon a"])[0]

    for _ in range(args.rounds):
        for name, model in models.items():
            nextword = binaries[name]
            for _ in range(8):
                add(name, "one phrase ms", one_phrase(nextword, model))
                if args.old_nextword and name == "new":
                    # The old model on this build, beside the new one.
                    figure = "one phrase ms, old model, old|new binary"
                    add("old", figure, one_phrase(binaries["old"], models["old"]))
                    add("new", figure, one_phrase(nextword, models["old"]))
            seconds, out, _ = timed([nextword, "generate", "-m", model, "-n", "200", "once upon a"])
            add(name, "generate -n 200 words/s", 200 / seconds)
            for label, flags in (("", []), (" --learn --no-repeat", ["--learn", "--no-repeat"])):
                out = timed([nextword, "eval", "--ksr", "-k", "6", "-m", model, "-f", "json", text,
                             *flags])[1]
                k = json.loads(out)
                add(name, "keystroke median ms" + label, k["keystroke_ms"]["median"])
                add(name, "keystroke p90 ms" + label, k["keystroke_ms"]["p90"])
                add(name, "KSR %" + label, 100 * k["ksr"])
            b = json.loads(timed([nextword, "bench", "-m", model, "-b", "1", "-l", "8",
                                  "--seconds", "0.2", "-f", "json"])[1])
            add(name, "bench keystroke p90 ms", b["keystrokes"]["p90_ms"])
            seconds, out, _ = timed([nextword, "score", "-m", model, "-f", "tsv", "-q",
                                     "--document", scored])
            words = sum(int(line.split("\t")[3]) for line in out.splitlines() if line)
            add(name, "score words/s", words / seconds)

    print("machine   %s; %d rounds, alternating; typed %s (%d words)"
          % (machine(), args.rounds, source, args.words))
    print("old       %s on %s\nnew       %s on %s"
          % (models["old"], binaries["old"], models["new"], binaries["new"]))
    if args.old_nextword:
        print("(one phrase ms, old model, old|new binary: the old model on either binary)")
    results = old_new_table(figures, 40, 3)
    goals = {
        "one phrase no slower than the old model": results["one phrase ms"]["ratio"] <= 1.0,
        "generate -n 200 at least 1,000 words/s": results["generate -n 200 words/s"]["new"] >= 1000,
        "p90 per keystroke at most 1 ms": max(results[f]["new"] for f in results
                                              if "p90" in f) <= 1.0,
    }
    for goal, met in goals.items():
        print("%-48s %s" % (goal, "met" if met else "NOT met"))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": machine(), "figures": results, "goals": goals}, f, indent=2)


if __name__ == "__main__":
    main()
