#!/usr/bin/env python3
"""nextword against llama2.c's run.c on llama2.c's own model, side by
side: tokens per second of greedy generation from "Once upon a time",
256 positions, single-threaded, the same output.

    python3 tests/bench/llama2c_speed.py RUN_C [--nextword build/nextword]
        [--models ../shared/models] [--rounds 9] [--steps 256] [--json OUT]

RUN_C is a run.c built outside this repository (it is not part of it):

    gcc -Ofast -march=native run.c -lm -o run   # from karpathy/llama2.c

run.c reports its own rate ("achieved tok/s": the positions after the first
over the time since the first forward pass). nextword's is taken the same
way from outside: the pieces after the first over the time of the whole
`generate` process less that of a process generating one piece (start-up,
load, the prompt), each the median of its rounds. The rounds alternate
(run.c, nextword 1, nextword N, ...) so that a shared machine's noise falls
on both. The two texts must be the same bytes; the script stops if not.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

PROMPT = "Once upon a time"
PROMPT_PIECES = 4  # " Once", " upon", " a", " time" after <s>


def timed(argv, env):
    start = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, check=True, env=env)
    return time.perf_counter() - start, run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run_c")
    parser.add_argument("--nextword", default="build/nextword")
    parser.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                        "..", "shared", "models"))
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=256)
    parser.add_argument("--json")
    args = parser.parse_args()
    stories = os.path.join(args.models, "stories260K")
    checkpoint, tokenizer = (os.path.join(stories, f) for f in ("stories260K.bin", "tok512.bin"))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    # run.c's steps forward passes (from <s> on) print the prompt's pieces and
    # then one new piece each: steps - PROMPT_PIECES of them.
    generated = args.steps - PROMPT_PIECES
    with tempfile.TemporaryDirectory(prefix="nextword-llama2c-") as tmp:
        model = os.path.join(tmp, "stories260K")
        subprocess.run([args.nextword, "convert", checkpoint, "--tokenizer", tokenizer, model],
                       check=True)
        run_c = [args.run_c, checkpoint, "-z", tokenizer, "-t", "0.0", "-n", str(args.steps),
                 "-i", PROMPT]
        ours = [args.nextword, "generate", "--greedy", "--model", model, PROMPT, "-n"]  # one thread
        rates, one, whole = [], [], []
        for _ in range(args.rounds):
            _, theirs = timed(run_c, env)
            rates.append(float(re.search(rb"achieved tok/s: ([0-9.]+)", theirs.stderr).group(1)))
            one.append(timed(ours + ["1"], env)[0])
            seconds, mine = timed(ours + [str(generated)], env)
            whole.append(seconds)
            if mine.stdout != theirs.stdout:
                sys.exit("the texts differ:\nrun.c:    %r\nnextword: %r" % (theirs.stdout[:200],
                                                                          mine.stdout[:200]))
    run_c_rate = statistics.median(rates)
    # The difference is generated - 1 one-piece steps (the prompt runs in both).
    nextword_rate = (generated - 1) / (statistics.median(whole) - statistics.median(one))
    result = {"steps": args.steps, "rounds": args.rounds, "run_c_tokens_per_s": run_c_rate,
              "nextword_tokens_per_s": nextword_rate, "ratio": nextword_rate / run_c_rate,
              "nextword_process_ms": 1000 * statistics.median(whole),
              "nextword_one_piece_ms": 1000 * statistics.median(one)}
    print("stories260K, greedy, %d positions, %d rounds (medians), the same text:" % (
        args.steps, args.rounds))
    print("  run.c     %8.0f tokens/s (its own timer)" % run_c_rate)
    print("  nextword  %8.0f tokens/s (whole process %.1f ms, less one piece's %.1f ms)" % (
        nextword_rate, result["nextword_process_ms"], result["nextword_one_piece_ms"]))
    print("  nextword / run.c = %.2f" % result["ratio"])
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
