#!/usr/bin/env python3
"""The default model's ablation table: short `nextword train` runs
at equal budgets, one change each, scored on one development split.

    python3 tools/ablations.py build/nextword [--steps 2500] [--only NAME,...]
        [--scratch DIR] [--corpus DIR] [--results FILE]

The split. The training text is tinystories-train-head.txt and the lines of
tinystories-train-continuation-lowercase.txt up to the first blank line from
line 21,500 on; the rest of that file (about 20,000 words, 2.6% of the
TinyStories text) is the development split, dev.txt. It lies inside the part
the old default model held out (its lines 20,503 on), so the old model has
never seen it either and is scored on it as the first row. Both go to the
scratch directory, never into the repository.

Every run trains with the same steps, batch tokens and seed, on 2 worker
threads (`--threads 2`), and is scored by `nextword eval dev.txt -f json`:
top-1, top-5, perplexity. A row's training time is its run's wall time on
this machine, whatever else ran then. Results are appended to --results as
JSON lines, and a variant already there is not run again, so the script can
be stopped and started. The table goes to stdout in Markdown.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "bench"))
from compare_presage import split_continuation  # noqa: E402  (tools/dev_split.sh)

# Today's default recipe (data/stories/train.sh before the modern options), the base row.
BASE = ["--vocab-size", "4096", "--d-model", "128", "--layers", "4", "--heads", "4",
        "--d-ff", "512", "--context", "64", "--batch", "32", "--warmup", "300",
        "--lr", "2e-3", "--min-lr", "1e-4", "--weight-decay", "0.1", "--dropout", "0.2",
        "--val-fraction", "0.02", "--seed", "1", "--threads", "2"]
# The Llama-style block: rotary positions, RMSNorm, SwiGLU (2/3 of the width,
# so about the same parameters as GELU's 512), no feed-forward biases.
LLAMA = ["--positional", "rope", "--norm", "rmsnorm", "--activation", "swiglu", "--d-ff", "344",
         "--no-ffn-bias"]

# name, what changes, options that replace or add to BASE's
VARIANTS = [
    ("base", "today's recipe: learned positions, layernorm, GELU, context 64", []),
    ("rope", "rotary positions instead of learned", ["--positional", "rope"]),
    ("rope+rmsnorm", "and RMSNorm", ["--positional", "rope", "--norm", "rmsnorm"]),
    ("llama", "and SwiGLU (d_ff 344), no feed-forward biases", LLAMA),
    ("llama-ctx128", "context 128, batch 16 (the same tokens a step)",
     LLAMA + ["--context", "128", "--batch", "16"]),
    ("llama-ctx256", "context 256, batch 8", LLAMA + ["--context", "256", "--batch", "8"]),
    ("llama-ctx256-docs", "context 256, batch 8, windows at story starts",
     LLAMA + ["--context", "256", "--batch", "8", "--document-windows"]),
    ("llama-ctx256-docs-shuffle", "and epochs: every story start once, a fresh order each",
     LLAMA + ["--context", "256", "--batch", "8", "--document-windows", "--shuffle"]),
    ("llama-wd0.5", "weight decay 0.5", LLAMA + ["--weight-decay", "0.5"]),
    ("llama-dropout0.1", "dropout 0.1", LLAMA + ["--dropout", "0.1"]),
    ("llama-d192", "d_model 192, 6 heads, d_ff 512", LLAMA + ["--d-model", "192", "--heads", "6",
                                                            "--d-ff", "512"]),
    ("llama-val0.005", "0.5% of the text held for validation instead of 2%",
     LLAMA + ["--val-fraction", "0.005"]),
    ("llama-bf16", "training's products in bf16 (a -DNEXTWORD_DNNL=ON build)",
     LLAMA + ["--bf16"]),
    # The teacher is the llama run itself (same vocabulary, as distillation
    # needs): a second model trained against a first.
    ("llama-distill", "distilled from the llama run (weight 0.5, temperature 2)",
     LLAMA + ["--teacher", "{scratch}/llama", "--teacher-weight", "0.5", "--temperature", "2"]),
]


def merged(base, changes):
    """BASE's options with a variant's: an option given again takes the
    variant's value (nextword refuses an option given twice)."""
    def pairs(options):
        out, i = [], 0
        while i < len(options):
            flag = options[i]
            value = options[i + 1] if i + 1 < len(options) and not options[i + 1].startswith("--") \
                else None
            out.append((flag, value))
            i += 1 if value is None else 2
        return out
    result = dict(pairs(base))
    for flag, value in pairs(changes):
        result[flag] = value
    return [x for flag, value in result.items() for x in ((flag,) if value is None else (flag, value))]


def split(corpus, scratch):
    """tools/dev_split.sh's split: the training text and dev.txt."""
    head = os.path.join(corpus, "tinystories-train-head.txt")
    split_continuation(corpus, scratch)
    dev = os.path.join(scratch, "dev.txt")
    os.replace(os.path.join(scratch, "heldout.txt"), dev)
    train = os.path.join(scratch, "continuation-train.txt")
    with open(train, encoding="utf-8") as f:
        cut = sum(1 for _ in f)
    return [head, train], dev, cut


def evaluate(nextword, model, dev):
    r = subprocess.run([nextword, "eval", dev, "-m", model, "-f", "json"], stdout=subprocess.PIPE,
                       check=True, text=True)
    return json.loads(r.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("--steps", type=int, default=2500)
    parser.add_argument("--only", help="comma-separated variant names")
    parser.add_argument("--corpus", default=os.path.join(REPO, "..", "shared", "corpus"))
    parser.add_argument("--scratch", default=os.path.join(tempfile.gettempdir(), "nextword-ablations"))
    parser.add_argument("--results", help="JSON lines (default: SCRATCH/results.jsonl)")
    args = parser.parse_args()
    nextword = os.path.abspath(args.nextword)
    os.makedirs(args.scratch, exist_ok=True)
    results_path = args.results or os.path.join(args.scratch, "results.jsonl")
    texts, dev, cut = split(args.corpus, args.scratch)
    done = {}
    if os.path.exists(results_path):
        with open(results_path, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                done[(row["name"], row["steps"])] = row
    wanted = args.only.split(",") if args.only else [v[0] for v in VARIANTS]
    print("split: continuation lines 1..%d trained on, the rest is dev.txt; %d steps a run"
          % (cut, args.steps), file=sys.stderr)
    if ("old-default", 0) not in done:
        # The default model before the modern options, kept as a fixture since data/stories was replaced.
        e = evaluate(nextword, os.path.join(REPO, "tests", "fixtures", "previous-default"), dev)
        row = {"name": "old-default", "steps": 0, "what": "the previous default model (50 min)",
               "eval": e, "seconds": 3016}
        done[("old-default", 0)] = row
        with open(results_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
    for name, what, options in VARIANTS:
        if name not in wanted or (name, args.steps) in done:
            continue
        out = os.path.join(args.scratch, name)
        options = [o.replace("{scratch}", args.scratch) for o in options]
        command = [nextword, "train", *texts, "-o", out, *merged(BASE, options), "--steps",
                   str(args.steps), "--eval-every", "0", "--checkpoint-every", "0", "-f", "json"]
        print("running %s: %s" % (name, " ".join(command[1:])), file=sys.stderr)
        started = time.time()
        r = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           check=True)
        seconds = time.time() - started
        summary = json.loads(r.stdout)
        row = {"name": name, "steps": args.steps, "what": what, "options": options,
               "summary": summary, "eval": evaluate(nextword, out, dev), "seconds": seconds}
        done[(name, args.steps)] = row
        with open(results_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print("%s: %s" % (name, json.dumps(row["eval"])), file=sys.stderr)
    print("| run | change | steps | parameters | top-1 | top-5 | perplexity | training time |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in done.values():
        e = row["eval"]
        params = row.get("summary", {}).get("parameters", 1323776)
        print("| %s | %s | %s | %s | %.4f | %.4f | %.2f | %.0f s |" % (
            row["name"], row["what"], row["steps"] or "14,500", "{:,}".format(params),
            e["top1"], e["top5"], e["perplexity"], row["seconds"]))


if __name__ == "__main__":
    main()
