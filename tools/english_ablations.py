#!/usr/bin/env python3
"""The English model's ablations: short `nextword train` runs on a
share of the cleaned Wikipedia text, one change each, at equal steps and
tokens, scored on the development split by `eval --wikitext` (perplexity per
word with out-of-vocabulary words spelled, top-1, top-5, words outside the
vocabulary).

    python3 tools/english_ablations.py build/nextword --split DIR [--steps 1000]
        [--only NAME,...] [--scratch DIR] [--results FILE]

DIR is tools/wiki_split.py's output (train.txt, a share of the text,
and dev.tokens, 150 articles no run trains on). Results are appended to
--results as JSON lines; a variant already there is not run again, so the
script can be stopped and started. The table goes to stdout in Markdown.
A run's time is its wall time on this machine, whatever else ran then.

    python3 tools/english_ablations.py build/nextword --split DIR --probe 30
        [--rounds 3] [--only v64k,NAME,...]

times each variant's steps instead, side by side in alternating rounds
against the first one (for comparisons at equal wall-clock: a variant 10%
slower per token gets 10% fewer tokens in the same time).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# Every run: the Llama-style block of the stories model, cased, one epoch or
# less of text (so no dropout), 16 windows of 128 words a step.
COMMON = ["--no-lowercase", "--positional", "rope", "--norm", "rmsnorm", "--activation", "swiglu",
          "--no-ffn-bias", "--context", "128", "--batch", "16", "--warmup", "100", "--lr", "2e-3",
          "--min-lr", "1e-4", "--weight-decay", "0.1", "--dropout", "0", "--val-fraction", "0.002",
          "--seed", "1", "--threads", "2", "--eval-every", "0", "--log-every", "100"]
SHAPE = ["--d-model", "192", "--layers", "4", "--heads", "6", "--d-ff", "512"]
BASE = ["--vocab-size", "65536", "--adaptive-cutoffs", "4096,16384"]

# name, what changes, options
VARIANTS = [
    ("v64k", "vocabulary 65,536, cutoffs 4,096 and 16,384, d 192, 4 layers", BASE + SHAPE),
    ("v32k", "vocabulary 32,768", ["--vocab-size", "32768", "--adaptive-cutoffs", "4096,16384"]
     + SHAPE),
    ("v64k-head8k", "head of 8,192 words, cutoffs 8,192 and 32,768",
     ["--vocab-size", "65536", "--adaptive-cutoffs", "8192,32768"] + SHAPE),
    ("v64k-head2k", "head of 2,048 words, cutoffs 2,048, 8,192 and 32,768",
     ["--vocab-size", "65536", "--adaptive-cutoffs", "2048,8192,32768"] + SHAPE),
    ("v64k-div2", "clusters' projections d/2 and d/4 (adaptive-div 2)",
     BASE + ["--adaptive-div", "2"] + SHAPE),
    ("v64k-d256", "d 256, 4 heads, d_ff 683", BASE + ["--d-model", "256", "--layers", "4",
                                                      "--heads", "4", "--d-ff", "683"]),
    ("v64k-L6", "6 layers", BASE + ["--d-model", "192", "--layers", "6", "--heads", "6",
                                    "--d-ff", "512"]),
    ("v64k-ctx256", "context 256, batch 8", BASE + SHAPE + ["--context", "256", "--batch", "8"]),
    ("v64k-dropout0.1", "dropout 0.1", BASE + SHAPE + ["--dropout", "0.1"]),
    # The retrained model's recipe options, each alone against v64k.
    ("v64k-relu2", "squared ReLU, d_ff 768 (SwiGLU's parameters)",
     BASE + ["--d-model", "192", "--layers", "4", "--heads", "6", "--d-ff", "768",
             "--activation", "relu2"]),
    ("v64k-zero", "output projections (w_o, w_out) initialised at zero",
     BASE + SHAPE + ["--zero-init-projections"]),
    ("v64k-wsd", "warmup-stable-decay, the last 20% decaying",
     BASE + SHAPE + ["--schedule", "wsd", "--decay-fraction", "0.2"]),
    ("v64k-muon", "Muon for the matrices (lr 0.02, momentum 0.95), AdamW for the rest",
     BASE + SHAPE + ["--optimizer", "muon"]),
    # At equal wall-clock: the slower ones get the steps that v64k's time buys
    # them (--probe 30 --rounds 2, side by side: Muon 0.81 of v64k's tokens/s,
    # d 256 0.65, 6 layers 0.76; the others within the probe's noise of 1).
    ("v64k-muon-time", "Muon, 325 steps (v64k's time)",
     BASE + SHAPE + ["--optimizer", "muon", "--steps", "325"]),
    ("v64k-d256-time", "d 256, 4 heads, d_ff 683, 261 steps (v64k's time)",
     BASE + ["--d-model", "256", "--layers", "4", "--heads", "4", "--d-ff", "683",
             "--steps", "261"]),
    ("v64k-kept", "squared ReLU + WSD + Muon together, 310 steps (v64k's time)",
     BASE + ["--d-model", "192", "--layers", "4", "--heads", "6", "--d-ff", "768",
             "--activation", "relu2", "--schedule", "wsd", "--decay-fraction", "0.2",
             "--optimizer", "muon", "--steps", "310"]),
    ("v64k-relu2-wsd", "squared ReLU + WSD together (no Muon: no cost in time)",
     BASE + ["--d-model", "192", "--layers", "4", "--heads", "6", "--d-ff", "768",
             "--activation", "relu2", "--schedule", "wsd", "--decay-fraction", "0.2"]),
    ("v64k-seed2", "v64k from another seed: how far runs differ by chance alone",
     BASE + SHAPE + ["--seed", "2"]),
    ("v64k-qknorm", "QK-norm (each head's q and k over their root mean square)",
     BASE + SHAPE + ["--qk-norm"]),
]


def with_common(options):
    """COMMON, less the options a variant sets itself (each takes one value), then the variant's."""
    common, i = [], 0
    while i < len(COMMON):
        if COMMON[i] in options:
            i += 2
            continue
        common.append(COMMON[i])
        i += 1
    return common + options


def run(nextword, name, options, steps, split, scratch):
    out = os.path.join(scratch, name)
    trained = os.path.join(out, "summary.json")  # a run trained before, not yet scored
    if not os.path.exists(trained):
        start = time.time()
        # A variant may set its own steps (one timed at equal wall-clock).
        own_steps = [] if "--steps" in options else ["--steps", str(steps)]
        train = subprocess.run([nextword, "train", os.path.join(split, "train.txt"), "-o", out,
                                "--checkpoint-every", "0", "--format", "json"] + own_steps +
                               with_common(options),
                               capture_output=True, text=True, check=False)
        if train.returncode != 0:
            sys.exit("%s: train failed: %s" % (name, train.stderr[-2000:]))
        summary = json.loads(train.stdout.splitlines()[-1])
        summary["wall_seconds"] = time.time() - start
        with open(trained, "w", encoding="utf-8") as f:
            json.dump(summary, f)
    with open(trained, encoding="utf-8") as f:
        summary = json.load(f)
    seconds = summary["wall_seconds"]
    score = subprocess.run([nextword, "eval", "--wikitext", os.path.join(split, "dev.tokens"),
                            "-m", out, "-f", "json"], capture_output=True, text=True, check=False)
    if score.returncode != 0:  # the model stays, and is scored when the script runs again
        print("%s: eval failed: %s" % (name, score.stderr[-2000:]), file=sys.stderr)
        return None
    return {"name": name, "parameters": summary["parameters"], "seconds": round(seconds),
            "tokens_per_s": summary["tokens_per_s"], "train_loss": summary["loss"],
            "eval": json.loads(score.stdout)}


def probe(nextword, args):
    """Each variant's training speed side by side: the machine is shared, so
    the variants alternate within each round and each is compared with the
    first variant's tokens/s of the same round (the median of the rounds)."""
    only = [v for v in VARIANTS if not args.only or v[0] in args.only.split(",")]
    speeds = {name: [] for name, _, _ in only}
    for _ in range(args.rounds):
        for name, _, options in only:
            out = os.path.join(args.scratch, "probe-" + name)
            train = subprocess.run([nextword, "train", os.path.join(args.split, "train.txt"), "-o",
                                    out, "--steps", str(args.probe), "--checkpoint-every", "0",
                                    "--format", "json"] + with_common(options),
                                   capture_output=True, text=True, check=True)
            speeds[name].append(json.loads(train.stdout.splitlines()[-1])["tokens_per_s"])
    first = only[0][0]
    print("| run | tokens/s (median) | against %s (median of the rounds) |" % first)
    print("| --- | --- | --- |")
    for name, _, _ in only:
        ratios = [a / b for a, b in zip(speeds[name], speeds[first])]
        print("| %s | %s | %.3f |" % (name, format(int(statistics.median(speeds[name])), ","),
                                      statistics.median(ratios)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword")
    parser.add_argument("--split", required=True)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--only", default="")
    parser.add_argument("--scratch", default="/tmp/nextword-english-ablations")
    parser.add_argument("--results", default="/tmp/nextword-english-ablations.jsonl")
    parser.add_argument("--probe", type=int, default=0,
                        help="instead: time this many steps of each variant in --rounds "
                             "alternating rounds, and print tokens/s against the first variant's")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.probe:
        probe(os.path.abspath(args.nextword), args)
        return
    done = {}
    if os.path.exists(args.results):
        with open(args.results, encoding="utf-8") as f:
            done = {r["name"]: r for r in map(json.loads, f)}
    only = set(filter(None, args.only.split(",")))
    for name, _, options in VARIANTS:
        if name in done or (only and name not in only):
            continue
        result = run(os.path.abspath(args.nextword), name, options, args.steps, args.split,
                     args.scratch)
        if result is None:
            continue
        with open(args.results, "a", encoding="utf-8") as f:
            f.write(json.dumps(result) + "\n")
        done[name] = result
        print("done %s: %s" % (name, json.dumps(result["eval"])), file=sys.stderr, flush=True)
    print("| run | change | parameters | perplexity | top-1 | top-5 | outside vocabulary | "
          "tokens/s | time |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, change, _ in VARIANTS:
        if name not in done:
            continue
        r, e = done[name], done[name]["eval"]
        print("| %s | %s | %s | %.2f | %.4f | %.4f | %.2f%% | %s | %d s |" % (
            name, change, format(r["parameters"], ","), e["perplexity"], e["top1"], e["top5"],
            100 * e["oov_rate"], format(int(r["tokens_per_s"]), ","), r["seconds"]))


if __name__ == "__main__":
    main()
