#!/usr/bin/env python3
"""Throughput of `nextword predict` and `nextword score` over a big file, cut
into jobs by GNU parallel, side by side with one process, in one run.

    python3 tests/bench/parallel_throughput.py [build/nextword] [--model data/stories]
        [--corpus FILE ...] [--lines 20000] [--min-words 4] [--rounds 3]
        [--block -4] [--commands predict score] [--quick] [--json OUT]

Input: the first --lines lines of at least --min-words words of the --corpus
files, in order (default: the Grimm household tales of /work/shared/corpus),
written to a temporary file (the text is only read, never copied into the
project). For each command (`predict -f tsv -q`, `score -f tsv -q`), four
ways to run it over the whole file:
  - one process, --threads 1;
  - one process, --threads 2;
  - parallel --pipepart -a FILE --block B -k -j1 nextword ... --threads 1;
  - parallel --pipepart -a FILE --block B -k -j2 nextword ... --threads 1.
--block -4 (the default) cuts the file into 4 parts per job slot.

Each round runs every (command, way) once, the order reversed every other
round, so a change in the machine's load falls on all of them alike. Wall
time of the whole run (parallel and every process it starts included), CPU seconds
(user + system of the children), and the load average before and after
each round. Reported: medians over rounds of lines/s and words/s (words:
whitespace-separated words of the input, as wc -w counts them), the ratio
to one process with --threads 1, and whether every run's output was byte
for byte the output of one process with --threads 1.

Prints a table and one line `RESULT {json}` with everything (also --json).
"""
import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from compare_torch import load_average, read_lines  # noqa: E402  (shared with the other benches)
DEFAULT_CORPUS = [os.path.normpath(os.path.join(ROOT, "..", "shared", "corpus",
                                                 "gutenberg-grimm-household-tales-hunt.txt"))]
COMMANDS = {"predict": ["predict", "-f", "tsv", "-q"], "score": ["score", "-f", "tsv", "-q"]}
WAYS = ["process -t 1", "process -t 2", "parallel -j1", "parallel -j2"]


def command_line(nextword, model, command, way, path, block):
    job = [nextword, *COMMANDS[command], "-m", model]
    if way.startswith("process"):
        return job + ["-t", way[-1]], path
    jobs = way.split()[-1]
    return (["parallel", "--pipepart", "-a", path, "--block", block, "-k", jobs,
             shlex.join(job + ["-t", "1"])], None)


def run(argv, stdin_path, env, records):
    """(wall seconds, CPU seconds, stdout bytes). A line with no word the
    vocabulary knows (a German title in the Grimm book's contents) makes
    predict exit 4 and parallel count a failed job, with its error record in
    place: what must hold is one record per line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb") as stdin:
        p = subprocess.run(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.stdout.count(b"\n") != records:
        sys.exit("failed (%d): %s: %d records for %d lines\n%s" % (
            p.returncode, " ".join(argv), p.stdout.count(b"\n"), records, p.stderr.decode()))
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, p.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword", nargs="?", default=os.path.join(ROOT, "build", "nextword"))
    parser.add_argument("--model", default=os.path.join(ROOT, "data", "stories"))
    parser.add_argument("--corpus", nargs="+", default=DEFAULT_CORPUS)
    parser.add_argument("--lines", type=int, help="lines of input (default 20000; quick 2000)")
    parser.add_argument("--min-words", type=int, default=4)
    parser.add_argument("--rounds", type=int, help="rounds (default 3; quick 1)")
    parser.add_argument("--block", default="-4", help="parallel's --block (default -4: "
                        "4 parts per job slot)")
    parser.add_argument("--commands", nargs="+", choices=sorted(COMMANDS),
                        default=["predict", "score"])
    parser.add_argument("--quick", action="store_true", help="2000 lines, 1 round")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    lines_wanted = args.lines or (2000 if args.quick else 20000)
    rounds = args.rounds or (1 if args.quick else 3)
    if shutil.which("parallel") is None:
        sys.exit("GNU parallel is not installed (apt-get install parallel)")
    nextword, model = os.path.abspath(args.nextword), os.path.abspath(args.model)

    tmp = tempfile.mkdtemp(prefix="nextword-parallel-bench-")
    try:
        lines = read_lines(args.corpus, lines_wanted, args.min_words)
        path = os.path.join(tmp, "input.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
        words = sum(len(line.split()) for line in lines)
        # parallel with a HOME of its own: no citation notice, no user config.
        os.makedirs(os.path.join(tmp, "home", ".parallel"))
        open(os.path.join(tmp, "home", ".parallel", "will-cite"), "w").close()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARALLEL")}
        env.update(HOME=os.path.join(tmp, "home"), TMPDIR=tmp)

        runs = [(c, w) for c in args.commands for w in WAYS]
        wall = {r: [] for r in runs}
        cpu = {r: [] for r in runs}
        identical = {r: True for r in runs}
        # One untimed run of each command (it warms the page cache, too): the
        # output every timed run is compared with.
        reference = {}
        for command in args.commands:
            argv, stdin = command_line(nextword, model, command, "process -t 1", path, args.block)
            reference[command] = run(argv, stdin, env, len(lines))[2]
        loads = []
        for rnd in range(rounds):
            order = runs if rnd % 2 == 0 else runs[::-1]
            load_before = load_average()
            for command, way in order:
                argv, stdin = command_line(nextword, model, command, way, path, args.block)
                w, c, out = run(argv, stdin, env, len(lines))
                wall[(command, way)].append(w)
                cpu[(command, way)].append(c)
                identical[(command, way)] &= out == reference[command]
                print("round %d  %-8s %-13s %7.2f s  %7.2f CPU s" % (rnd + 1, command, way, w, c),
                      file=sys.stderr)
            loads.append({"before": load_before, "after": load_average()})

        results = {"date": time.strftime("%Y-%m-%d"), "nextword": nextword,
                   "corpus": args.corpus, "lines": len(lines), "words": words,
                   "bytes": os.path.getsize(path), "block": args.block, "rounds": rounds,
                   "cpus": os.cpu_count(), "load_average": loads, "runs": []}
        print("%d lines, %d words (%d bytes); parallel --pipepart --block %s; medians of %d "
              "rounds" % (len(lines), words, os.path.getsize(path), args.block, rounds))
        print("%-8s %-13s %9s %10s %11s %7s %8s  %s" % ("command", "way", "seconds", "lines/s",
                                                      "words/s", "CPU s", "vs -t 1", "identical"))
        for command in args.commands:
            base = statistics.median(wall[(command, "process -t 1")])
            for way in WAYS:
                s = statistics.median(wall[(command, way)])
                c = statistics.median(cpu[(command, way)])
                row = {"command": command, "way": way, "seconds": s, "cpu_seconds": c,
                       "lines_per_second": len(lines) / s, "words_per_second": words / s,
                       "ratio_to_one_thread": base / s,
                       "identical_to_one_process": identical[(command, way)],
                       "all_seconds": wall[(command, way)]}
                results["runs"].append(row)
                print("%-8s %-13s %9.2f %10.0f %11.0f %7.2f %7.2fx  %s" % (
                    command, way, s, row["lines_per_second"], row["words_per_second"], c,
                    row["ratio_to_one_thread"], "yes" if row["identical_to_one_process"] else "NO"))
        print("load average (1, 5, 15 min) before/after each round: " + "; ".join(
            "%s / %s" % (" ".join("%.2f" % x for x in l["before"]),
                         " ".join("%.2f" % x for x in l["after"])) for l in loads))
        print("RESULT " + json.dumps(results, separators=(",", ":")))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(results, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
