#!/usr/bin/env python3
"""The memory's cost, side by side: one model on one binary with its memory
(the default) and with `--no-memory`, the three speed figures it must meet.

    python3 tests/bench/memory_speed.py build/nextword MODEL_DIR
        [--wikitext ../shared/corpus/wikitext103-valid.tokens] [--words 500]
        [--rounds 7] [--json OUT]

Every figure is taken in alternating rounds (--no-memory, memory, ...), so
that the noise of a shared machine falls on both alike, and reported as the
two medians, memory/--no-memory of them, and the median of the ratios of
paired runs (each run against the same run of the other kind in the same
round: the goal's figure, which the machine's drift between rounds leaves
alone):

  - one phrase as a whole process (`predict "The capital of France is"`:
    start, load and map, predict, print), ms;
  - a keystroke's p90: `eval --ksr -k 6` typing the first --words words of
    WikiText-103's validation split as plain text (the card's KSR text, as
    tests/bench/compare_presage.py --wikitext makes it) one character at a
    time through the completer of `complete` and `type`, ms;
  - `generate "The capital of France is" -n 200` (greedy) as a whole
    process, ms.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from compare_builds import old_new_table  # noqa: E402
from compare_presage import first_words, wikitext_text  # noqa: E402
from compare_torch import machine, timed  # noqa: E402

PHRASE = "The capital of France is"
GOAL = 1.10  # each within 10% of --no-memory


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword")
    parser.add_argument("model")
    parser.add_argument("--wikitext", default=os.path.join(REPO, "..", "shared", "corpus",
                                                           "wikitext103-valid.tokens"))
    parser.add_argument("--words", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    nextword, model = os.path.abspath(args.nextword), os.path.abspath(args.model)
    if not os.path.exists(os.path.join(model, "memory.bin")):
        sys.exit("memory_speed.py: %s/memory.bin: no memory to compare" % model)

    tmp = tempfile.TemporaryDirectory()
    text = os.path.join(tmp.name, "typed.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write(first_words(wikitext_text(args.wikitext), args.words))

    # "old" is the transformer alone, "new" the default with the memory.
    variants = {"old": ["--no-memory"], "new": []}
    figures = {name: {} for name in variants}
    for round_ in range(args.rounds):
        # Each round in the other order, so that neither always runs first.
        for name, flags in sorted(variants.items(), reverse=round_ % 2 == 1):
            add = figures[name].setdefault
            for _ in range(5):
                seconds = timed([nextword, "predict", "-m", model, "-f", "tsv", *flags, PHRASE])[0]
                add("one phrase ms", []).append(1e3 * seconds)
            out = timed([nextword, "eval", "--ksr", "-k", "6", "-m", model, "-f", "json", *flags,
                         text])[1]
            k = json.loads(out)
            add("keystroke p90 ms", []).append(k["keystroke_ms"]["p90"])
            add("keystroke median ms", []).append(k["keystroke_ms"]["median"])
            add("KSR %", []).append(100 * k["ksr"])
            seconds = timed([nextword, "generate", "-m", model, "-n", "200", *flags, PHRASE])[0]
            add("generate -n 200 ms", []).append(1e3 * seconds)

    print("machine   %s; %d rounds, alternating; typed the first %d words of %s"
          % (machine(), args.rounds, args.words, args.wikitext))
    print("old: --no-memory, new: with %s/memory.bin (%.1f MB)"
          % (model, os.path.getsize(os.path.join(model, "memory.bin")) / 1e6))
    results = old_new_table(figures, 28, 3)
    # The median of the rounds' own ratios: drift of the machine's speed
    # between rounds falls out of each.
    print("%-28s %10s" % ("figure (median of rounds)", "new/old"))
    for figure in results:
        ratios = [n / o for o, n in zip(figures["old"][figure], figures["new"][figure])]
        results[figure]["round_ratio"] = statistics.median(ratios)
        print("%-28s %10.3f" % (figure, results[figure]["round_ratio"]))
    goals = {figure: results[figure]["round_ratio"] <= GOAL
             for figure in ("one phrase ms", "keystroke p90 ms", "generate -n 200 ms")}
    for figure, met in goals.items():
        print("%-40s %s" % (figure + " within 10%", "met" if met else "NOT met"))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": machine(), "figures": results, "goals": goals}, f, indent=2)


if __name__ == "__main__":
    main()
