#!/usr/bin/env python3
"""Issue 67's goals, nextword beside llama.cpp on the models of real shapes
(real_shapes.py: SmolLM2-135M's and Qwen2.5-0.5B's, random weights) in
each type, side by side in one run, 2 threads on both sides.

    python3 tests/bench/llama_cpp_goals.py --nextword build/nextword
        --llama-cpp LLAMA_CPP/build/bin --workdir DIR
        [--shapes smollm2-135m,qwen2.5-0.5b] [--types F16,Q8_0,Q4_0,Q4_K_M,Q5_K_M]
        [--parts next,perplexity,speed] [--rounds 3] [--models ../shared/models]
        [--corpus ../shared/corpus] [--json OUT]

The models are made in --workdir once and reused (real_shapes.py). llama.cpp
is only run, never in CI; the figures are the shared machine's. A file
nextword does not read (a type its kernels lack: exit 3) is measured on
llama.cpp's side alone, and the table says nextword refused it with
nextword's own line; once nextword reads the type, the same command
measures both sides.

For each file:
1. next: the top 10 next pieces after each of PROMPTS (8), `nextword
   predict -f json -k 10 -t 2` against llama-server's /completion with the
   same ids (n_probs 10, its default F16 key/value cache), as
   llama_cpp_types.py compares them: the same ten pieces in the same order
   (pieces within TOLERANCE of each other may change places), and the
   largest difference of their log-probabilities (goal: TOLERANCE). A
   random model's next pieces are nearly tied (its top 10 lie within a few
   hundredths), so a top 10 often holds 9 pieces of the other's, the tenth
   places within TOLERANCE of each other: compare_top counts that as the
   same list.
2. perplexity: llama_cpp_side_by_side.py's: 16 chunks of -c 256 of
   TinyStories, llama-perplexity's figure against `nextword score` on the
   same 2,032 tokens (goal: within 1%).
3. speed, in --rounds rounds that alternate the two programs (medians):
   - prompt processing: llama-bench's pp128 (`-p 128 -n 64 -r 1 -t 2`, the
     same call gives tg64) against nextword's pieces/s taken from outside,
     (128 - p) / (the time of `generate --greedy -n 1 -t 2` from a prompt
     of 128 pieces of TinyStories - that from SPEED_PROMPT's p pieces): the
     prompt in one pass, the logits of its last piece alone, as llama-bench
     computes them (`nextword bench -b 1 -l 128` times a pass too, but then
     types 200 words through `complete` from an empty text, which a
     byte-level BPE vocabulary without a BOS refuses: "the phrase has no
     words", exit 4);
   - generation: llama-bench's tg64 against nextword's pieces/s taken from
     outside, (pieces - 1) / (the time of `generate --greedy -n 64 -t 2` -
     that of `-n 1`), as llama_cpp_side_by_side.py takes it;
   - `nextword generate --greedy -n 64 -t 2 PROMPT` as a process against
     `llama-cli -t 2 --temp 0 -no-cnv -n 64 -c CTX` (with -s 1
     --no-warmup, llama_cpp_side_by_side.py's llama_cli), CTX the model's
     context length, which nextword's key/value cache holds;
   - `nextword predict -t 2 PROMPT` (whole words) against the same
     llama-cli with -n 1 (one piece);
   - the peak resident memory of those two generating processes (their
     ru_maxrss, from wait4), both with the same context CTX. A small
     launcher (LAUNCHER) starts and waits for each measured process: a
     process forked from this script would start with this script's
     resident pages counted in its peak (Linux counts the pages a fork
     copies), and this script holds a vocabulary of the models by then
     (532 MB reported for both programs, where /usr/bin/time gave 168 and
     355 MB).
The goals (GOALS) are ratios nextword / llama.cpp taken in one run;
`complete`'s keystroke latency is not measured here (`nextword bench`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_cpp_side_by_side as side  # noqa: E402
import llama_cpp_types as types  # noqa: E402
import real_shapes  # noqa: E402

PROMPTS = types.PROMPTS + ["The quick brown fox", "Water boils at", "She opened the door and"]
SPEED_PROMPT = "Once upon a time"
TOLERANCE = 5e-2  # log-probabilities, the bound against llama.cpp
GENERATED = 64
GOALS = {  # measure: (goal as text, whether a ratio nextword / llama.cpp meets it)
    "next": ("same top 10 (ties within %g swap), max abs. d log p <= %g" % (
        TOLERANCE, TOLERANCE), None),
    "perplexity": ("within 1%", lambda r: abs(r - 1) <= 0.01),
    "tg64": (">= 1.0x", lambda r: r >= 1.0),
    "pp128": (">= 0.8x", lambda r: r >= 0.8),
    "generate": ("<= 1.0x the time", lambda r: r <= 1.0),
    "predict": ("<= 1.5x the time", lambda r: r <= 1.5),
    "memory": ("<= 1.1x", lambda r: r <= 1.1),
}


# Starts argv[2:] and writes "seconds peak-KB wait-status" to the file
# descriptor argv[1] when it ends: a python3 -S of about 10 MB, so that its
# child's ru_maxrss is the child's own (see the docstring).
LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
os.write(int(sys.argv[1]), b"%r %d %d" % (time.perf_counter() - start, usage.ru_maxrss, status))
"""


def process(argv):
    """(wall seconds, peak resident bytes, exit code, stdout, stderr) of one
    run of argv, timed and its rusage read by wait4 in LAUNCHER."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        report_r, report_w = os.pipe()
        with os.fdopen(report_r, "rb") as report:
            try:
                p = subprocess.Popen(
                    [sys.executable, "-S", "-c", LAUNCHER, str(report_w)] + list(argv),
                    stdin=subprocess.DEVNULL, stdout=out, stderr=err, pass_fds=(report_w,))
            finally:
                os.close(report_w)
            fields = report.read().split()
        p.wait()
        out.seek(0)
        err.seek(0)
        if len(fields) != 3:
            sys.exit("the launcher failed (exit %d): %s\n%s" % (
                p.returncode, " ".join(argv), err.read().decode(errors="replace")[-3000:]))
        seconds, rss, status = float(fields[0]), int(fields[1]), int(fields[2])
        return seconds, rss * 1024, os.waitstatus_to_exitcode(status), out.read(), err.read()


def checked(argv):
    seconds, rss, code, out, err = process(argv)
    if code != 0:
        sys.exit("failed (exit %d): %s\n%s" % (code, " ".join(argv),
                                               err.decode(errors="replace")[-3000:]))
    return seconds, rss, out, err


def refusal(args, model):
    """None when nextword runs the file, else its one line of refusal (exit 3)."""
    _, _, code, _, err = process([args.nextword, "generate", "--greedy", "--model", model,
                                  "-n", "1", "a"])
    if code == 0:
        return None
    if code == 3:
        return err.decode(errors="replace").strip()
    sys.exit("nextword generate failed on %s (exit %d): %s" % (model, code, err.decode()))


def next_pieces(args, model):
    """compare_top's rows, one a prompt, against llama-server (default cache)."""
    ours = {prompt: types.ours_next(args, model, prompt) for prompt in PROMPTS}
    server = types.Server(args.llama_cpp, model)
    rows = []
    try:
        for prompt in PROMPTS:
            ids, top = ours[prompt]
            tokenized = server.post("/tokenize", {"content": prompt, "add_special": True})
            row = types.compare_top(top, types.theirs_next(server, ids), TOLERANCE)
            row.update({"prompt": prompt, "same_ids": tokenized["tokens"] == ids})
            rows.append(row)
    finally:
        server.close()
    return rows


def llama_bench(args, model):
    """(pp128, tg64) of one llama-bench run, pieces/s."""
    _, _, out, _ = checked([os.path.join(args.llama_cpp, "llama-bench"), "-m", model, "-t",
                            side.THREADS, "-p", "128", "-n", str(GENERATED), "-r", "1", "-o",
                            "json"])
    rates = {(r["n_prompt"], r["n_gen"]): r["avg_ts"] for r in json.loads(out)}
    return rates[(128, 0)], rates[(0, GENERATED)]


def long_prompt(args, model, pieces=128):
    """A text of TinyStories that nextword reads as exactly `pieces` pieces
    (from a word's start to the next word's)."""
    vocab = side.Vocab(model)
    ids = side.nextword_tokenize(args.nextword, model, side.corpus_text(args.corpus, 4000))
    for s in range(len(ids) - pieces):
        if vocab.starts_word(ids[s]) and vocab.starts_word(ids[s + pieces]):
            text = vocab.text(ids[s:s + pieces]).strip().decode()
            if len(side.nextword_tokenize(args.nextword, model, text.encode())) == pieces:
                return text
    sys.exit("no run of %d pieces in the text reads back as itself" % pieces)


def speed(args, model, context, runs_nextword):
    """Medians of --rounds alternating rounds; a dict of samples and medians."""
    nextword = [args.nextword]
    cli = lambda n: side.llama_cli(args.llama_cpp, model, SPEED_PROMPT, n,  # noqa: E731
                                   ("-c", str(context)))
    generate = lambda n: nextword + ["generate", "--greedy", "--model", model, "-t",  # noqa
                                     side.THREADS, "-n", str(n), "-f", "json", SPEED_PROMPT]
    f, pieces = {}, {}
    if runs_nextword:
        prompt = long_prompt(args, model)
        short = len(side.nextword_tokenize(args.nextword, model, SPEED_PROMPT.encode()))
    for _ in range(args.rounds):
        pp, tg = llama_bench(args, model)
        f.setdefault("lc_pp128", []).append(pp)
        f.setdefault("lc_tg64", []).append(tg)
        seconds, rss, _, err = checked(cli(GENERATED))
        f.setdefault("lc_generate_s", []).append(seconds)
        f.setdefault("lc_rss", []).append(rss)
        m = side.EVAL.search(err.decode())
        pieces["llama.cpp"] = int(m.group(2)) + 1 if m else None
        f.setdefault("lc_one_s", []).append(checked(cli(1))[0])
        if not runs_nextword:
            continue
        f.setdefault("nw_prompt128_s", []).append(checked(
            generate(1)[:-1] + [prompt])[0])
        seconds, rss, out, _ = checked(generate(GENERATED))
        f.setdefault("nw_generate_s", []).append(seconds)
        f.setdefault("nw_rss", []).append(rss)
        pieces["nextword"] = len(json.loads(out)["words"])
        f.setdefault("nw_gen1_s", []).append(checked(generate(1))[0])
        f.setdefault("nw_predict_s", []).append(checked(
            nextword + ["predict", "--model", model, "-t", side.THREADS, SPEED_PROMPT])[0])
    med = {k: statistics.median(v) for k, v in f.items()}
    if runs_nextword:
        spent = med["nw_generate_s"] - med["nw_gen1_s"]  # noise can make it <= 0
        med["nw_tg64"] = (pieces["nextword"] - 1) / spent if spent > 0 else float("nan")
        spent = med["nw_prompt128_s"] - med["nw_gen1_s"]
        med["nw_pp128"] = (128 - short) / spent if spent > 0 else float("nan")
    return {"samples": f, "medians": med, "pieces": pieces, "rounds": args.rounds,
            "context": context}


def goal_rows(entry):
    """(measure, goal, nextword, llama.cpp, ratio or None, met or None) of a file."""
    refused = entry.get("refused")
    rows = []

    def add(measure, ours, theirs, ratio=None, shown=None, met=None):
        goal, test = GOALS[measure]
        if test and ratio is not None and ratio == ratio:  # not NaN
            met = test(ratio)
        rows.append((measure, goal, "refused" if refused else ours, theirs,
                     shown if shown is not None else ("" if ratio is None else "%.2f" % ratio),
                     met))

    if "next" in entry:
        r = entry["next"]
        agree = sum(1 for x in r if x["agree"])
        add("next", "%d of %d the same; worst %.1e" % (agree, len(r), max(x["worst"] for x in r)),
            "", met=agree == len(r))
    elif refused:
        add("next", "", "")
    if "perplexity" in entry:
        p = entry["perplexity"]
        ours = p.get("nextword")
        add("perplexity", "%.1f" % ours if ours else "", "%.1f" % p["llama.cpp"],
            ours / p["llama.cpp"] if ours else None,
            "%+.3f%%" % (100 * (ours / p["llama.cpp"] - 1)) if ours else "")
    if "speed" in entry:
        m = entry["speed"]["medians"]
        nw = not refused

        def pair(measure, ours, theirs, scale, digits):
            add(measure, "%.*f" % (digits, scale * m[ours]) if nw else "",
                "%.*f" % (digits, scale * m[theirs]), m[ours] / m[theirs] if nw else None)

        pair("tg64", "nw_tg64", "lc_tg64", 1, 1)
        pair("pp128", "nw_pp128", "lc_pp128", 1, 1)
        pair("generate", "nw_generate_s", "lc_generate_s", 1000, 0)
        pair("predict", "nw_predict_s", "lc_one_s", 1000, 0)
        pair("memory", "nw_rss", "lc_rss", 1e-6, 0)
    return rows


UNITS = {"next": "top 10 next pieces, 8 prompts", "perplexity": "perplexity, 2,032 tokens",
         "tg64": "generation, pieces/s (tg64)", "pp128": "prompt, pieces/s (pp128)",
         "generate": "generate -n 64 as a process, ms", "predict":
         "predict one phrase vs llama-cli -n 1, ms", "memory": "peak resident memory, MB"}


def table(results):
    lines = ["| model | measure | goal | nextword | llama.cpp | nextword / llama.cpp | met |",
             "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for label, entry in results["models"].items():
        for measure, goal, ours, theirs, ratio, met in goal_rows(entry):
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                label, UNITS[measure], goal, ours, theirs, ratio,
                "" if met is None else "yes" if met else "no"))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    side.add_program_arguments(parser)
    parser.add_argument("--workdir", required=True, help="where the models are made and kept")
    parser.add_argument("--shapes", default=",".join(real_shapes.SHAPES))
    parser.add_argument("--types", default=",".join(real_shapes.TYPES))
    parser.add_argument("--parts", default="next,perplexity,speed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    args.nextword = os.path.abspath(args.nextword)
    args.llama_cpp = os.path.abspath(args.llama_cpp)
    args.ctx, args.chunks = 256, 16  # llama_cpp_side_by_side's perplexity
    shapes, kinds = args.shapes.split(","), args.types.split(",")
    parts = set(args.parts.split(","))
    if not set(shapes) <= set(real_shapes.SHAPES) or not set(kinds) <= set(real_shapes.TYPES) \
            or not parts <= {"next", "perplexity", "speed"}:
        sys.exit("--shapes: %s; --types: %s; --parts: next, perplexity, speed" % (
            ", ".join(real_shapes.SHAPES), ", ".join(real_shapes.TYPES)))
    os.makedirs(args.workdir, exist_ok=True)
    tmp = tempfile.TemporaryDirectory(prefix="nextword-goals-")
    version = checked([args.nextword, "--version"])[2].decode().strip()
    results = {"machine": side.machine(), "nextword": version, "llama_cpp": args.llama_cpp,
               "load_before": side.load_average(), "models": {}}
    print("machine    %s\nnextword   %s (%s); llama.cpp %s, -t %s\nload       %.2f %.2f %.2f" % (
        results["machine"], args.nextword, version, args.llama_cpp, side.THREADS,
        *results["load_before"]))
    vocab_dir = os.path.join(args.models, "gguf", "vocab")
    for shape in shapes:
        for kind in kinds:
            path = real_shapes.model_file(args.llama_cpp, args.workdir, shape, kind, vocab_dir)
            label = "%s %s" % (shape, kind)
            shares = real_shapes.type_shares(path)
            entry = results["models"].setdefault(label, {
                "file": path, "bytes": os.path.getsize(path), "types": shares,
                "refused": refusal(args, path)})
            print("\n== %s (%.1f MB): %s" % (label, entry["bytes"] / 1e6,
                                              real_shapes.describe_shares(shares)))
            if entry["refused"]:
                print("  nextword refuses it: %s" % entry["refused"])
            if "next" in parts and not entry["refused"]:
                entry["next"] = next_pieces(args, path)
                for row in entry["next"]:
                    print("  %-32r top 10 %s, %d in both, worst |d log p| %.2e%s" % (
                        row["prompt"], "same order" if row["same_order"] else
                        "reordered within %g" % TOLERANCE if row["agree"] else "DIFFERENT",
                        row["common"], row["worst"], "" if row["same_ids"] else ", IDS DIFFER"))
            if "perplexity" in parts:
                chunks = side.perplexity_chunks(args, path, tmp.name)
                theirs, seconds = side.llama_perplexity(args, path, chunks)
                p = entry["perplexity"] = {"llama.cpp": theirs, "llama_seconds": seconds}
                if not entry["refused"]:
                    p["nextword"], p["tokens"], p["nextword_seconds"] = \
                        side.nextword_perplexity(args, path, chunks)
                print("  perplexity: llama.cpp %.2f (%.1f s)%s" % (
                    theirs, seconds, ", nextword %.2f (%.1f s)" % (
                        p["nextword"], p["nextword_seconds"]) if "nextword" in p else ""))
            if "speed" in parts:
                context = real_shapes.SHAPES[shape]["context"]
                entry["load_before_speed"] = side.load_average()
                entry["speed"] = speed(args, path, context, not entry["refused"])
                print("  speed, %d rounds (load %.2f before): %s" % (
                    args.rounds, entry["load_before_speed"][0], ", ".join(
                        "%s %.4g" % item for item in entry["speed"]["medians"].items())))
    results["load_after"] = side.load_average()
    print("\nload %.2f %.2f %.2f after\n" % tuple(results["load_after"]))
    print("\n".join(table(results)))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
