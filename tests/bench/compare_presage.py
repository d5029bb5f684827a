#!/usr/bin/env python3
"""Keystroke savings of nextword against Presage, side by side, on the same
held-out TinyStories text with the same protocol (tests/bench/ksr_protocol.py,
the one `nextword eval --ksr` implements).

    python3 tests/bench/compare_presage.py [build/nextword] [--corpus DIR] [--words N]
        [-k 6] [--scratch DIR] [--configs own,stock,...] [--check-nextword [N]]
        [--json OUT|-] [--split-only]

The text. tools/dev_split.sh splits tinystories-train-continuation-lowercase
at the first blank line from line 21500 on: the lines up to it are training
text (continuation-train.txt), the rest is the development split (heldout.txt,
about 20,000 words), which both engines type here. It is also split at the
paragraph boundary nearest 20% of its words into dev.txt and test.txt
(tools/tune_learn.py used to tune on dev.txt; it now tunes on the
default model's validation text, which is not part of this split). All of them go to the scratch directory (never into
the repository); --split-only writes them and stops.

Presage (libpresage 0.9.1) runs through tests/bench/presage_driver.cpp, which
is compiled into the scratch directory. Its n-gram database is built with
`text2ngram -n N -l -f sqlite` (N = 1, 2, 3: one run fills one table) from
the same training text as the default
nextword model (tinystories-train-head.txt + continuation-train.txt),
lowercased and with the `<|endoftext|>` separator lines blanked. Every
configuration starts from a profile written to the scratch directory (the
stock /etc/presage.xml values for the context tracker, selector, activator,
DefaultSmoothedNgramPredictor with deltas 0.01 0.1 0.89 and
DefaultRecencyPredictor with lambda 1, n_0 1, cutoff 20; AUTOPERSIST false,
every LEARN false, no database in the home directory) plus `--set` overrides,
listed in the output. Configurations (--configs):

  own             trigram DB from the training text, n-gram + recency
                  predictors, LEARN false, REPEAT_SUGGESTIONS yes
  stock           presage's English DB /usr/share/presage/database_en.db
                  (opened read-only), n-gram + recency, REPEAT_SUGGESTIONS yes
  own-norepeat    own with REPEAT_SUGGESTIONS no (presage's stock setting:
                  words already offered for the current word are not offered
                  again until the context changes)
  stock-norepeat  stock with REPEAT_SUGGESTIONS no
  own-learn       own + UserSmoothedNgramPredictor learning the typed text
                  into a fresh DB in the scratch directory (presage's adaptive
                  setup, what /etc/presage.xml does with ~/.presage/lm.db)
  own-ngram       own without the recency predictor
Presage's suggestions are compared by their word part (ksr_protocol.split_token):
it keeps characters outside its Latin-1 tables, such as curly quotes, inside
its tokens and offers '“what' after '“w' (--presage-raw: compare them as
they are). Presage looks at a few words only (trigrams, recency over 20 tokens, an
80-character context-change window), so it is sent the last --context-tokens
(default 64) tokens of the text typed so far.

nextword: `NEXTWORD eval --ksr -k K -f json TEXT` (plain, --learn, --no-repeat,
--learn --no-repeat), which prints one JSON object with ki, ks, kn, ksr and
keystroke_ms {median, p90}. --check-nextword N types the first N words of the
test text through `NEXTWORD complete -f tsv -k K` with ksr_protocol.py and
compares ki/ks/kn with `eval --ksr` on the same words (written to
check-N.txt).

Output: a table (engine/config, KSR %, ki, ks, kn, words selected, queries,
median and p90 ms per keystroke query, seconds); --json OUT writes a JSON
summary (OUT '-' = stdout, the table then goes to stderr).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ksr_protocol  # noqa: E402

STOCK_DB = "/usr/share/presage/database_en.db"
DRIVER_SOURCE = os.path.join(HERE, "presage_driver.cpp")
HEAD_FILE = "tinystories-train-head.txt"
CONTINUATION_FILE = "tinystories-train-continuation-lowercase.txt"
SPLIT = os.path.join(HERE, "..", "..", "tools", "dev_split.sh")
ALL_CONFIGS = ["own", "stock", "own-norepeat", "stock-norepeat", "own-learn", "own-ngram"]
DEFAULT_CONFIGS = ["own", "stock", "own-norepeat", "stock-norepeat", "own-learn"]
NEXTWORD_VARIANTS = [("nextword", []), ("nextword --learn", ["--learn"]),
                     ("nextword --no-repeat", ["--no-repeat"]),
                     ("nextword --learn --no-repeat", ["--learn", "--no-repeat"])]


def log(msg):
    print("[compare_presage] " + msg, file=sys.stderr, flush=True)


# --- the text ------------------------------------------------------------------

def split_continuation(corpus, scratch):
    """(continuation-train, heldout) bytes: tools/dev_split.sh's split,
    written into scratch."""
    subprocess.run([SPLIT, os.path.join(corpus, CONTINUATION_FILE), scratch], check=True)
    parts = []
    for name in ("continuation-train.txt", "heldout.txt"):
        with open(os.path.join(scratch, name), "rb") as f:
            parts.append(f.read())
    return parts


def split_dev_test(heldout, fraction=0.2):
    """(dev, test, info): held-out text split at the paragraph boundary (a
    blank line) whose count of words before it is nearest `fraction` of all
    words (the earlier one on a tie); dev keeps that blank line. Words are
    counted as ksr_protocol counts them. Without any blank line, the nearest
    line boundary is used."""
    lines = re.findall(r"[^\n]*\n|[^\n]+$", heldout)
    counts = [ksr_protocol.count_words(line) for line in lines]
    total = sum(counts)
    goal = fraction * total
    best = None
    before = 0
    blank_seen = any(not line.strip(ksr_protocol.WHITESPACE) for line in lines)
    for i, line in enumerate(lines):
        before += counts[i]
        is_boundary = not line.strip(ksr_protocol.WHITESPACE) if blank_seen else True
        if is_boundary and (best is None or abs(before - goal) < abs(best[1] - goal)):
            best = (i, before)
    if best is None:
        return "", heldout, {"dev_words": 0, "test_words": total, "cut_line": 0}
    i, dev_words = best
    dev = "".join(lines[:i + 1])
    test = "".join(lines[i + 1:])
    return dev, test, {"dev_words": dev_words, "test_words": total - dev_words,
                       "heldout_words": total, "cut_after_heldout_line": i + 1}


def first_words(text, n):
    """The start of text up to and including the token holding its n-th word
    (original whitespace kept), with a final newline."""
    if n is None:
        return text
    seen = 0
    for m in re.finditer("[^" + re.escape(ksr_protocol.WHITESPACE) + "]+", text):
        if ksr_protocol.split_token(m.group())[1]:
            seen += 1
            if seen == n:
                return text[:m.end()] + "\n"
    return text


def wikitext_plain(line):
    """One line of a WikiText tokenized file as plain text, by the rules of
    src/eval/wikitext.cpp (read_wikitext): a heading loses its `=` marks,
    `@-@` `@,@` `@.@` join, clitics and closing marks attach, double quotes
    alternate open and closed. `<unk>` is dropped: nobody types it."""
    words = line.split()
    if len(words) >= 2 and words[0] == "=" and words[-1] == "=":
        words = [w for w in words if w != "="]
    out, glue, quote_open = "", False, False
    for w in words:
        if w == "<unk>":
            continue
        if w in ("@-@", "@,@", "@.@"):
            out += w[1]
            glue = True
            continue
        space = bool(out) and not glue
        glue = False
        clitic = w == "n't" or (len(w) >= 2 and w[0] == "'" and (w[1].isalnum() or ord(w[1]) >= 0x80))
        if clitic or w in tuple(",.;:!?)]}%"):
            space = False
        elif w == '"':
            if quote_open:
                space = False
            else:
                glue = True
            quote_open = not quote_open
        elif w in ("(", "[", "{"):
            glue = True
        out += (" " if space else "") + w
    return out


def wikitext_text(path):
    """A WikiText tokenized file as plain text, one line for each non-empty line."""
    with open(path, encoding="utf-8") as f:
        lines = [wikitext_plain(line) for line in f]
    return "".join(line + "\n" for line in lines if line)


def presage_training_share(path, max_bytes, scratch):
    """The first max_bytes of path (cut at a line end), lowercased, with the
    `<|endoftext|>` separator lines blanked, written to scratch."""
    out = os.path.join(scratch, "presage-train-%s-%s.txt" % (os.path.basename(path), max_bytes or "all"))
    with open(path, "rb") as f:
        data = f.read(max_bytes) if max_bytes else f.read()
    if max_bytes and len(data) == max_bytes:
        data = data[:data.rfind(b"\n") + 1]
    text = re.sub(r"(?m)^[ \t]*<\|endoftext\|>[ \t]*$", "", data.decode("utf-8", "replace")).lower()
    if not os.path.exists(out):
        with open(out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return out, len(data)


def prepare_text(corpus, scratch):
    """Writes continuation-train.txt, heldout.txt, dev.txt, test.txt and the
    lowercased presage training files into scratch; returns paths and info."""
    head_path = os.path.join(corpus, HEAD_FILE)
    train_bytes, heldout_bytes = split_continuation(corpus, scratch)
    paths = {name: os.path.join(scratch, name + ".txt")
             for name in ("continuation-train", "heldout", "dev", "test")}
    heldout = heldout_bytes.decode("utf-8")
    dev, test, info = split_dev_test(heldout)
    for name, text in (("dev", dev), ("test", test)):
        with open(paths[name], "w", encoding="utf-8", newline="") as f:
            f.write(text)
    # Presage's training text: the same files, lowercased, separators blanked.
    presage_train = []
    for src, name in ((head_path, "presage-train-head.txt"),
                      (paths["continuation-train"], "presage-train-continuation.txt")):
        with open(src, encoding="utf-8", newline="") as f:
            text = f.read()
        text = re.sub(r"(?m)^[ \t]*<\|endoftext\|>[ \t]*$", "", text).lower()
        out = os.path.join(scratch, name)
        with open(out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        presage_train.append(out)
    info.update({"corpus": os.path.abspath(corpus), "paths": paths,
                 "presage_training_files": presage_train,
                 "continuation_train_lines": train_bytes.count(b"\n"),
                 "heldout_lines": heldout_bytes.count(b"\n")})
    return info


# --- presage -----------------------------------------------------------------

BASE_PROFILE = """<?xml version="1.0" encoding="UTF-8" standalone="no" ?>
<!-- Written by tests/bench/compare_presage.py: /etc/presage.xml's values,
     with AUTOPERSIST false, every LEARN false and no database in $HOME. -->
<Presage>
  <PredictorRegistry>
    <LOGGER>ERROR</LOGGER>
    <PREDICTORS>DefaultSmoothedNgramPredictor DefaultRecencyPredictor</PREDICTORS>
  </PredictorRegistry>
  <ContextTracker>
    <LOGGER>ERROR</LOGGER>
    <SLIDING_WINDOW_SIZE>80</SLIDING_WINDOW_SIZE>
    <LOWERCASE_MODE>yes</LOWERCASE_MODE>
    <ONLINE_LEARNING>yes</ONLINE_LEARNING>
  </ContextTracker>
  <Selector>
    <LOGGER>ERROR</LOGGER>
    <SUGGESTIONS>6</SUGGESTIONS>
    <REPEAT_SUGGESTIONS>yes</REPEAT_SUGGESTIONS>
    <GREEDY_SUGGESTION_THRESHOLD>0</GREEDY_SUGGESTION_THRESHOLD>
  </Selector>
  <PredictorActivator>
    <LOGGER>ERROR</LOGGER>
    <PREDICT_TIME>1000</PREDICT_TIME>
    <MAX_PARTIAL_PREDICTION_SIZE>60</MAX_PARTIAL_PREDICTION_SIZE>
    <COMBINATION_POLICY>Meritocracy</COMBINATION_POLICY>
  </PredictorActivator>
  <ProfileManager>
    <LOGGER>ERROR</LOGGER>
    <AUTOPERSIST>false</AUTOPERSIST>
  </ProfileManager>
  <Predictors>
    <DefaultSmoothedNgramPredictor>
      <PREDICTOR>SmoothedNgramPredictor</PREDICTOR>
      <LOGGER>ERROR</LOGGER>
      <DBFILENAME>{stock_db}</DBFILENAME>
      <DELTAS>0.01 0.1 0.89</DELTAS>
      <LEARN>false</LEARN>
      <DatabaseConnector><LOGGER>ERROR</LOGGER></DatabaseConnector>
    </DefaultSmoothedNgramPredictor>
    <UserSmoothedNgramPredictor>
      <PREDICTOR>SmoothedNgramPredictor</PREDICTOR>
      <LOGGER>ERROR</LOGGER>
      <DBFILENAME>{user_db}</DBFILENAME>
      <DELTAS>0.01 0.1 0.89</DELTAS>
      <LEARN>false</LEARN>
      <DatabaseConnector><LOGGER>ERROR</LOGGER></DatabaseConnector>
    </UserSmoothedNgramPredictor>
    <DefaultRecencyPredictor>
      <PREDICTOR>RecencyPredictor</PREDICTOR>
      <LOGGER>ERROR</LOGGER>
      <LAMBDA>1</LAMBDA>
      <N_0>1</N_0>
      <CUTOFF_THRESHOLD>20</CUTOFF_THRESHOLD>
    </DefaultRecencyPredictor>
  </Predictors>
</Presage>
"""


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_driver(scratch):
    exe = os.path.join(scratch, "presage_driver")
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(DRIVER_SOURCE):
        return exe
    cmd = ["g++", "-std=c++17", "-O2", "-o", exe, DRIVER_SOURCE, "-lpresage"]
    log("compiling: " + " ".join(cmd))
    subprocess.run(cmd, check=True)
    return exe


def build_trigram_db(files, scratch):
    """text2ngram -n 1/2/3 -l -f sqlite into scratch (reused when its inputs
    did not change); checks that the tables are consistent."""
    db = os.path.join(scratch, "presage-trigram.db")
    stamp = db + ".inputs"
    key = json.dumps(["text2ngram -n 1,2,3 -l", [[f, sha256(f)] for f in files]])
    if os.path.exists(db) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == key:
                return db, 0.0
    for p in (db, stamp):
        if os.path.exists(p):
            os.remove(p)
    # One text2ngram run fills one table: -n 1, 2 and 3 into the same file
    # (-a: append, i.e. keep the tables of the earlier runs).
    t0 = time.perf_counter()
    for n in (1, 2, 3):
        cmd = ["text2ngram", "-n", str(n), "-l", "-f", "sqlite", "-o", db] + (["-a"] if n > 1 else []) + files
        log("building the trigram DB: " + " ".join(cmd))
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t0
    bad = db_inconsistencies(db)
    if bad:
        raise RuntimeError("%s is inconsistent (%s): presage would abort on an assertion" % (db, bad))
    with open(stamp, "w") as f:
        f.write(key)
    return db, seconds


def db_inconsistencies(db):
    """n-grams counted more often than their (n-1)-gram context, which
    SmoothedNgramPredictor asserts never happens; '' when there are none."""
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        two = con.execute("SELECT COUNT(*) FROM _2_gram b LEFT JOIN _1_gram u ON u.word = b.word_1 "
                          "WHERE u.count IS NULL OR b.count > u.count").fetchone()[0]
        three = con.execute("SELECT COUNT(*) FROM _3_gram t LEFT JOIN _2_gram b "
                            "ON b.word_1 = t.word_2 AND b.word = t.word_1 "
                            "WHERE b.count IS NULL OR t.count > b.count").fetchone()[0]
    finally:
        con.close()
    return "" if not (two or three) else "%d bigrams, %d trigrams" % (two, three)


def db_stats(db):
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        out = {}
        for n in (1, 2, 3):
            rows, total = con.execute("SELECT COUNT(*), SUM(count) FROM _%d_gram" % n).fetchone()
            out["%d-grams" % n] = rows
            if n == 1:
                out["tokens"] = total
        return out
    finally:
        con.close()


def presage_overrides(config, own_db, learn_db):
    ngram = "Predictors.DefaultSmoothedNgramPredictor."
    both = "DefaultSmoothedNgramPredictor DefaultRecencyPredictor"
    base = {
        "own": [(ngram + "DBFILENAME", own_db), ("PredictorRegistry.PREDICTORS", both),
                ("Selector.REPEAT_SUGGESTIONS", "yes")],
        "stock": [(ngram + "DBFILENAME", STOCK_DB), ("PredictorRegistry.PREDICTORS", both),
                  ("Selector.REPEAT_SUGGESTIONS", "yes")],
    }
    if config in base:
        return base[config]
    if config == "own-norepeat":
        return base["own"][:2] + [("Selector.REPEAT_SUGGESTIONS", "no")]
    if config == "stock-norepeat":
        return base["stock"][:2] + [("Selector.REPEAT_SUGGESTIONS", "no")]
    if config == "own-ngram":
        return [(ngram + "DBFILENAME", own_db),
                ("PredictorRegistry.PREDICTORS", "DefaultSmoothedNgramPredictor"),
                ("Selector.REPEAT_SUGGESTIONS", "yes")]
    if config == "own-learn":
        user = "Predictors.UserSmoothedNgramPredictor."
        return [(ngram + "DBFILENAME", own_db), (user + "DBFILENAME", learn_db),
                (user + "LEARN", "true"),
                ("PredictorRegistry.PREDICTORS",
                 "DefaultSmoothedNgramPredictor UserSmoothedNgramPredictor DefaultRecencyPredictor"),
                ("Selector.REPEAT_SUGGESTIONS", "yes")]
    raise ValueError("unknown presage configuration " + config)


def driver_argv(exe, profile, overrides, k):
    argv = [exe, "--config", profile, "-k", str(k)]
    for key, value in overrides:
        argv += ["--set", "%s=%s" % (key, value)]
    return argv


def run_presage(config, exe, profile, own_db, scratch, text, args):
    learn_db = os.path.join(scratch, "presage-learn-%s.db" % config)
    if os.path.exists(learn_db):
        os.remove(learn_db)  # a fresh user DB per run
    overrides = presage_overrides(config, own_db, learn_db)
    argv = driver_argv(exe, profile, overrides, args.k)
    shown = subprocess.run(argv + ["--show-config"], capture_output=True, text=True)
    if shown.returncode != 0:
        return {"error": shown.stderr.strip() or "presage_driver --show-config failed"}
    effective = dict(line.split("\t", 1) for line in shown.stdout.splitlines() if "\t" in line)
    if os.path.exists(learn_db):
        os.remove(learn_db)  # --show-config opened (created) it; start empty
    log("presage %s: %s" % (config, " ".join(argv[1:])))
    result = {"argv": argv, "overrides": dict(overrides), "effective_config": effective,
              "context_tokens": args.context_tokens}
    parse = ksr_protocol.parse_tabs if args.presage_raw else ksr_protocol.parse_tabs_words
    result["parse"] = parse.__name__
    with ksr_protocol.LineEngine(argv, parse, name="presage " + config,
                                 timeout=args.query_timeout) as engine:
        try:
            r = ksr_protocol.simulate(text, engine, args.k, context_tokens=args.context_tokens,
                                      progress=lambda m: log("presage %s: %s" % (config, m)),
                                      progress_every=args.progress_every,
                                      max_seconds=args.max_seconds)
        except ksr_protocol.EngineError as e:
            result["error"] = str(e)
            return result
        result.update(r)
        result.update(ksr_protocol.latency_summary(engine.latencies))
    if config == "own-learn" and os.path.exists(learn_db):
        result["learned_db"] = db_stats(learn_db)
    return result


# --- nextword ------------------------------------------------------------------

def model_args(args):
    return ["--model", args.model] if args.model else []


def run_nextword_eval(args, text_path, extra):
    cmd = [args.nextword, "eval", "--ksr", "-k", str(args.k), "-f", "json"] + model_args(args) \
        + extra + [text_path]
    log("nextword: " + " ".join(cmd))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.nextword_timeout)
    except subprocess.TimeoutExpired:
        return {"argv": cmd, "error": "timed out after %d s" % args.nextword_timeout}
    except OSError as e:
        return {"argv": cmd, "error": str(e)}
    seconds = time.perf_counter() - t0
    out = {"argv": cmd, "seconds": seconds}
    if proc.returncode != 0:
        out["error"] = "exit status %d: %s" % (proc.returncode, (proc.stderr or proc.stdout).strip()[-600:])
        return out
    parsed = None
    for candidate in [proc.stdout] + proc.stdout.splitlines()[::-1]:
        try:
            parsed = json.loads(candidate)
            break
        except ValueError:
            continue
    if not isinstance(parsed, dict) or not all(key in parsed for key in ("ki", "ks", "kn")):
        out["error"] = "no JSON object with ki, ks, kn in the output: " + proc.stdout.strip()[-300:]
        return out
    out["report"] = parsed
    for key in ("ki", "ks", "kn", "ksr", "words", "selected", "queries"):
        if key in parsed:
            out[key] = parsed[key]
    if "ksr" not in out and out["kn"]:
        out["ksr"] = 1 - (out["ki"] + out["ks"]) / out["kn"]
    ms = parsed.get("keystroke_ms") or {}
    out["median_ms"] = ms.get("median")
    out["p90_ms"] = ms.get("p90")
    return out


def check_nextword(args, test_text, scratch, variants):
    """ksr_protocol.py over `nextword complete [FLAGS]` against
    `eval --ksr [FLAGS]` on the first N words, for each variant."""
    text = first_words(test_text, args.check_nextword)
    path = os.path.join(scratch, "check-%d.txt" % args.check_nextword)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    results = {"text": path, "words": ksr_protocol.count_words(text), "variants": {}}
    for name, extra in variants:
        argv = [args.nextword, "complete", "-f", "tsv", "-k", str(args.k)] + model_args(args) + extra
        log("check: " + " ".join(argv) + " on " + path)
        result = {"argv": argv}
        try:
            with ksr_protocol.LineEngine(argv, ksr_protocol.parse_tsv_pairs, name="nextword complete",
                                         timeout=args.query_timeout) as engine:
                r = ksr_protocol.simulate(text, engine, args.k, progress_every=args.progress_every,
                                          progress=lambda m: log("check: " + m))
                r.update(ksr_protocol.latency_summary(engine.latencies))
                result["protocol"] = r
        except (ksr_protocol.EngineError, OSError) as e:
            result["protocol"] = {"error": str(e)}
        result["eval"] = run_nextword_eval(args, path, extra)
        p, e = result["protocol"], result["eval"]
        if "error" not in p and "error" not in e:
            result["match"] = all(p[key] == e[key] for key in ("ki", "ks", "kn"))
        results["variants"][name] = result
    return results


# --- output --------------------------------------------------------------------

def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def table(rows, out):
    header = "%-38s %7s %8s %7s %8s %8s %8s %8s %8s %9s" % (
        "engine/config", "KSR %", "ki", "ks", "kn", "selected", "queries", "med ms", "p90 ms", "seconds")
    print(header, file=out)
    print("-" * len(header), file=out)
    for name, r in rows:
        if r is None:
            continue
        if "error" in r:
            print("%-38s  failed: %s" % (name, r["error"].splitlines()[0][:200] if r["error"] else ""), file=out)
            continue
        note = "" if r.get("complete", True) else "  (stopped at the time limit: %d tokens)" % r["tokens"]
        print("%-38s %7s %8s %7s %8s %8s %8s %8s %8s %9s%s" % (
            name, fmt(100 * r["ksr"] if r.get("ksr") is not None else None, ".2f"),
            r.get("ki"), r.get("ks"), r.get("kn"), fmt(r.get("selected"), "d"), fmt(r.get("queries"), "d"),
            fmt(r.get("median_ms"), ".3f"), fmt(r.get("p90_ms"), ".3f"), fmt(r.get("seconds"), ".1f"), note),
            file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("nextword", nargs="?", default=os.path.join(REPO, "build", "nextword"),
                    help="the nextword binary (default: build/nextword)")
    ap.add_argument("--corpus", default=os.path.join(REPO, "..", "shared", "corpus"))
    ap.add_argument("--model", help="nextword model directory (default: nextword's default)")
    ap.add_argument("--words", type=int, help="type only the first N words of the test part")
    ap.add_argument("--text", help="type this file instead of the test part")
    ap.add_argument("--wikitext", metavar="FILE",
                    help="type this WikiText tokenized file turned into plain text (wikitext_plain)")
    ap.add_argument("--presage-text", metavar="FILE",
                    help="build presage's trigram DB from this text instead of TinyStories "
                         "(e.g. the Wikipedia training split of data/english/train.sh)")
    ap.add_argument("--presage-bytes", type=int, default=0,
                    help="only the first N bytes of --presage-text (cut at a line end)")
    ap.add_argument("-k", "--k", type=int, default=6, help="suggestions offered (default 6)")
    ap.add_argument("--scratch", help="scratch directory (default: a new temporary one, kept)")
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                    help="presage configurations, comma-separated, from: %s; '' for none"
                    % ", ".join(ALL_CONFIGS))
    ap.add_argument("--context-tokens", type=int, default=64,
                    help="tokens of the text so far sent to presage (default 64; 0: all of it)")
    ap.add_argument("--presage-raw", action="store_true",
                    help="compare presage's suggestions as they are (default: their word part, "
                         "e.g. '\u201cwhat' offers 'what')")
    ap.add_argument("--skip-nextword", action="store_true", help="no nextword eval runs")
    ap.add_argument("--nextword-variants", default="all",
                    help="'all' or comma-separated indices into: %s"
                    % ", ".join("%d=%s" % (i, n) for i, (n, _) in enumerate(NEXTWORD_VARIANTS)))
    ap.add_argument("--check-nextword", type=int, nargs="?", const=300, metavar="N",
                    help="drive `nextword complete` through ksr_protocol.py on the first N "
                         "(default 300) words and compare with `eval --ksr`")
    ap.add_argument("--max-seconds", type=float, default=3600,
                    help="stop each presage run after this long (default 3600)")
    ap.add_argument("--query-timeout", type=float, default=120, help="seconds per query (default 120)")
    ap.add_argument("--nextword-timeout", type=int, default=7200,
                    help="seconds per `nextword eval` run (default 7200)")
    ap.add_argument("--progress-every", type=int, default=5000, help="queries between progress lines")
    ap.add_argument("--json", metavar="OUT", help="write a JSON summary to OUT ('-': stdout)")
    ap.add_argument("--split-only", action="store_true",
                    help="write heldout/dev/test into the scratch directory and stop")
    args = ap.parse_args()
    if args.k < 1:
        ap.error("-k must be at least 1")

    scratch = args.scratch or tempfile.mkdtemp(prefix="compare_presage.")
    os.makedirs(scratch, exist_ok=True)
    scratch = os.path.abspath(scratch)
    if os.path.commonpath([scratch, REPO]) == REPO:
        ap.error("the scratch directory must be outside the repository (no corpus text in it)")
    table_out = sys.stderr if args.json == "-" else sys.stdout
    log("scratch directory: " + scratch)

    split = prepare_text(args.corpus, scratch)
    log("held-out split: %d dev words, %d test words (%s, %s)"
        % (split["dev_words"], split["test_words"], split["paths"]["dev"], split["paths"]["test"]))
    if args.split_only:
        print(json.dumps(split, indent=2))
        return 0

    if args.presage_text:
        share, share_bytes = presage_training_share(args.presage_text, args.presage_bytes, scratch)
        split["presage_training_files"] = [share]
        split["presage_training_bytes"] = share_bytes
    source = args.wikitext or args.text or split["paths"]["heldout"]
    if args.wikitext:
        text = wikitext_text(args.wikitext)
    else:
        with open(source, encoding="utf-8", newline="") as f:
            text = f.read()
    text = first_words(text, args.words)
    text_path = os.path.join(scratch, "typed-%s.txt" % (args.words or "all"))
    if args.text and args.words is None:
        text_path = os.path.abspath(args.text)
    else:
        with open(text_path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    toks = ksr_protocol.tokens_of(text)
    summary = {"text": {"source": source, "path": text_path, "tokens": len(toks),
                        "words": ksr_protocol.count_words(text),
                        "kn": sum(len(t) + 1 for t in toks)},
               "k": args.k, "split": split, "presage": {}, "nextword": {}}
    log("typing %s: %d words, %d tokens" % (text_path, summary["text"]["words"], len(toks)))
    rows = []

    configs = [c for c in args.configs.split(",") if c]
    for c in configs:
        if c not in ALL_CONFIGS:
            ap.error("unknown presage configuration %s" % c)
    if configs:
        exe = build_driver(scratch)
        own_db, db_seconds = build_trigram_db(split["presage_training_files"], scratch)
        summary["presage_db"] = {"path": own_db, "build_seconds": db_seconds, **db_stats(own_db)}
        profile = os.path.join(scratch, "presage-base.xml")
        with open(profile, "w") as f:
            f.write(BASE_PROFILE.replace("{stock_db}", STOCK_DB)
                    .replace("{user_db}", os.path.join(scratch, "presage-user-unused.db")))
        summary["presage_base_profile"] = profile
        stock_before = sha256(STOCK_DB) if os.path.exists(STOCK_DB) else None
        for c in configs:
            r = run_presage(c, exe, profile, own_db, scratch, text, args)
            summary["presage"][c] = r
            rows.append(("presage " + c, r))
            if "error" in r:
                log("presage %s failed: %s" % (c, r["error"]))
            else:
                log("presage %s: KSR %.2f%% in %.1f s" % (c, 100 * r["ksr"], r["seconds"]))
        if stock_before is not None:
            summary["stock_db_unchanged"] = sha256(STOCK_DB) == stock_before
            if not summary["stock_db_unchanged"]:
                log("WARNING: %s changed during the runs" % STOCK_DB)
        home_presage = os.path.join(os.path.expanduser("~"), ".presage")
        summary["home_presage_dir_exists"] = os.path.exists(home_presage)

    if args.nextword_variants == "all":
        variants = NEXTWORD_VARIANTS
    else:
        variants = [NEXTWORD_VARIANTS[int(i)] for i in args.nextword_variants.split(",") if i]
    if not args.skip_nextword:
        for name, extra in variants:
            r = run_nextword_eval(args, text_path, extra)
            summary["nextword"][name] = r
            rows.append((name, r))
            if "error" in r:
                log("%s failed: %s" % (name, r["error"].splitlines()[0] if r["error"] else ""))

    if args.check_nextword:
        check = check_nextword(args, text, scratch, variants)
        summary["check_nextword"] = check
        for name, r in check["variants"].items():
            flags = name[len("nextword"):].strip() or "plain"
            rows.append(("check %s: complete" % flags, r["protocol"]))
            rows.append(("check %s: eval" % flags, r["eval"]))

    print("text: %s (%d words, %d tokens, kn %d), k = %d" % (
        text_path, summary["text"]["words"], summary["text"]["tokens"], summary["text"]["kn"], args.k),
        file=table_out)
    table(rows, table_out)
    if "check_nextword" in summary:
        for name, r in summary["check_nextword"]["variants"].items():
            m = r.get("match")
            print("check %s on the first %d words (%s): %s" % (
                name, args.check_nextword, summary["check_nextword"]["text"],
                "ki/ks/kn match" if m else "MISMATCH" if m is False else "not comparable (a side failed)"),
                file=table_out)
    if configs:
        print("presage: driver %s, base profile %s, %d tokens of context; stock DB unchanged: %s"
              % (os.path.join(scratch, "presage_driver"), summary["presage_base_profile"],
                 args.context_tokens, summary.get("stock_db_unchanged")), file=table_out)
        for c in configs:
            r = summary["presage"][c]
            if "overrides" in r:
                print("  %-15s %s" % (c, " ".join("%s=%s" % kv for kv in r["overrides"].items())),
                      file=table_out)
    if args.json:
        ksr_protocol.write_json(args.json, summary, default=str)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted")
        sys.exit(130)
