#!/usr/bin/env python3
"""nextword against the PyTorch reference, side by side in one run, with the
ratios the speed issue asks for.

    /usr/bin/python3 tests/bench/compare_torch.py build/nextword [--model data/stories]
        [--threads 2] [--phrases 10000] [--rounds 5] [--json OUT]

Both programs read the same model directory (weights.safetensors when it is
there, as `--model DIR` does) and the same phrases, with the same thread
count. The PyTorch side is tests/reference/nextword_ref.py in float32 with
--top-k, printing what `nextword predict -f tsv` prints.

  1. One phrase as a process: start, load, predict, print; wall time, the
     median of alternating rounds (goals: at most 8 ms, and 100x PyTorch).
     With it, `nextword --version` (a start that does no work; goal: at most
     4 ms) and /bin/true (what starting any process costs here).
  2. A stream of phrases (random words of the vocabulary, 2 to 24 each, fixed
     seed): nextword as a whole process (start and load included) against
     PyTorch's prediction loop alone, batched 64 phrases a pass in-process
     (its import and load excluded); tokens/s.
  3. `nextword bench`: the batched forward at 64 phrases x 64 tokens as a
     fraction of the sgemm peak measured in the same run, and the JSON loader
     against nlohmann's DOM.
  4. Peak memory (max RSS) of nextword predicting, against 1.5x the float32
     size of the weights plus 30 MB.
"""
import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "reference", "nextword_ref.py")
TORCH_PYTHON = "/usr/bin/python3"


def read_lines(paths, count, min_words):
    lines = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if len(line.split()) >= min_words:
                    lines.append(line)
                    if len(lines) == count:
                        return lines
    return lines


def load_average():
    with open("/proc/loadavg", encoding="utf-8") as f:
        return [float(x) for x in f.read().split()[:3]]


def timed(command, stdin_path=None):
    """(wall seconds, stdout, stderr) of one run of `command`."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        p = subprocess.run(command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           check=False)
        seconds = time.perf_counter() - start
    finally:
        if stdin_path:
            stdin.close()
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(command), p.stderr.decode()))
    return seconds, p.stdout.decode(), p.stderr.decode()


def max_rss(command, stdin_path=None):
    """Peak resident memory of a run, in bytes, from GNU time's %M."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        r = subprocess.run(["/usr/bin/time", "-f", "%M", *command], stdin=stdin,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    finally:
        if stdin_path:
            stdin.close()
    return int(r.stderr.decode().strip().splitlines()[-1]) * 1024


def write_phrases(model, count, directory):
    """(phrases, path of a file with one a line): `count` phrases of 2 to 24
    random words of the model's vocabulary (no special tokens), fixed seed."""
    with open(os.path.join(model, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    words = [w for w in (vocab if isinstance(vocab, list) else list(vocab))
             if not (w.startswith("<") and w.endswith(">"))]
    rng = random.Random(1)
    phrases = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 24)))
               for _ in range(count)]
    path = os.path.join(directory, "phrases.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(phrases) + "\n")
    return phrases, path


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d cores, %s" % (model, os.cpu_count(), platform.platform())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword")
    parser.add_argument("--model", default=os.path.join(HERE, "..", "..", "data", "stories"))
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--phrases", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    nw, model, n = os.path.abspath(args.nextword), os.path.abspath(args.model), str(args.threads)
    info = json.loads(subprocess.run([nw, "info", "-m", model, "-f", "json"], check=True,
                                     stdout=subprocess.PIPE).stdout)
    float32_bytes = info["parameters"] * 4

    tmp = tempfile.TemporaryDirectory()
    phrases, phrase_file = write_phrases(model, args.phrases, tmp.name)

    ours_one = [nw, "predict", "-m", model, "-f", "tsv", "-k", "5", "-t", n, "once upon a"]
    torch_one = [TORCH_PYTHON, REFERENCE, "--model", model, "--dtype", "float32", "--top-k", "5",
                 "--threads", n, "once upon a"]
    ours_stream = [nw, "predict", "-m", model, "-f", "tsv", "-k", "5", "-q", "-t", n]
    torch_stream = [TORCH_PYTHON, REFERENCE, "--model", model, "--dtype", "float32", "--top-k",
                    "5", "--threads", n, "--batch", "64", "--timing"]

    # 1. One phrase, end to end, in alternating rounds.
    one_ours, one_torch, version, true = [], [], [], []
    for _ in range(args.rounds):
        for _ in range(4):
            one_ours.append(timed(ours_one)[0])
            version.append(timed([nw, "--version"])[0])
            true.append(timed(["/bin/true"])[0])
        seconds, out, _ = timed(torch_one)
        one_torch.append(seconds)
    if out.split("\t")[0] != timed(ours_one)[1].split("\t")[0]:
        sys.exit("the two disagree on 'once upon a'")

    # 2. The stream, in alternating rounds.
    stream_ours, stream_torch, tokens = [], [], 0
    for _ in range(max(2, args.rounds // 2)):
        seconds, ours_out, _ = timed(ours_stream, phrase_file)
        stream_ours.append(seconds)
        _, torch_out, err = timed(torch_stream, phrase_file)
        timing = json.loads(err.strip().splitlines()[-1])
        stream_torch.append(timing["seconds"])
        tokens = timing["tokens"]
    ours_lines, torch_lines = ours_out.splitlines(), torch_out.splitlines()
    same_top1 = sum(a.split("\t")[0] == b.split("\t")[0] for a, b in zip(ours_lines, torch_lines))

    # 3. nextword bench at 64 x 64, and the JSON loader.
    bench = json.loads(subprocess.run(
        [nw, "bench", "-m", model, "-t", n, "-b", "64", "-l", "64", "--seconds", "2", "-f", "json"],
        check=True, stdout=subprocess.PIPE).stdout)
    run64 = bench["runs"][0]

    # 4. Peak memory.
    rss_one = max_rss(ours_one)
    rss_stream = max_rss(ours_stream, phrase_file)
    budget = 1.5 * float32_bytes + 30e6

    results = {
        "machine": machine(),
        "threads": args.threads,
        "one_phrase": {"nextword_ms": 1e3 * statistics.median(one_ours),
                       "torch_ms": 1e3 * statistics.median(one_torch),
                       "version_ms": 1e3 * statistics.median(version),
                       "true_ms": 1e3 * statistics.median(true)},
        "stream": {"phrases": args.phrases, "tokens": tokens,
                   "nextword_tokens_per_s": tokens / statistics.median(stream_ours),
                   "torch_batched_tokens_per_s": tokens / statistics.median(stream_torch),
                   "same_top1": same_top1 / len(phrases)},
        "batch_64x64": {"gflops": run64["gflops"], "sgemm_peak_gflops": bench["sgemm_peak_gflops"],
                        "fraction_of_peak": run64["fraction_of_peak"]},
        "json_loader": bench["json_loader"],
        "memory": {"float32_weights_bytes": float32_bytes, "budget_bytes": budget,
                   "one_phrase_bytes": rss_one, "stream_bytes": rss_stream},
    }
    one, stream = results["one_phrase"], results["stream"]
    goals = [
        ("one phrase as a process vs PyTorch", one["torch_ms"] / one["nextword_ms"], 100.0, "x"),
        ("one phrase as a process, ms", one["nextword_ms"], -8.0, ""),
        ("nextword --version, ms", one["version_ms"], -4.0, ""),
        ("10k-phrase stream vs PyTorch batched", stream["nextword_tokens_per_s"] /
         stream["torch_batched_tokens_per_s"], 2.0, "x"),
        ("64 x 64 batch, fraction of sgemm peak", run64["fraction_of_peak"], 0.5, ""),
        ("JSON loader vs nlohmann DOM", bench["json_loader"]["speedup"], 4.0, "x"),
        ("peak memory / (1.5 x float32 + 30 MB)", max(rss_one, rss_stream) / budget, None, ""),
    ]
    print("machine   %s; %d threads" % (results["machine"], args.threads))
    print("one phrase: nextword %.1f ms, PyTorch %.0f ms (median of %d and %d runs); "
          "nextword --version %.1f ms, /bin/true %.1f ms" % (
              one["nextword_ms"], one["torch_ms"], len(one_ours), len(one_torch),
              one["version_ms"], one["true_ms"]))
    print("stream of %d phrases (%d tokens): nextword %.0f tokens/s (whole process), PyTorch "
          "batched %.0f tokens/s (prediction loop only); same top word on %.2f%% of phrases" % (
              args.phrases, tokens, stream["nextword_tokens_per_s"],
              stream["torch_batched_tokens_per_s"], 100 * stream["same_top1"]))
    print("batch 64 x 64: %.1f GFLOPS of %.1f sgemm peak" % (run64["gflops"],
                                                           bench["sgemm_peak_gflops"]))
    print("JSON loader: %.1f ms vs nlohmann DOM %.1f ms on %.1f MB" % (
        bench["json_loader"]["ours_ms"], bench["json_loader"]["nlohmann_dom_ms"],
        bench["json_loader"]["bytes"] / 1e6))
    print("peak memory: one phrase %.1f MB, stream %.1f MB; budget %.1f MB (float32 weights %.1f MB)"
          % (rss_one / 1e6, rss_stream / 1e6, budget / 1e6, float32_bytes / 1e6))
    print()
    print("%-42s %10s %8s  %s" % ("goal", "measured", "needed", ""))
    # A negative goal is a ceiling: at most -needed.
    for name, value, needed, unit in goals:
        if needed is None:
            ok, shown = value <= 1.0, "<= 1.00"
        elif needed < 0:
            ok, shown = value <= -needed, "<= %.2f" % -needed
        else:
            ok, shown = value >= needed, "%.2f%s" % (needed, unit)
        print("%-42s %9.2f%s %8s  %s" % (name, value, unit or " ", shown, "met" if ok else "NOT MET"))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
