#!/usr/bin/env python3
"""`nextword score` against a batched PyTorch scorer doing the same work, side
by side in one run (the speed issue: at least 100,000 scored words/s for the
whole process, and at least 5x PyTorch).

    /usr/bin/python3 tests/bench/compare_score_torch.py [build/nextword]
        [--model data/stories] [--corpus FILE ...] [--lines 5000] [--min-words 4]
        [--threads 1 2] [--rounds 5] [--torch-batch 64] [--quick] [--json OUT]

Input: the first --lines lines of at least --min-words words of the --corpus
files, in order (default: the Grimm household tales of /work/shared/corpus;
the text is only read, never copied). The lines go to both programs through
a pipe.

Each round, alternating the order round by round, for each thread count N:
  - nextword: the whole `nextword score -f tsv -q -t N` process (start, model
    load, tokenizing, scoring, printing); wall time;
  - PyTorch: this file's --torch-worker under Debian's /usr/bin/python3 with
    torch.set_num_threads(N): tokenize with tests/reference/nextword_ref.py,
    read weights.safetensors in float32, then score in batches of lines
    (sorted by length, right-padded, causal mask): every position's logits,
    log_softmax gathered at the targets (logit - logsumexp), rank = 1 + the
    non-special words with a higher logit (ties, which need two equal float
    logits, are not split by id: the check counts equal ranks). Lines longer
    than max_len + 1 tokens are scored exactly as `score` does: targets past
    max_len from windows of the max_len tokens before them (last position).
    Timed twice: the scoring loop alone (tokenizing included, import and load
    excluded) and the whole process (interpreter start, import, load too).
PyTorch runs with OPENBLAS_NUM_THREADS=N (Debian's torch multiplies with
OpenBLAS, which otherwise starts a thread per core whatever
set_num_threads says) and GOMP_SPINCOUNT=10000, the spin nextword sets for
itself (src/base/threading.cpp; --torch-default-spin: libgomp's default,
which on a busy machine made torch -t 2 several times slower than -t 1);
a value set in the environment wins.

Words/s = scored words (tokens after bos: the word count of each tsv line)
/ seconds. Reported: medians over rounds and the ratio nextword/PyTorch of
each round; CPU seconds too (steadier on a shared machine); the FLOPs
(forward_flops of src/transformer/transformer.cpp, with the classifier on
every position), the sgemm peak of `nextword bench` before and after the
rounds, and the ceilings they imply.

Before timing, one untimed PyTorch run is checked against `nextword score
-f json`: every line's logprob sum within --tolerance (default 1e-3), the
word counts equal, and the share of equal ranks; every timed run's output
is checked against it as well.

Prints a table and one line `RESULT {json}` with everything (also --json).
"""
import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from compare_torch import load_average, machine, read_lines  # noqa: E402  (shared)
REFERENCE_DIR = os.path.join(ROOT, "tests", "reference")
TORCH_PYTHON = "/usr/bin/python3"
DEFAULT_CORPUS = [os.path.normpath(os.path.join(ROOT, "..", "shared", "corpus",
                                                 "gutenberg-grimm-household-tales-hunt.txt"))]


# ---------------------------------------------------------------- PyTorch side

def torch_worker(args):
    """Reads lines from stdin, scores them, prints one tsv line per input line
    as `nextword score -f tsv` does (logprob, perplexity, oov, words) and the
    loop's timing as JSON on stderr. --dump FILE: also every word's logprob
    and rank, one JSON list per line."""
    import math

    import torch
    sys.path.insert(0, REFERENCE_DIR)
    import nextword_ref as ref

    torch.set_num_threads(args.threads)
    ref.DTYPE = torch.float32
    model_dir = args.model
    weights = os.path.join(model_dir, "weights.safetensors")
    if not os.path.exists(weights):
        weights = os.path.join(model_dir, "weights.json")
    model = ref.Model(os.path.join(model_dir, "vocab.json"), weights)
    c, W = model.config, model.tensors
    assert c["causal"], "the batched scorer needs a causal model"
    lines = sys.stdin.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()

    L = c["max_len"]
    C = W["embedding"] if c["tied_classifier"] else W["classifier"]
    bias = W.get("classifier_bias")
    unk_id = model.ids[c["unk_token"]]
    bos = c["bos_token"]
    specials = [unk_id] + ([model.ids[bos]] if bos else [])
    lowercase = c["tokenizer"]["lowercase"]
    split = c["tokenizer"]["split_punctuation"]

    def encode(text):
        """ids of every token (no truncation), bos first; unknown -> unk."""
        tokens = ref.tokenize(text, lowercase, split)
        ids = [model.ids[bos]] if bos else []
        for t in tokens:
            i = model.ids.get(t)
            ids.append(unk_id if i is None or t == c["unk_token"] or t == bos else i)
        return ids

    def score_rows(Z, targets):
        """(logprob [N] float64, rank [N]) of rows Z [N, d] predicting targets [N]."""
        logits = model.norm(Z, "final_norm") @ C.T
        if bias is not None:
            logits = logits + bias
        x = logits.gather(1, targets[:, None])
        # log_softmax at the targets: logit - logsumexp (the same values
        # without writing an [N, V] result)
        logprob = x.squeeze(1) - torch.logsumexp(logits, dim=-1)
        # rank: 1 + the words with a higher logit, specials taken back out
        # (ties, which need equal float logits, are not split by id here)
        before = torch.gt(logits, x).sum(1, dtype=torch.int32)
        before -= torch.gt(logits[:, specials], x).sum(1, dtype=torch.int32)
        return logprob.double(), before + 1

    start, start_cpu = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        streams = [encode(line) for line in lines]
        encoded = time.perf_counter()
        sums = torch.zeros(len(streams), dtype=torch.float64)
        counts = [max(len(s) - 1, 0) for s in streams]
        oov = [sum(i == unk_id for i in s[1:]) for s in streams]
        per_word = [[None] * n for n in counts] if args.dump else None
        # 1. Targets 1 .. min(n-1, L): one causal pass over each line's start,
        # lines sorted by length, args.batch lines a batch, right-padded.
        order = sorted((s for s in range(len(streams)) if counts[s] > 0),
                       key=lambda s: counts[s], reverse=True)
        padded_tokens = real_tokens = 0
        for b in range(0, len(order), args.batch):
            group = order[b:b + args.batch]
            T = min(counts[group[0]], L)
            ids = torch.zeros(len(group), T, dtype=torch.long)
            valid = torch.zeros(len(group), T, dtype=torch.bool)
            targets = torch.zeros(len(group), T, dtype=torch.long)
            for r, s in enumerate(group):
                n = min(counts[s], L)
                ids[r, :n] = torch.tensor(streams[s][:n])
                targets[r, :n] = torch.tensor(streams[s][1:n + 1])
                valid[r, :n] = True
            padded_tokens += ids.numel()
            X = model.residual_batch(ids)
            logprob, rank = score_rows(X[valid], targets[valid])
            line = torch.tensor(group)[:, None].expand(-1, T)[valid]
            sums.index_add_(0, line, logprob)
            real_tokens += logprob.numel()
            if per_word is not None:
                positions = torch.arange(T)[None, :].expand(len(group), -1)[valid]
                for s, t, lp, rk in zip(line.tolist(), positions.tolist(), logprob.tolist(),
                                        rank.tolist()):
                    per_word[s][t] = [lp, rk]
        # 2. Targets past L: each from the window of the L tokens before it;
        # all windows are L long, so no padding; only the last position counts.
        windows = [(s, t) for s in range(len(streams)) for t in range(L + 1, counts[s] + 1)]
        for b in range(0, len(windows), args.batch):
            group = windows[b:b + args.batch]
            ids = torch.tensor([streams[s][t - L:t] for s, t in group], dtype=torch.long)
            targets = torch.tensor([streams[s][t] for s, t in group], dtype=torch.long)
            padded_tokens += ids.numel()
            X = model.residual_batch(ids)
            logprob, rank = score_rows(X[:, -1], targets)
            sums.index_add_(0, torch.tensor([s for s, _ in group]), logprob)
            real_tokens += ids.numel()
            if per_word is not None:
                for (s, t), lp, rk in zip(group, logprob.tolist(), rank.tolist()):
                    per_word[s][t - 1] = [lp, rk]
        sums = sums.tolist()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    out = []
    for s, total in enumerate(sums):
        n = counts[s]
        ppl = "%.6f" % math.exp(-total / n) if n else "nan"
        out.append("%.6f\t%s\t%d\t%d" % (total, ppl, oov[s], n))
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as f:
            for words in per_word:
                f.write(json.dumps(words) + "\n")
    print(json.dumps({"lines": len(lines), "words": sum(counts), "seconds": seconds,
                      "cpu_seconds": cpu_seconds,
                      "tokenize_seconds": encoded - start, "forward_tokens": real_tokens,
                      "padded_tokens": padded_tokens, "windows": len(windows),
                      "threads": torch.get_num_threads(), "torch": torch.__version__}),
          file=sys.stderr)


# ----------------------------------------------------------------- the driver

CPU_SECONDS = []  # user + system seconds of each run() child, in order


def run(command, data, env=None):
    """(wall seconds, stdout, stderr) of one run with `data` piped to stdin;
    its CPU seconds (user + system) go to CPU_SECONDS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(command, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_SECONDS.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(command), p.stderr.decode()))
    return seconds, p.stdout.decode(), p.stderr.decode()


def score_flops(c, lengths):
    """Floating-point operations of scoring lines of `lengths` scored words as
    nextword's Scorer does: forward_flops (src/transformer/transformer.cpp)
    with the classifier (2 d V) on every position of the first pass, and a
    max_len window with one classifier row for each target past max_len."""
    d, L = c["d_model"], c["max_len"]
    qk, v = c["n_heads"] * c["d_k"], c["n_heads"] * c["d_v"]
    gated = c.get("activation") == "swiglu"  # W_gate too
    per_token = 2 * d * (2 * qk + v) + 2 * v * d + (6 if gated else 4) * d * c["d_ff"]
    classifier = 2 * d * c["vocab_size"]

    def layers(T):
        return c["n_layers"] * (T * per_token + 2 * T * T * (qk + v))

    total = 0.0
    for n in lengths:
        T = min(n, L)
        total += layers(T) + classifier * T
        total += max(n - L, 0) * (layers(L) + classifier)
    return total


def sgemm_peak(nextword, model, threads):
    """GFLOPS of `nextword bench`'s yardstick (a 1024^3 sgemm) on `threads`."""
    out = subprocess.run([nextword, "bench", "-m", model, "-t", str(threads), "-b", "1", "-l", "8",
                          "--seconds", "0.3", "--no-json-loader", "-f", "json"],
                         check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)["sgemm_peak_gflops"]


def tsv_rows(text):
    rows = []
    for line in text.splitlines():
        logprob, _, oov, words = line.split("\t")
        rows.append((float(logprob), int(oov), int(words)))
    return rows


def compare(ours, theirs, tolerance):
    """(worst |logprob difference| of a line, problems) between two tsv outputs."""
    if len(ours) != len(theirs):
        return float("inf"), ["%d lines against %d" % (len(ours), len(theirs))]
    worst, problems = 0.0, []
    for i, (a, b) in enumerate(zip(ours, theirs)):
        worst = max(worst, abs(a[0] - b[0]))
        if abs(a[0] - b[0]) > tolerance or a[1:] != b[1:]:
            problems.append("line %d: nextword %r, torch %r" % (i + 1, a, b))
    return worst, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword", nargs="?", default=os.path.join(ROOT, "build", "nextword"))
    parser.add_argument("--model", default=os.path.join(ROOT, "data", "stories"))
    parser.add_argument("--corpus", nargs="+", help="text files or globs (default: %s)"
                        % DEFAULT_CORPUS[0])
    parser.add_argument("--lines", type=int, help="lines to score (default 5000; quick 500)")
    parser.add_argument("--min-words", type=int, default=4)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, help="rounds (default 5; quick 2)")
    parser.add_argument("--torch-batch", type=int, default=64, help="lines per torch batch")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--quick", action="store_true", help="500 lines, 2 rounds")
    parser.add_argument("--torch-default-spin", action="store_true",
                        help="leave libgomp's spin-wait at its default for PyTorch (normally "
                        "GOMP_SPINCOUNT=10000, as nextword sets for itself)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.model = os.path.abspath(args.model)
    if args.torch_worker:
        args.threads = args.threads[0]
        args.batch = args.torch_batch
        return torch_worker(args)

    lines_wanted = args.lines or (500 if args.quick else 5000)
    rounds = args.rounds or (2 if args.quick else 5)
    paths = []
    for pattern in args.corpus or DEFAULT_CORPUS:
        paths.extend(sorted(glob.glob(pattern)) or [pattern])
    lines = read_lines(paths, lines_wanted, args.min_words)
    if len(lines) < lines_wanted:
        print("note: only %d lines of at least %d words" % (len(lines), args.min_words),
              file=sys.stderr)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    nw = os.path.abspath(args.nextword)

    def ours(n):
        return [nw, "score", "-m", args.model, "-f", "tsv", "-q", "-t", str(n)]

    # libgomp's threads spin 300,000 rounds after each parallel loop; on a
    # busy machine the spinning thread holds the core the other one needs.
    # nextword shortens the spin for itself (src/base/threading.cpp); PyTorch
    # gets the same setting, unless asked not to or the user set one.
    # Debian's torch multiplies with OpenBLAS (pthreads), which starts a
    # thread per core whatever torch.set_num_threads says: it gets N too.
    base_env = dict(os.environ)
    if not args.torch_default_spin and "GOMP_SPINCOUNT" not in base_env \
            and "OMP_WAIT_POLICY" not in base_env:
        base_env["GOMP_SPINCOUNT"] = "10000"
    spin = base_env.get("GOMP_SPINCOUNT", "default") + (
        ", OMP_WAIT_POLICY=" + base_env["OMP_WAIT_POLICY"] if "OMP_WAIT_POLICY" in base_env else "")

    def torch_env(n):
        env = dict(base_env)
        env.setdefault("OPENBLAS_NUM_THREADS", str(n))
        return env

    def theirs(n, *extra):
        return [TORCH_PYTHON, os.path.abspath(__file__), "--torch-worker", "--model", args.model,
                "--threads", str(n), "--torch-batch", str(args.torch_batch), *extra]

    load_before = load_average()
    # Untimed check: the same scores, word by word, against -f json.
    tmp = tempfile.TemporaryDirectory()
    dump = os.path.join(tmp.name, "words.jsonl")
    _, ref_out, ref_err = run(theirs(max(args.threads), "--dump", dump), data,
                              torch_env(max(args.threads)))
    reference = tsv_rows(ref_out)
    info = json.loads(ref_err.strip().splitlines()[-1])
    _, json_out, _ = run([nw, "score", "-m", args.model, "-f", "json", "-q"], data)
    records = [json.loads(l) for l in json_out.splitlines()]
    with open(dump, encoding="utf-8") as f:
        torch_words = [json.loads(l) for l in f]
    # Known words only: `score` prices a word outside the vocabulary with
    # src/predict/unknown_words.cpp's q as well, which the PyTorch loop leaves
    # out; the lines' sums are compared over the words both price alike.
    ours_rows, torch_rows = [], []
    same_rank = words = known = 0
    worst_word = 0.0
    for r, tw, ref in zip(records, torch_words, reference):
        ours_sum = torch_sum = 0.0
        for w, (lp, rank) in zip(r["words"], tw):
            words += 1
            if w.get("unknown"):
                continue
            known += 1
            ours_sum += w["logprob"]
            torch_sum += lp
            same_rank += w["rank"] == rank
            worst_word = max(worst_word, abs(w["logprob"] - lp))
        ours_rows.append((ours_sum, r["oov"], len(r["words"])))
        torch_rows.append((torch_sum, ref[1], ref[2]))
    worst, problems = compare(ours_rows, torch_rows, args.tolerance)
    if problems:
        sys.exit("PyTorch and nextword disagree (tolerance %g):\n  %s" % (
            args.tolerance, "\n  ".join(problems[:10])))
    if words != info["words"]:
        sys.exit("word counts differ: nextword %d, torch %d" % (words, info["words"]))

    config = json.loads(subprocess.run([nw, "info", "-m", args.model, "-f", "json"], check=True,
                                       stdout=subprocess.PIPE).stdout)["config"]
    flops = score_flops(config, [r[2] for r in reference])
    peaks = {n: [sgemm_peak(nw, args.model, n)] for n in args.threads}

    # Timed rounds, alternating the order.
    times = {n: {"nextword": [], "torch_loop": [], "torch_process": [], "nextword_cpu": [],
                 "torch_loop_cpu": [], "torch_cpu": []} for n in args.threads}
    per_round = []
    first = {}  # (engine, threads) -> its first timed output
    for k in range(rounds):
        row = {"round": k + 1}
        for n in (args.threads if k % 2 == 0 else list(reversed(args.threads))):
            engines = ["nextword", "torch"] if k % 2 == 0 else ["torch", "nextword"]
            for engine in engines:
                if engine == "nextword":
                    seconds, out, _ = run(ours(n), data)
                    times[n]["nextword"].append(seconds)
                    times[n]["nextword_cpu"].append(CPU_SECONDS[-1])
                else:
                    seconds, out, err = run(theirs(n), data, torch_env(n))
                    times[n]["torch_process"].append(seconds)
                    times[n]["torch_cpu"].append(CPU_SECONDS[-1])
                    timing = json.loads(err.strip().splitlines()[-1])
                    times[n]["torch_loop"].append(timing["seconds"])
                    times[n]["torch_loop_cpu"].append(timing["cpu_seconds"])
                # Each engine against its own first output with as many threads
                # (PyTorch's sums change with them): the same work each round.
                rows = tsv_rows(out)
                w, bad = compare(rows, first.setdefault((engine, n), rows), 0.0)
                if bad:
                    sys.exit("%s -t %d, round %d: output differs:\n  %s" % (
                        engine, n, k + 1, "\n  ".join(bad[:10])))
            t = times[n]
            row["t%d" % n] = {
                "nextword_words_per_s": words / t["nextword"][-1],
                "torch_loop_words_per_s": words / t["torch_loop"][-1],
                "torch_process_words_per_s": words / t["torch_process"][-1],
                "ratio_vs_torch_loop": t["torch_loop"][-1] / t["nextword"][-1],
                "ratio_vs_torch_process": t["torch_process"][-1] / t["nextword"][-1]}
        row["load"] = load_average()
        per_round.append(row)
    for n in args.threads:
        peaks[n].append(sgemm_peak(nw, args.model, n))
    load_after = load_average()

    summary = {}
    for n in args.threads:
        t = times[n]
        summary["t%d" % n] = {
            "nextword_seconds": statistics.median(t["nextword"]),
            "torch_loop_seconds": statistics.median(t["torch_loop"]),
            "torch_process_seconds": statistics.median(t["torch_process"]),
            "nextword_words_per_s": words / statistics.median(t["nextword"]),
            "torch_loop_words_per_s": words / statistics.median(t["torch_loop"]),
            "torch_process_words_per_s": words / statistics.median(t["torch_process"]),
            "ratio_vs_torch_loop_median": statistics.median(
                r["t%d" % n]["ratio_vs_torch_loop"] for r in per_round),
            "ratio_vs_torch_process_median": statistics.median(
                r["t%d" % n]["ratio_vs_torch_process"] for r in per_round),
            "nextword_cpu_seconds": statistics.median(t["nextword_cpu"]),
            "torch_loop_cpu_seconds": statistics.median(t["torch_loop_cpu"]),
            "torch_process_cpu_seconds": statistics.median(t["torch_cpu"]),
            # the same ratio in CPU seconds (less sensitive to a shared machine)
            "cpu_ratio_vs_torch_loop": statistics.median(t["torch_loop_cpu"]) /
            statistics.median(t["nextword_cpu"]),
            "nextword_gflops": flops / statistics.median(t["nextword"]) / 1e9,
            "sgemm_peak_gflops_before_after": peaks[n],
            # words/s if every FLOP ran at the sgemm peak and nothing else took time
            "ceiling_words_per_s": max(peaks[n]) * 1e9 / (flops / words),
            # nextword/torch-loop if nextword did nothing but its FLOPs at that peak
            "ceiling_ratio_vs_torch_loop": statistics.median(t["torch_loop"]) /
            (flops / (max(peaks[n]) * 1e9)),
        }
    results = {
        "machine": machine(), "nextword": nw, "model": args.model,
        "corpus": paths, "lines": len(lines), "min_words": args.min_words, "words": words,
        "unknown_words": sum(r[1] for r in reference), "rounds": rounds,
        "torch_batch_lines": args.torch_batch, "torch": info["torch"],
        "torch_gomp_spincount": spin,
        "torch_padded_tokens": info["padded_tokens"], "torch_windows": info["windows"],
        "flops": flops, "flops_per_word": flops / words,
        "check": {"worst_line_logprob_diff": worst, "worst_word_logprob_diff": worst_word,
                  "same_rank_fraction": same_rank / max(known, 1), "tolerance": args.tolerance},
        "load_average_before": load_before, "load_average_after": load_after,
        "summary": summary, "per_round": per_round,
        "goals": {"words_per_s": 100000, "ratio_vs_torch": 5},
    }

    print("machine  %s" % results["machine"])
    print("input    %d lines (>= %d words) of %s: %d scored words (%d unknown); "
          "torch: %d lines a batch, %d padded tokens, %d windows past max_len, "
          "GOMP_SPINCOUNT %s, OPENBLAS_NUM_THREADS = threads" % (
              len(lines), args.min_words, ", ".join(os.path.basename(p) for p in paths), words,
              results["unknown_words"], args.torch_batch, info["padded_tokens"], info["windows"],
              spin))
    print("check    line logprob sums over known words agree within %.2g (worst %.2g; worst word %.2g); "
          "ranks equal on %.4f%% of known words" % (args.tolerance, worst, worst_word,
                                             100 * same_rank / max(known, 1)))
    print("load     %s before, %s after (1/5/15 min; %d cores)" % (
        load_before, load_after, os.cpu_count()))
    print("flops    %.2f MFLOP a scored word (%.1f GFLOP in all); sgemm peak (1024^3, before/after) "
          "%s; words/s if all of it ran at that peak: %s" % (
              flops / words / 1e6, flops / 1e9,
              ", ".join("-t %d: %s GFLOPS" % (n, "/".join("%.0f" % g for g in peaks[n]))
                        for n in args.threads),
              ", ".join("-t %d: %.0f" % (n, summary["t%d" % n]["ceiling_words_per_s"])
                        for n in args.threads)))
    print("ceiling  nextword/torch-loop if nextword ran only its FLOPs at that peak: %s" % (
        ", ".join("-t %d: %.2fx" % (n, summary["t%d" % n]["ceiling_ratio_vs_torch_loop"])
                  for n in args.threads)))
    print()
    print("%-26s %7s %8s %8s %10s %13s  %s" % ("engine", "threads", "seconds", "cpu s",
                                             "words/s", "nextword/this", "per round"))
    for n in args.threads:
        s = summary["t%d" % n]
        print("%-26s %7d %8.3f %8.3f %10.0f %13s  (%.1f GFLOPS)" % (
            "nextword score (process)", n, s["nextword_seconds"], s["nextword_cpu_seconds"],
            s["nextword_words_per_s"], "", s["nextword_gflops"]))
        for name, key in (("torch (scoring loop)", "loop"), ("torch (process)", "process")):
            ratios = " ".join("%.2f" % r["t%d" % n]["ratio_vs_torch_" + key] for r in per_round)
            cpu = "%8.3f" % s["torch_%s_cpu_seconds" % key]
            print("%-26s %7d %8.3f %s %10.0f %12.2fx  %s" % (
                name, n, s["torch_%s_seconds" % key], cpu, s["torch_%s_words_per_s" % key],
                s["ratio_vs_torch_%s_median" % key], ratios))
    print("(medians of %d alternating rounds; ratio = median of the per-round wall-time ratios; "
          "in CPU seconds, nextword process vs torch loop: %s; goals: >= 100000 words/s, "
          ">= 5x torch)" % (rounds, ", ".join("-t %d %.2fx" % (n, summary["t%d" % n][
              "cpu_ratio_vs_torch_loop"]) for n in args.threads)))
    print("RESULT " + json.dumps(results, separators=(",", ":")))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
