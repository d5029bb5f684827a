#!/usr/bin/env python3
"""Regenerates tests/fixtures/parity: random models covering every config flag,
with the logits and attention the PyTorch reference computes for them: seeds
0 .. count-1 as they always were, then --modern more with the modern
options (rope, rmsnorm, swiglu, optional feed-forward biases).

    /usr/bin/python3 tests/reference/make_fixtures.py [--count 32] [--modern 16]

The C++ parity test (tests/unit/transformer_parity_test.cpp) loads each model with the
engine and compares against expected.json.
"""
import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_models  # noqa: E402
from nextword_ref import Model  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "parity")


def covered(configs):
    """Every value of every flag appears in a model with at least one layer."""
    missing = []
    layered = [c for c in configs if c["n_layers"] > 0]
    flags = {flag: set(values) for flag, values in random_models.FLAGS.items()}
    for flag, values in random_models.MODERN_FLAGS.items():
        flags[flag] |= set(values)
    for flag, values in sorted(flags.items()):
        for value in sorted(values, key=str):
            if not any(c[flag] == value and (flag != "activation" or c["d_ff"] > 0) for c in layered):
                missing.append("%s=%s" % (flag, value))
    for n in range(4):
        if not any(c["n_layers"] == n for c in configs):
            missing.append("n_layers=%d" % n)
    if not any(c["d_k"] != c["d_v"] for c in layered):
        missing.append("d_k!=d_v")
    if not any("bos_token" in c for c in configs):
        missing.append("bos_token")
    return missing


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=32)
    parser.add_argument("--modern", type=int, default=16)
    args = parser.parse_args()
    models = [random_models.random_model(seed, modern=seed >= args.count)
              for seed in range(args.count + args.modern)]
    missing = covered([m[0] for m in models])
    if missing:
        sys.exit("not every flag is covered, raise --count: " + ", ".join(missing))
    shutil.rmtree(OUT, ignore_errors=True)
    for seed, (config, tensors, words, phrases) in enumerate(models):
        directory = os.path.join(OUT, "%02d-%s" % (seed, random_models.describe(config)))
        random_models.write_model(directory, seed, config, tensors, words)
        model = Model(os.path.join(directory, "vocab.json"), os.path.join(directory, "weights.json"))
        cases = []
        for phrase in phrases:
            r = model.record(phrase)
            del r["probabilities"]
            cases.append(r)
        with open(os.path.join(directory, "expected.json"), "w", encoding="utf-8") as f:
            json.dump({"cases": cases}, f)
    print("wrote %d models to %s" % (len(models), os.path.normpath(OUT)))


if __name__ == "__main__":
    main()
