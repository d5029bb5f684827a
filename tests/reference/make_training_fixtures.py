#!/usr/bin/env python3
"""Adds training.json to every model in tests/fixtures/parity: a random batch,
its loss and every tensor's gradient from PyTorch autograd, and the losses of
10 AdamW steps (train_ref.py). tests/unit/backward_parity_test.cpp checks the
C++ backward pass and optimizer against them.

    /usr/bin/python3 tests/reference/make_training_fixtures.py [ROOT]
"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_ref import training_record  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def random_batch(directory, seed):
    with open(os.path.join(directory, "weights.json"), encoding="utf-8") as f:
        config = json.load(f)["config"]
    rng = random.Random(seed)
    T = min(config["max_len"], 5)
    V = config["vocab_size"]
    inputs = [[rng.randrange(V) for _ in range(T)] for _ in range(2)]
    targets = [[rng.randrange(V) for _ in range(T)] for _ in range(2)]
    return inputs, targets


def write_training(directory, seed):
    inputs, targets = random_batch(directory, seed)
    record = training_record(directory, inputs, targets)
    with open(os.path.join(directory, "training.json"), "w", encoding="utf-8") as f:
        json.dump(record, f)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "fixtures", "parity")
    names = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
    for seed, name in enumerate(names):
        write_training(os.path.join(root, name), seed)
    print("wrote training.json for %d models in %s" % (len(names), os.path.normpath(root)))


if __name__ == "__main__":
    main()
