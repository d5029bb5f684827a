#!/usr/bin/env python3
"""Training in float32 against bf16 products (train --bf16, a build with
-DNEXTWORD_DNNL=ON), side by side on the default model's shape and
TinyStories: tokens/s in alternating rounds, then a loss curve of each over
--curve-steps steps with the same seed, batches and dropout masks.

    python3 tests/bench/bf16_speed.py build/nextword [--corpus TEXT] [--rounds 3]
        [--steps 30] [--curve-steps 1000] [--threads 2] [--old OLD_NEXTWORD]

With --old, a build from before training's own worker threads (OpenBLAS's threads) runs the float32
speed rounds too, the base of "today's tokens/s".
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "corpus",
                                               "tinystories-train-head.txt"))
SHAPE = ["--vocab-size", "4096", "--d-model", "128", "--layers", "4", "--heads", "4",
         "--d-ff", "512", "--context", "64", "--batch", "32", "--dropout", "0.1",
         "--val-fraction", "0.02", "--checkpoint-every", "0", "-f", "json"]


def train(binary, corpus, out, steps, threads, extra, log_every):
    command = [binary, "train", corpus, "-o", out, *SHAPE, "--steps", str(steps), "--threads",
               str(threads), "--log-every", str(log_every), *extra]
    r = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       check=True)
    reports = [json.loads(line) for line in r.stderr.splitlines() if line.startswith("{")]
    shutil.rmtree(out, ignore_errors=True)
    return reports, json.loads(r.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--curve-steps", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--old", help="a build from before training's own worker threads")
    args = parser.parse_args()
    nextword = os.path.abspath(args.nextword)
    scratch = tempfile.mkdtemp()
    runs = [("float32", nextword, []), ("bf16", nextword, ["--bf16"])]
    if args.old:
        runs.append(("float32, the build before", os.path.abspath(args.old), []))
    speeds = {name: [] for name, _, _ in runs}
    try:
        for round_ in range(args.rounds):
            for name, binary, extra in (runs if round_ % 2 == 0 else runs[::-1]):
                reports, _ = train(binary, args.corpus, os.path.join(scratch, "m"), args.steps,
                                   args.threads, extra + ["--eval-every", "0"], 1)
                speeds[name].append(reports[-1]["tokens_per_s"])
                print("round %d  %-28s %8.0f tokens/s" % (round_ + 1, name, speeds[name][-1]),
                      file=sys.stderr)
        print("load average %.2f %.2f %.2f" % os.getloadavg())
        base = statistics.median(speeds["float32"])
        print("%d steps of 2,048 tokens, %d threads, medians of %d alternating rounds:"
              % (args.steps, args.threads, args.rounds))
        for name, _, _ in runs:
            median = statistics.median(speeds[name])
            print("  %-28s %8.0f tokens/s  %.2fx float32  (rounds: %s)" % (
                name, median, median / base, ", ".join("%.0f" % s for s in speeds[name])))
        if args.curve_steps > 0:
            every = max(args.curve_steps // 10, 1)
            curves = {}
            for name, binary, extra in runs[:2]:
                reports, summary = train(binary, args.corpus, os.path.join(scratch, "m"),
                                         args.curve_steps, args.threads,
                                         extra + ["--eval-every", str(every)], every)
                curves[name] = (reports, summary)
            print("\nloss curve, %d steps (training loss: mean since the last report; "
                  "val: the held-out 2%%)" % args.curve_steps)
            print("| step | float32 loss | bf16 loss | float32 val | bf16 val |")
            print("| --- | --- | --- | --- | --- |")
            for a, b in zip(curves["float32"][0], curves["bf16"][0]):
                print("| %d | %.4f | %.4f | %s | %s |" % (
                    a["step"], a["loss"], b["loss"],
                    "%.4f" % a["val_loss"] if "val_loss" in a else "",
                    "%.4f" % b["val_loss"] if "val_loss" in b else ""))
            f32, b16 = curves["float32"][1], curves["bf16"][1]
            print("final: float32 loss %.4f val %.4f; bf16 loss %.4f val %.4f; "
                  "val difference %+.4f" % (f32["loss"], f32["val_loss"], b16["loss"],
                                           b16["val_loss"], b16["val_loss"] - f32["val_loss"]))
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
