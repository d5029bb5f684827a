#!/usr/bin/env python3
"""Two builds side by side on both shipped models: the start-up figures, what a
person meets first (start-up, `complete`, one phrase, `generate`, `lsp`).

    python3 tests/bench/start_speed.py OLD_NEXTWORD NEW_NEXTWORD
        [--models english stories] [--rounds 7] [--json OUT]

OLD_NEXTWORD is a build of the commit before the work (it reads the same
data/ as the new one: pass it a checkout's build, or a copy whose models are
installed), NEW_NEXTWORD today's. Every figure is taken in alternating
rounds (old, new, old, new, ...), so that the noise of a shared machine
falls on both alike, and reported as old, new and new/old of the medians:

  - `nextword --version` as a process, ms;
  - `predict "the end of the Second World"` as a process, ms;
  - `complete "the end of the Second Wo"` as a process, ms, and its peak
    resident memory, MB (GNU time's %M);
  - `generate "the history of the" -n 200`, greedy, as a process: words/s
    (the load counted in);
  - `lsp`: process spawn -> initialize answered, ms; then didOpen of a
    short document and its first completion's round trip, ms;
  - `type` in a pseudo-terminal, the prefix typed at once: process spawn ->
    the first suggestion bar holding the prefix's best word, ms.

Each command must print the same thing on both builds (generate: the same
words); the script stops if not. The start-up goals are printed beside
the English model's figures.
"""
import argparse
import json
import os
import pty
import select
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from compare_builds import old_new_table  # noqa: E402
from compare_torch import machine  # noqa: E402
from lsp_client import LspClient  # noqa: E402

PHRASE = "the end of the Second World"
PREFIX = "the end of the Second Wo"
GENERATE_FROM = "the history of the"
GENERATED = 200

# The start-up goals for the English model: figure -> (bound, "max" or "min").
GOALS = {
    "--version ms": (2.0, "max"),
    "predict ms": (15.0, "max"),
    "complete ms": (50.0, "max"),
    "complete MB": (120.0, "max"),
    "generate words/s": (800.0, "min"),
    "lsp initialize ms": (100.0, "max"),
    "lsp first completion ms": (50.0, "max"),
    "type first suggestion ms": (100.0, "max"),
}


def run(argv):
    """(seconds, stdout) of one run; fails loudly on a non-zero exit."""
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit("%s: exit %d: %s" % (" ".join(argv), done.returncode,
                                              done.stderr.decode(errors="replace")[:500]))
    return seconds, done.stdout


def peak_mb(argv):
    done = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=True)
    return int(done.stderr.decode().strip().splitlines()[-1]) / 1024.0


def lsp_figures(nextword, model):
    """(initialize ms from spawn, first completion ms) of a fresh server."""
    start = time.perf_counter()
    client = LspClient([nextword, "lsp", "-m", model])
    try:
        client.initialize()
        initialized = time.perf_counter() - start
        doc = client.open("file:///start.txt", PREFIX)
        words = client.complete_words(doc)
        first = client.last_seconds
        if not words:
            raise SystemExit("%s lsp -m %s: no completion of %r" % (nextword, model, PREFIX))
        return initialized * 1000.0, first * 1000.0, words
    finally:
        client.close()


def type_first_suggestion(nextword, model, words):
    """ms from spawning `type` in a pseudo-terminal, PREFIX typed at once, to
    its screen showing words[0] (complete's first word), then Ctrl-C."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(nextword, [nextword, "type", "-m", model])
    os.write(fd, PREFIX.encode())
    screen = b""
    try:
        while words[0].encode() not in screen:
            if time.perf_counter() - start > 30 or not select.select([fd], [], [], 30)[0]:
                raise SystemExit("%s type -m %s: no %r on the screen: %r" %
                                 (nextword, model, words[0], screen[-300:]))
            screen += os.read(fd, 65536)
        return (time.perf_counter() - start) * 1000.0
    finally:
        os.write(fd, b"\x03")
        os.waitpid(pid, 0)
        os.close(fd)


def one_round(nextword, model, figures, outputs):
    m = ["-m", model]
    seconds, out = run([nextword, "--version"])
    figures.setdefault("--version ms", []).append(seconds * 1000.0)
    seconds, out = run([nextword, "predict"] + m + [PHRASE])
    figures.setdefault("predict ms", []).append(seconds * 1000.0)
    outputs["predict"] = out
    seconds, out = run([nextword, "complete"] + m + [PREFIX])
    figures.setdefault("complete ms", []).append(seconds * 1000.0)
    outputs["complete"] = out
    figures.setdefault("type first suggestion ms", []).append(
        type_first_suggestion(nextword, model, out.decode().split()))
    figures.setdefault("complete MB", []).append(peak_mb([nextword, "complete"] + m + [PREFIX]))
    seconds, out = run([nextword, "generate"] + m + ["-n", str(GENERATED), GENERATE_FROM])
    figures.setdefault("generate words/s", []).append(GENERATED / seconds)
    outputs["generate"] = out
    initialize, first, words = lsp_figures(nextword, model)
    figures.setdefault("lsp initialize ms", []).append(initialize)
    figures.setdefault("lsp first completion ms", []).append(first)
    outputs["lsp"] = words


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--models", nargs="+", default=["english", "stories"])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json")
    args = parser.parse_args()
    report = {"machine": machine(), "rounds": args.rounds, "models": {}}
    print(report["machine"])
    for model in args.models:
        path = model if os.path.isdir(model) else os.path.join(REPO, "data", model)
        figures = {"old": {}, "new": {}}
        for _ in range(args.rounds):
            outputs = {}
            for side in ("old", "new"):
                outputs[side] = {}
                one_round(getattr(args, side), path, figures[side], outputs[side])
            for what in outputs["old"]:
                if outputs["old"][what] != outputs["new"][what]:
                    raise SystemExit("%s: %s differs:\nold %r\nnew %r" %
                                     (model, what, outputs["old"][what], outputs["new"][what]))
        print("\n%s (%d rounds, alternating)" % (model, args.rounds))
        results = old_new_table(figures, 26, 1)
        if model == "english":
            for figure, (bound, kind) in GOALS.items():
                new = results[figure]["new"]
                met = new <= bound if kind == "max" else new >= bound
                print("  goal %-24s %s %g: %s (%.1f)" %
                      (figure, "<=" if kind == "max" else ">=", bound, "met" if met else "NOT met",
                       new))
        report["models"][model] = {
            "results": results,
            "values": figures,
        }
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
