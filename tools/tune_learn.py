#!/usr/bin/env python3
"""Tunes --learn's five numbers on TinyStories text that no model was trained
on and that keystroke savings are not reported on: the word cache's weight
lambda and decay, the context cache's weight mu and sharpness theta, the
model's temperature T (src/complete/completer.h).

The text is the default model's own validation text: `train --val-fraction
0.02` holds out the last 2% of its training tokens (about 19,000 tokens, the
end of continuation-train.txt from tools/dev_split.sh), and this script
types the last WORDS words of it (from a story's start). The development
split (heldout.txt), on which the model card reports keystroke savings
against presage, is not used here.

It prints the keystroke savings of every setting, best last, and the best.

    python3 tools/tune_learn.py build/nextword [--corpus ../shared/corpus]
        [--words 10000] [--jobs 2]
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "bench"))
import compare_presage  # noqa: E402

LAMBDAS = [0.03, 0.05]
DECAYS = [0.98, 0.99]
MUS = [0, 0.03, 0.05, 0.08]
THETAS = [10, 15, 20]
TEMPERATURES = [1, 1.25, 1.5]


def ksr(nextword, text, setting):
    lam, decay, mu, theta, temperature = setting
    r = subprocess.run([nextword, "eval", "--ksr", "--learn", "--no-repeat", "-f", "json", text,
                        "--learn-weight", str(lam), "--learn-decay", str(decay),
                        "--learn-context-weight", str(mu), "--learn-context-sharpness", str(theta),
                        "--learn-temperature", str(temperature)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["ksr"]


def validation_tail(train_text, words):
    """The last `words` words of train_text, from the start of a story (the
    line after a blank line)."""
    lines = train_text.split("\n")
    i, count = len(lines), 0
    while i > 0 and count < words:
        i -= 1
        count += len(lines[i].split())
    while i > 0 and lines[i - 1].strip():
        i -= 1
    return "\n".join(lines[i:])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("nextword")
    parser.add_argument("--corpus", default=os.path.join(here, "..", "..", "shared", "corpus"))
    parser.add_argument("--words", type=int, default=10000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="nextword-tune-")
    train_bytes, _ = compare_presage.split_continuation(args.corpus, scratch)
    text = os.path.join(scratch, "validation-tail.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write(validation_tail(train_bytes.decode("utf-8"), args.words))

    settings = [(lam, decay, mu, theta if mu else THETAS[0], temperature)
                for lam, decay, mu, theta, temperature in itertools.product(
                    LAMBDAS, DECAYS, MUS, THETAS, TEMPERATURES)]
    settings = sorted(set(settings))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(settings, pool.map(lambda s: ksr(args.nextword, text, s), settings)))
    print("lambda  decay  mu    theta  T     KSR")
    for s in sorted(settings, key=results.get):
        print("%-6g  %-5g  %-4g  %-5g  %-4g  %.4f%%" % (*s, 100 * results[s]))
    best = max(settings, key=results.get)
    print("best: --learn-weight %g --learn-decay %g --learn-context-weight %g "
          "--learn-context-sharpness %g --learn-temperature %g: %.4f%%" % (*best, 100 * results[best]))


if __name__ == "__main__":
    main()
