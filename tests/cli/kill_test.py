#!/usr/bin/env python3
"""Training survives kill -9: at random moments, many times.

    python3 tests/cli/kill_test.py build/nextword [--trials 40]

A small model is trained with a checkpoint after every step, so most of the
run is spent writing files and many kills land in the middle of a write.
After each kill:
  - whatever model is on disk loads (`nextword info` and `predict` succeed);
  - if a checkpoint survived, `--resume` (itself killed at a random moment
    in every third trial, then resumed again) finishes with weights.json
    byte-identical to an uninterrupted run's.
Prints the counts at the end.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

STORY = ("Once upon a time there was a little cat. The cat liked to play in the sun. "
         "One day the cat saw a big dog. The dog was kind and they played all day.\n")
OPTIONS = ["--vocab-size", "40", "--d-model", "16", "--layers", "1", "--heads", "2",
           "--context", "16", "--batch", "8", "--warmup", "10", "--lr", "1e-2", "--dropout", "0",
           "--val-fraction", "0.1", "--threads", "1", "--steps", "120", "--checkpoint-every", "1",
           "--eval-every", "40", "-f", "json"]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def killed_after(command, seconds):
    """Runs command and kills it with SIGKILL after `seconds`; True if it was still running."""
    p = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        p.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        p.wait()
        return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    nw = os.path.abspath(args.nextword)
    tmp = tempfile.mkdtemp()
    rng = random.Random(7)
    failures, kills, resumes, mid_resume_kills, loads, mid_write = [], 0, 0, 0, 0, 0
    try:
        text = os.path.join(tmp, "stories.txt")
        with open(text, "w", encoding="utf-8") as f:
            f.write((STORY + "\n<|endoftext|>\n") * 40)
        whole = os.path.join(tmp, "whole")
        start = time.monotonic()
        subprocess.run([nw, "train", text, "-o", whole, *OPTIONS], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        duration = time.monotonic() - start
        expected = read(os.path.join(whole, "weights.json"))

        for trial in range(args.trials):
            out = os.path.join(tmp, "run%d" % trial)
            if killed_after([nw, "train", text, "-o", out, *OPTIONS],
                            rng.uniform(0.02, 0.95) * duration):
                kills += 1
            if os.path.isdir(out) and any(".tmp." in name for name in os.listdir(out)):
                mid_write += 1  # the kill landed while a file was being written
            if os.path.exists(os.path.join(out, "weights.json")):
                for command in (["info", "-m", out], ["predict", "-m", out, "once upon a"]):
                    r = subprocess.run([nw, *command], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, check=False)
                    if r.returncode != 0:
                        failures.append("trial %d: %s: %s" % (trial, command[0], r.stderr.strip()))
                loads += 1
            if not os.path.exists(os.path.join(out, "checkpoint.json")):
                continue
            resume = [nw, "train", "--resume", out]
            if trial % 3 == 0 and killed_after(resume, rng.uniform(0.05, 0.5) * duration):
                mid_resume_kills += 1
            r = subprocess.run(resume, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               check=False)
            if r.returncode != 0:
                failures.append("trial %d: resume failed: %s" % (trial, r.stderr.strip()[-300:]))
            elif read(os.path.join(out, "weights.json")) != expected:
                failures.append("trial %d: resumed weights differ from the uninterrupted run" % trial)
            elif any(".tmp." in name for name in os.listdir(out)):
                failures.append("trial %d: temporary files left after the resume" % trial)
            else:
                resumes += 1
            shutil.rmtree(out)
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print("FAIL " + f)
    print("%d trials: %d killed during training (%d of them in the middle of writing a file), "
          "%d more during a resume; %d left a model on disk, which loaded; %d resumed to "
          "weights identical to the uninterrupted run; %d failures" % (
              args.trials, kills, mid_write, mid_resume_kills, loads, resumes, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
