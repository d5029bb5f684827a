#!/usr/bin/env python3
"""Keystroke savings through the Language Server Protocol: TEXT is typed into
`nextword lsp` with tests/bench/ksr_protocol.py's protocol (the one
`nextword eval --ksr` implements), and the counts are compared with
`nextword eval --ksr` run with the same options on the same text.

    python3 tests/bench/lsp_ksr.py NEXTWORD MODEL_DIR TEXT [-k 6] [--no-repeat]
        [--learn] [--words N] [--encoding utf-16|utf-8] [--json OUT|-]

TEXT is a file; --words N types only its start up to its N-th word
(compare_presage.first_words, the cut tests/bench/compare_presage.py makes),
written to a temporary file that `eval --ksr` reads too. With `-` as TEXT,
the default text: the first --words (default 2000) words of the TinyStories
development split (tools/dev_split.sh on
../shared/corpus/tinystories-train-continuation-lowercase.txt, heldout.txt).

Each query of the protocol, `suggest(typed)`, becomes one incremental
`textDocument/didChange` turning the document's text into `typed` (text
appended at the end, or replaced from the first differing character;
positions in UTF-16 code units unless --encoding utf-8 is offered), then a
`textDocument/completion` at the end of the document, whose items' newText
are the suggestions. Each completion's textEdit is checked: its range ends at
the cursor and replaces text that ends the document.

Exit status: 0 when ki, ks and kn are identical; 1 when KSR differs by more
than 0.001 (0.1 point) or the counts differ (a mismatch within 0.1 point is
reported as such, exit 0 unless --strict); 2 when the server breaks the
protocol or eval fails. Empty arguments are ignored (ctest passes them).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ksr_protocol  # noqa: E402
from compare_presage import first_words, CONTINUATION_FILE, SPLIT  # noqa: E402
from lsp_client import (ENCODINGS, LspClient, ProtocolError, bench_argv,  # noqa: E402
                        bench_parser, units)

CORPUS = os.path.join(REPO, "..", "shared", "corpus")


def log(msg):
    print("[lsp_ksr] " + msg, file=sys.stderr, flush=True)


def option_args(k, no_repeat, learn):
    return ["-k", str(k)] + (["--no-repeat"] if no_repeat else []) + (["--learn"] if learn else [])


def dev_text(scratch, corpus=CORPUS):
    """The development split (heldout.txt) written into scratch, or None
    without the corpus."""
    src = os.path.join(corpus, CONTINUATION_FILE)
    if not os.path.exists(src):
        return None
    subprocess.run([SPLIT, src, scratch], check=True)
    return os.path.join(scratch, "heldout.txt")


class EditChecker:
    """Checks each completion's items: at most k, textEdit ranges that end at
    the cursor and start on its line no later than it, the same range for
    every item, filterText == newText. Problems are collected (the first few
    kept verbatim)."""

    def __init__(self, k):
        self.k = k
        self.problems = []
        self.count = 0

    def __call__(self, doc, pos, result):
        items = result.get("items", [])
        bad = []
        if len(items) > self.k:
            bad.append("%d items, more than k=%d" % (len(items), self.k))
        if items and result.get("isIncomplete") is not True:
            bad.append("isIncomplete is not true")
        ranges = set()
        for it in items:
            te = it.get("textEdit")
            if te is None:
                bad.append("an item without textEdit: %r" % it)
                continue
            r = te["range"]
            if r["end"] != pos:
                bad.append("range ends at %r, the cursor is at %r" % (r["end"], pos))
            if r["start"]["line"] != pos["line"] or r["start"]["character"] > pos["character"]:
                bad.append("range starts at %r, cursor %r" % (r["start"], pos))
            if it.get("filterText", te["newText"]) != te["newText"]:
                bad.append("filterText %r != newText %r" % (it.get("filterText"), te["newText"]))
            ranges.add(json.dumps(r, sort_keys=True))
        if len(ranges) > 1:
            bad.append("items with different ranges: %s" % sorted(ranges))
        if items and not bad:
            # The replaced text: the end of the document, as many units back as
            # the range is long.
            r = items[0]["textEdit"]["range"]
            want = pos["character"] - r["start"]["character"]
            line = doc.text[max(doc.text.rfind("\n"), doc.text.rfind("\r")) + 1:]
            got = 0
            i = len(line)
            while got < want and i > 0:
                i -= 1
                got += units(line[i], doc.client.encoding)
            if got != want:
                bad.append("range start %r splits a character of %r" % (r["start"], line[-20:]))
            elif any(ch in ksr_protocol.WHITESPACE for ch in line[i:]):
                bad.append("the range covers whitespace: %r" % line[i:])
        self.count += 1
        if bad:
            if len(self.problems) < 20:
                self.problems.append({"text_end": doc.text[-40:], "position": pos, "problems": bad,
                                      "items": [it.get("textEdit") for it in items]})
            else:
                self.problems.append(None)


def run_lsp(nextword, model, text, k, no_repeat, learn, encoding="utf-16", timeout=60.0,
            progress=None):
    """Types text through `nextword lsp`; returns the protocol's counts plus
    latency and the textEdit checks."""
    argv = [nextword, "lsp", "-m", model] + option_args(k, no_repeat, learn)
    checker = EditChecker(k)
    latencies = []
    with LspClient(argv, encoding=encoding, timeout=timeout) as client:
        client.initialize()
        doc = client.open("file:///typed.txt", "")

        def suggest(typed):
            doc.edit_to(typed)
            words = client.complete_words(doc, checker)
            latencies.append(client.last_seconds)
            return words

        r = ksr_protocol.simulate(text, suggest, k, progress=progress, progress_every=2000)
        # The server's text ends where the client's does: a completion past
        # the end of the last line (clamped to it, LSP 3.17) answers a range
        # ending at the client's end position. After simulate, so that it
        # cannot change the counts.
        end = doc.end_position()
        probe = client.completion(doc, {"line": end["line"], "character": end["character"] + 1000})
        ends = [it["textEdit"]["range"]["end"] for it in probe["items"] if "textEdit" in it]
        r["end_position"] = end
        r["server_end_positions"] = ends[:1]
        r["end_matches"] = all(e == end for e in ends) if ends else None
        exit_status = client.close()
        stderr = client.stderr_text()
    r.update(ksr_protocol.latency_summary(latencies))
    r["argv"] = argv
    r["encoding"] = encoding
    r["exit_status"] = exit_status
    r["edit_checks"] = checker.count
    r["edit_problems"] = [p for p in checker.problems if p is not None]
    r["edit_problem_count"] = len(checker.problems)
    r["server_stderr"] = stderr[-2000:]
    return r


def run_eval(nextword, model, path, k, no_repeat, learn, timeout=3600):
    argv = [nextword, "eval", "-m", model, "--ksr", "-f", "json"] + option_args(k, no_repeat, learn) + [path]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(argv), p.returncode, p.stderr[-2000:]))
    out = json.loads(p.stdout)
    out["argv"] = argv
    return out


def compare(nextword, model, path, text, k, no_repeat, learn, encoding="utf-16", progress=None):
    """Both runs and their comparison: dict(lsp, eval, identical, ksr_diff)."""
    t0 = time.perf_counter()
    lsp = run_lsp(nextword, model, text, k, no_repeat, learn, encoding, progress=progress)
    lsp_seconds = time.perf_counter() - t0
    ev = run_eval(nextword, model, path, k, no_repeat, learn)
    identical = all(lsp[key] == ev[key] for key in ("ki", "ks", "kn"))
    return {"k": k, "no_repeat": no_repeat, "learn": learn, "encoding": encoding,
            "lsp": lsp, "eval": ev, "identical": identical,
            "ksr_diff": abs(lsp["ksr"] - ev["ksr"]), "lsp_seconds": lsp_seconds}


def describe(c):
    name = "k %d%s%s, %s" % (c["k"], ", --no-repeat" if c["no_repeat"] else "",
                             ", --learn" if c["learn"] else "", c["encoding"])
    lines = ["| %s | through lsp | %.2f %% | %d | %d | %d | %d | %.3f / %.3f ms |"
             % (name, 100 * c["lsp"]["ksr"], c["lsp"]["ki"], c["lsp"]["ks"], c["lsp"]["kn"],
                c["lsp"]["queries"], c["lsp"]["median_ms"] or 0, c["lsp"]["p90_ms"] or 0),
             "| %s | eval --ksr | %.2f %% | %d | %d | %d | %d | %.3f / %.3f ms |"
             % (name, 100 * c["eval"]["ksr"], c["eval"]["ki"], c["eval"]["ks"], c["eval"]["kn"],
                c["eval"]["queries"], c["eval"]["keystroke_ms"]["median"],
                c["eval"]["keystroke_ms"]["p90"])]
    return lines


HEADER = ["| options | typed | KSR | ki | ks | kn | queries | median / p90 per query |",
          "|---|---|---:|---:|---:|---:|---:|---:|"]


def main(argv=None):
    argv = bench_argv(argv)
    ap = bench_parser(__doc__)
    ap.add_argument("text", help="text file to type ('-': the development split)")
    ap.add_argument("-k", "--k", type=int, default=6)
    ap.add_argument("--no-repeat", action="store_true")
    ap.add_argument("--learn", action="store_true")
    ap.add_argument("--words", type=int, help="type only the first N words")
    ap.add_argument("--encoding", default="utf-16", choices=ENCODINGS,
                    help="position encoding offered at initialize (default utf-16)")
    ap.add_argument("--strict", action="store_true", help="exit 1 on any count difference")
    ap.add_argument("--json", metavar="OUT", help="write the comparison as JSON ('-': stdout)")
    args = ap.parse_args(argv)

    scratch = tempfile.mkdtemp(prefix="lsp_ksr.")
    try:
        source = args.text
        if source == "-":
            source = dev_text(scratch)
            if source is None:
                log("no corpus at %s: give a text file" % CORPUS)
                return 2
            if args.words is None:
                args.words = 2000
        with open(source, encoding="utf-8", newline="") as f:
            text = f.read()
        path = os.path.abspath(source)
        if args.words is not None:
            text = first_words(text, args.words)
            path = os.path.join(scratch, "typed-%d.txt" % args.words)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        log("typing %s (%s): %d words" % (source, path, ksr_protocol.count_words(text)))
        try:
            c = compare(args.nextword, args.model, path, text, args.k, args.no_repeat, args.learn,
                        args.encoding, progress=log)
        except ProtocolError as e:
            log("protocol failure: %s" % e)
            return 2
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            log("eval failed: %s" % e)
            return 2
        c["text"] = {"source": source, "words": ksr_protocol.count_words(text)}
        out = sys.stderr if args.json == "-" else sys.stdout
        print("\n".join(HEADER + describe(c)), file=out)
        verdict = ("identical ki, ks, kn" if c["identical"] else
                   "counts differ: KSR differs by %.4f points" % (100 * c["ksr_diff"]))
        print("\n%s; %d completions checked, %d textEdit problems; the server's document "
              "ends where the client's does: %s"
              % (verdict, c["lsp"]["edit_checks"], c["lsp"]["edit_problem_count"],
                 {True: "yes", False: "NO", None: "unknown (no items)"}[c["lsp"]["end_matches"]]),
              file=out)
        for p in c["lsp"]["edit_problems"][:5]:
            print("  textEdit problem: %s" % json.dumps(p, ensure_ascii=False), file=out)
        if args.json:
            ksr_protocol.write_json(args.json, c, ensure_ascii=False)
        if c["ksr_diff"] > 0.001 or (args.strict and not c["identical"]):
            return 1
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
