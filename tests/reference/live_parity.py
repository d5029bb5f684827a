#!/usr/bin/env python3
"""Live parity: fresh random models, the nextword binary against the PyTorch
reference, compared on tokens, ids, attention, logits and probabilities.

    /usr/bin/python3 tests/reference/live_parity.py build/nextword [--models 24] [--seed 1000]

Exits 0 when every record matches (norm-wise relative error <= 1e-4), 1 when
one does not, 77 (skip) when torch is missing and --require-torch is false.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import random_models  # noqa: E402

TOLERANCE = 1e-4


def relative_error(got, want):
    largest = max(abs(w) for w in want)
    worst = max(abs(g - w) for g, w in zip(got, want))
    return worst / largest if largest else worst


def flatten(x):
    if isinstance(x, list):
        return [y for item in x for y in flatten(item)]
    return [x]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("--models", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1000,
                        help="first seed; the fixtures use 0..47")
    parser.add_argument("--modern", type=int, default=16,
                        help="models more with rope, rmsnorm and swiglu, from seed + 1000")
    parser.add_argument("--adaptive", type=int, default=16,
                        help="models more with an adaptive softmax, from seed + 2000 (half modern)")
    parser.add_argument("--require-torch", default="0")
    args = parser.parse_args()
    args.nextword = os.path.abspath(args.nextword)
    try:
        from nextword_ref import Model
    except ImportError as e:
        print("live parity: cannot import torch (%s); install python3-torch" % e)
        return 1 if args.require_torch in ("1", "ON", "true") else 77

    worst = {"logits": 0.0, "probabilities": 0.0, "attention": 0.0}
    failures, records = [], 0
    with tempfile.TemporaryDirectory(prefix="nextword-parity-") as tmp:
        seeds = [(seed, False, False) for seed in range(args.seed, args.seed + args.models)]
        seeds += [(seed + 1000, True, False) for seed in range(args.seed, args.seed + args.modern)]
        seeds += [(seed + 2000, seed % 2 == 0, True)
                  for seed in range(args.seed, args.seed + args.adaptive)]
        for seed, modern, adaptive in seeds:
            # Half of the modern ones with grouped-query attention (as llama2.c's models have).
            config, tensors, words, phrases = random_models.random_model(
                seed, modern, adaptive, grouped=modern and not adaptive and seed % 2 == 1)
            directory = os.path.join(tmp, str(seed))
            random_models.write_model(directory, seed, config, tensors, words)
            ref = Model(os.path.join(directory, "vocab.json"),
                        os.path.join(directory, "weights.json"))
            run = subprocess.run(
                [args.nextword, "attention", "--model", directory, "-q",
                 "-k", str(len(words))],
                input="\n".join(phrases) + "\n", capture_output=True, text=True, check=False)
            lines = run.stdout.splitlines()
            if run.returncode != 0 or len(lines) != len(phrases):
                failures.append("seed %d: exit %d, %d records for %d phrases: %s" % (
                    seed, run.returncode, len(lines), len(phrases), run.stderr.strip()))
                continue
            for phrase, line in zip(phrases, lines):
                got, want = json.loads(line), ref.record(phrase)
                records += 1
                where = "seed %d (%s), phrase %r" % (seed, random_models.describe(config), phrase)
                for key in ("tokens", "ids", "unknown", "truncated"):
                    if got[key] != want[key]:
                        failures.append("%s: %s %r, reference %r" % (where, key, got[key], want[key]))
                listed = sorted(got["predictions"], key=lambda p: p["id"])
                ids = [p["id"] for p in listed]
                errors = {
                    "logits": relative_error([p["logit"] for p in listed],
                                             [want["logits"][i] for i in ids]),
                    "probabilities": relative_error([p["probability"] for p in listed],
                                                    [want["probabilities"][i] for i in ids]),
                    "attention": relative_error(flatten(got["attention"]),
                                                flatten(want["attention"]))
                    if config["n_layers"] else 0.0,
                }
                for key, error in errors.items():
                    worst[key] = max(worst[key], error)
                    if error > TOLERANCE:
                        failures.append("%s: %s relative error %.3g" % (where, key, error))
    for failure in failures:
        print("FAIL " + failure)
    print("live parity: %d models, %d records; largest relative error: logits %.3g, "
          "probabilities %.3g, attention %.3g" % (len(seeds), records, worst["logits"],
                                                  worst["probabilities"], worst["attention"]))
    print("%d passed, %d failed" % (records - len({f.split(":")[0] for f in failures}),
                                    len({f.split(":")[0] for f in failures})))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
