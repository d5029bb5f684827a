#!/usr/bin/env python3
"""Parity of nextword's inspection commands (score, lens, trace,
attribute) with the independent PyTorch reference inspect_ref.py.

    /usr/bin/python3 tests/reference/inspect_parity.py build/nextword [--models 24] [--seed 2000]
    python3 tests/reference/inspect_parity.py build/nextword --fixtures
    /usr/bin/python3 tests/reference/inspect_parity.py --write-fixtures

Live (the default; torch): fresh random models from random_models.py, seeds
2000..2023 (apart from the fixtures' 0..31 and live_parity's 1000..; together
they cover every config flag, which is checked), and the default model
data/stories (phrases with an unknown word, one longer than max_len), each
run through the four commands in JSON and compared with the reference
computed now. --fixtures: the expectations committed in tests/fixtures/inspect
(written by --write-fixtures from the reference, for 8 of tests/fixtures/
parity's models, for the default model and for the one before the modern options,
tests/fixtures/previous-default); this comparison is plain Python,
any python3 runs it. Each also checks: lens's last step at the last position
against `predict -f json -k K --batch 1` (exact: words and the very same
float32 values), score --document's perplexity against `eval -f json`'s, and
attribute's usage and input errors (exit 2, exit 4).

Tolerances (TOL = 1e-4):
- tokens, ids, unknown, truncated, words, names, order and shapes: exact;
  masked attention scores (null) at exactly the reference's places.
- logits, trace activations, attribution parts: TOL relative, norm-wise (the
  largest difference over the largest |reference value| of the vector; one
  logit or the constant against the largest |logit| of its row, the parts
  against the larger of that and their own largest). Attention patterns of
  random models: TOL times the layer's largest |score| (a pattern is
  softmax(scores), and the scores are held to TOL relative).
- probabilities (lens): TOL absolute on the default model; on random models
  what the logits' tolerance allows, at least TOL.
- log-probabilities (score): TOL absolute on the default model; on random
  models 2 TOL times the row's largest |logit| (a logprob is logit[t] minus
  logsumexp(logits); random weights reach logits of 1e4), and at least 4x
  what torch's own float32 forward loses on that context (some random
  contexts are so ill-conditioned that float32 itself is off by 0.1). A
  line's logprob: the sum of its words' limits; perplexity: |ln(got/ref)|
  within their mean.
- rank: exact unless other words' reference logits lie within TOL
  (relative, norm-wise) of the word's: then anywhere in that near-tie.
  Top lists: the word at place p has a reference logit within that of the
  p-th best (same words, same order, up to near-ties).
- attribute: parts + constant = logit within TOL relative (to the largest
  of |logit|, |constant|, |part|) on the binary's own output.
The last line lists the largest error seen per quantity.

Exit: 0 all good, 1 a failure, 77 (skip) when torch cannot be imported in
live or write mode, unless --require-torch=1 (then 1).
"""
import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "inspect")
sys.path.insert(0, HERE)
import random_models  # noqa: E402  (standard library only)

TOL = 1e-4
DEFAULT_SEED, DEFAULT_MODELS = 2000, 24  # live: seeds 2000..2023 cover every flag
# Fixture models: a subset of tests/fixtures/parity covering every flag (43:
# rope, rmsnorm and swiglu).
FIXTURE_MODELS = [0, 2, 3, 6, 9, 13, 19, 31, 43]
DEFAULT_MODEL = "data/stories"
# The default model before the modern options (learned positions, layernorm, GELU,
# context 64), kept as a regression fixture with the default's cases.
PREVIOUS_DEFAULT = "tests/fixtures/previous-default"
DEFAULT_PHRASES = [
    "once upon a time",
    "The little girl saw a zebrafoo in the park",
    "Lily and Tom were best friends. They liked to play",
]
DEFAULT_STORY = (
    "Once upon a time, there was a little girl named Lily. She loved to play outside "
    "in the sun. One day, she saw a big red ball in the park. She ran to the ball and "
    "picked it up. Then a boy came and said, \"That is my ball!\" Lily was sad, but she "
    "gave the ball back to the boy. The boy smiled and said, \"Thank you! Do you want "
    "to play with me?\" Lily was happy and they played all day.")
DEFAULT_LONG = " ".join([DEFAULT_STORY] * 2)  # 203 tokens with bos: past a max_len of 128
DEFAULT_DOCUMENT = (
    "Once upon a time, there was a little dog named Max. Max liked to run.\n"
    "He ran to the park every day.\n\n"
    "Lily had a red ball. She gave it to her friend Tom.\n"
    "<|endoftext|>\n"
    "The sun was hot. Tim and Sue went to the quokkaland to swim.\n"
    "They were very happy.\n")
DOCUMENT_NAME = "document.txt"


# ------------------------------------------------------------------ numbers

def relative_error(got, want):
    """Norm-wise: largest difference over the largest |reference value|."""
    if not want:
        return 0.0
    largest = max(abs(w) for w in want)
    worst = max(abs(g - w) for g, w in zip(got, want))
    return worst / largest if largest else worst


def rank_range(logits, target, special, tol):
    """(lowest, highest) 1-based rank target can have when logits within tol
    of its own count as ties."""
    mine = logits[target]
    above = ties = 0
    for j, v in enumerate(logits):
        if j == target or j in special:
            continue
        if v > mine + tol:
            above += 1
        elif v >= mine - tol:
            ties += 1
    return [1 + above, 1 + above + ties]


def rounded(x, digits=7):
    """x with `digits` significant digits (smaller fixtures; far inside 1e-4)."""
    if x is None or not math.isfinite(x):
        return x
    return float("%.*g" % (digits, x))


def finite_or_none(x):
    return x if x is None or math.isfinite(x) else None


# ------------------------------------------------------------------ checking

class Checker:
    def __init__(self):
        self.worst = {}
        self.failures = []
        self.records = 0
        self.checks = 0

    def measure(self, quantity, value, limit, where, detail=""):
        """Records value under quantity; a failure when it exceeds limit."""
        self.checks += 1
        if value != value:  # NaN
            value = float("inf")
        self.worst[quantity] = max(self.worst.get(quantity, 0.0), value)
        if value > limit:
            self.failures.append("%s: %s %.3g > %.3g%s" % (where, quantity, value, limit,
                                                          (" (" + detail + ")") if detail else ""))

    def equal(self, what, got, want, where):
        self.checks += 1
        if got != want:
            self.failures.append("%s: %s %s, expected %s" % (
                where, what, json.dumps(got, ensure_ascii=False)[:300],
                json.dumps(want, ensure_ascii=False)[:300]))
            return False
        return True

    def fail(self, where, message):
        self.failures.append("%s: %s" % (where, message))


def logprob_limit(scale, strict):
    """strict (the default model): 1e-4 absolute. Random models: what the
    logits' own tolerance allows, 2e-4 of the row's largest |logit| (a
    logprob is logit[t] - logsumexp(logits)); their float32 noise alone can
    pass 1e-4 absolute (fixture 03 on "well-known ! !": torch's own float32
    forward is 9.0e-5 off in the logits, norm-wise, 3.2e-3 in a logprob)."""
    return TOL if strict else 2 * TOL * max(1.0, scale)


def check_score(ck, got, want, where):
    key = "document" if "document" in want else "text"
    for field in (key, "tokens", "ids", "oov"):
        ck.equal(field, got.get(field), want[field], where)
    gw, ww = got.get("words", []), want["words"]
    if not ck.equal("number of words", len(gw), len(ww), where):
        return
    limit_sum = 0.0
    for i, (g, w) in enumerate(zip(gw, ww)):
        at = "%s, word %d %r" % (where, i, w["word"])
        for field in ("word", "id", "unknown"):
            ck.equal(field, g.get(field), w[field], at)
        error = abs(g["logprob"] - w["logprob"])
        limit = max(logprob_limit(w["scale"], want.get("strict")), 4 * w.get("float32", 0.0))
        limit_sum += limit
        ck.measure("score logprob (absolute%s)" % (", default model" if want.get("strict") else ""),
                   error, limit, at, "got %r, reference %r, largest |logit| %.3g" % (
                       g["logprob"], w["logprob"], w["scale"]))
        ck.measure("score logprob / largest |logit|", error / max(1.0, w["scale"]),
                   float("inf"), at)
        lo, hi = w["rank"]
        if not lo <= g["rank"] <= hi:
            ck.fail(at, "rank %s, reference %s" % (g["rank"], lo if lo == hi else [lo, hi]))
        ck.checks += 1
        if lo != hi:
            ck.worst["score ranks within a near-tie"] = ck.worst.get(
                "score ranks within a near-tie", 0) + 1
    error = abs(got["logprob"] - want["logprob"])
    ck.measure("score line logprob (absolute)", error, max(limit_sum, TOL), where,
               "got %r, reference %r" % (got["logprob"], want["logprob"]))
    gp, wp = got.get("perplexity"), want["perplexity"]
    if not ww:
        ck.equal("perplexity", gp, None, where)
        ck.equal("logprob", got["logprob"], 0, where)
    elif wp is None or gp is None:  # beyond the largest double
        ck.equal("perplexity", finite_or_none(gp), finite_or_none(wp), where)
    else:
        # |ln(pp_got / pp_ref)| (the relative error, when small) is the
        # error of the mean logprob.
        ck.measure("score perplexity (relative)", abs(math.log(gp / wp)),
                   max(limit_sum, TOL) / len(ww), where, "got %r, reference %r" % (gp, wp))


def probability_limit(step, strict):
    """strict (the default model): 1e-4 absolute. Random models: what the
    logits' tolerance allows, p (1 - p) times twice 1e-4 of the largest
    |logit|, at least 1e-4."""
    return TOL if strict else max(TOL, step["tol"] / 2)


def check_top(ck, got_top, step, where, quantity, limit):
    """got_top: [{word, probability}]; step: the expectation of one lens step."""
    ranked, candidates, tol = step["sorted"], step["candidates"], step["tol"]
    if not ck.equal("top length", len(got_top), len(ranked), where):
        return
    words = [t["word"] for t in got_top]
    ck.equal("distinct top words", len(set(words)), len(words), where)
    for p, t in enumerate(got_top):
        c = candidates.get(t["word"])
        if c is None or abs(c[0] - ranked[p]) > tol:
            ck.fail(where, "top word %d is %r (reference logit %s), reference's is %r" % (
                p + 1, t["word"], None if c is None else c[0], step["words"][p]))
            continue
        ck.measure(quantity, abs(t["probability"] - c[1]), limit, where,
                   "%r: got %r, reference %r" % (t["word"], t["probability"], c[1]))


def check_lens(ck, got, want, where):
    for field in ("phrase", "tokens", "ids", "unknown", "truncated"):
        ck.equal(field, got.get(field), want[field], where)
    gl, wl = got.get("layers", []), want["layers"]
    if not ck.equal("steps", [[s.get("position"), s.get("layer")] for s in gl],
                    [[s["position"], s["layer"]] for s in wl], where):
        return
    final = {}  # position -> the binary's final word (its last step's top word)
    for g in gl:
        if g["top"]:
            final[g["position"]] = g["top"][0]["word"]
    for g, w in zip(gl, wl):
        at = "%s, position %d, layer %s" % (where, w["position"], w["layer"])
        strict = want.get("strict")
        quantity = "lens probability (absolute%s)" % (", default model" if strict else "")
        limit = probability_limit(w, strict)
        check_top(ck, g["top"], w, at, quantity, limit)
        word = final.get(w["position"])
        f = w["final"].get(word)
        if f is None:
            ck.fail(at, "final word %r is not the reference's (%s)" % (word, list(w["final"])))
            continue
        lo, hi = f["rank"]
        if not lo <= g["final_word_rank"] <= hi:
            ck.fail(at, "final_word_rank %s of %r, reference %s" % (
                g["final_word_rank"], word, lo if lo == hi else [lo, hi]))
        ck.measure(quantity, abs(g["final_word_probability"] - f["probability"]), limit, at,
                   "final_word_probability of %r: got %r, reference %r" % (
                       word, g["final_word_probability"], f["probability"]))


def check_trace(ck, got, want, where):
    for field in ("phrase", "tokens", "ids"):
        ck.equal(field, got.get(field), want[field], where)
    ga, wa = got.get("activations", {}), want["activations"]
    if not ck.equal("activation names", list(ga), list(wa), where):
        return
    for name, w in wa.items():
        g = ga[name]
        at = "%s, %s" % (where, name)
        if not ck.equal("shape", g.get("shape"), w["shape"], at):
            continue
        gd, wd = g["data"], w["data"]
        if not ck.equal("length of data", len(gd), len(wd), at):
            continue
        masked_g = [i for i, v in enumerate(gd) if v is None]
        masked_w = [i for i, v in enumerate(wd) if v is None]
        if masked_g != masked_w:
            ck.fail(at, "null (masked) entries at %s, reference %s" % (
                masked_g[:20], masked_w[:20]))
            continue
        pairs = [(a, b) for a, b in zip(gd, wd) if b is not None]
        error = relative_error([a for a, _ in pairs], [b for _, b in pairs])
        quantity = "trace logits" if name == "logits" else "trace activations"
        if name.endswith("hook_pattern"):
            quantity = "trace attention patterns"
        strict = want.get("strict")
        quantity += " (relative%s)" % (", default model" if strict else "")
        # A pattern is softmax(scores): on random models, what the scores'
        # own tolerance allows (1e-4 of the largest |score| of the layer).
        limit = TOL if strict or "scale" not in w else TOL * max(1.0, w["scale"])
        ck.measure(quantity, error, limit, at)


def check_attribute(ck, got, want, where):
    for field in ("phrase", "tokens", "ids"):
        ck.equal(field, got.get(field), want[field], where)
    w = want["candidates"].get(got.get("word"))
    if w is None:
        ck.fail(where, "word %r, reference %s" % (got.get("word"), list(want["candidates"])))
        return
    ck.equal("id", got["id"], w["id"], where)
    scale = want["scale"]
    ck.measure("attribute logit (relative)", abs(got["logit"] - w["logit"]) / scale, TOL, where,
               "got %r, reference %r" % (got["logit"], w["logit"]))
    if not ck.equal("part names", [p["name"] for p in got["parts"]],
                    [p["name"] for p in w["parts"]], where):
        return
    # Parts against the largest |part| or |logit| of the row (a part smaller
    # than the logits is measured on the logits' scale, as the logit is).
    gv, wv = [p["value"] for p in got["parts"]], [p["value"] for p in w["parts"]]
    largest = max([scale] + [abs(v) for v in wv])
    ck.measure("attribute parts (relative)",
               max([abs(a - b) for a, b in zip(gv, wv)] + [0.0]) / largest, TOL, where)
    ck.measure("attribute constant (relative)", abs(got["constant"] - w["constant"]) / scale,
               TOL, where, "got %r, reference %r" % (got["constant"], w["constant"]))
    values = [p["value"] for p in got["parts"]]
    total = sum(values) + got["constant"]
    size = max([abs(got["logit"]), abs(got["constant"])] + [abs(v) for v in values])
    ck.measure("attribute sum = logit (relative)", abs(total - got["logit"]) / (size or 1), TOL,
               where, "sum %r, logit %r" % (total, got["logit"]))


CHECKS = {"score": check_score, "lens": check_lens, "trace": check_trace,
          "attribute": check_attribute}


# ------------------------------------------------------------------ the binary

def model_args(model):
    return ["-m", model]


def run_binary(binary, args, lines=None, cwd=None):
    started = time.perf_counter()
    try:
        run = subprocess.run([binary] + args, input="".join(l + "\n" for l in lines or []),
                             capture_output=True, text=True, check=False, cwd=cwd)
    except OSError as e:  # not there, not executable
        run = subprocess.CompletedProcess([binary] + args, 127, "", "cannot run: %s" % e)
    return run, time.perf_counter() - started


def parse_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run_case(ck, binary, model, case, cwd, where):
    """Runs one case through the binary; compares against case["expected"]."""
    command, args = case["command"], case["args"]
    at = "%s, %s %s" % (where, command, " ".join(args))
    run, _ = run_binary(binary, [command] + model_args(model) + ["-f", "json"] + args,
                        case.get("input"), cwd)
    if "exit" in case:  # a usage error (2) or an input error (4)
        ck.equal("exit code", run.returncode, case["exit"], at)
        if case.get("names") and case["names"] not in run.stderr:
            ck.fail(at, "the error does not name %r: %r" % (case["names"], run.stderr.strip()))
        if case["exit"] == 4:  # as predict -f json: the line's error record
            try:
                records = parse_lines(run.stdout)
            except ValueError:
                records = None
            ck.equal("error records",
                     [(r.get("phrase"), r.get("exit_code")) for r in records or []],
                     [(line, 4) for line in case["input"]], at)
        else:
            ck.equal("stdout", run.stdout, "", at)
        return
    if run.returncode != 0:
        ck.fail(at, "exit %d: %s" % (run.returncode, run.stderr.strip()[:500]))
        return
    try:
        records = parse_lines(run.stdout)
    except ValueError as e:
        ck.fail(at, "not JSON Lines (%s): %r" % (e, run.stdout[:300]))
        return
    if not ck.equal("number of records", len(records), len(case["expected"]), at):
        return
    for i, (got, want) in enumerate(zip(records, case["expected"])):
        ck.records += 1
        record_at = "%s, record %d" % (at, i)
        if case.get("input"):
            record_at += " (%r)" % case["input"][i][:60]
        try:
            CHECKS[command](ck, got, want, record_at)
        except (KeyError, TypeError, IndexError) as e:
            ck.fail(record_at, "malformed record (%s: %s): %s" % (
                type(e).__name__, e, json.dumps(got)[:300]))
    if case.get("predict"):  # lens's last step against predict -f json -k K
        k = args[args.index("-k") + 1]
        # --batch 1: each phrase alone, as lens computes it (in a padded
        # batch, predict's last float32 digits depend on the other phrases).
        run2, _ = run_binary(binary, ["predict"] + model_args(model) +
                             ["-f", "json", "-k", k, "-q", "--batch", "1"], case["input"], cwd)
        predicted = parse_lines(run2.stdout)
        if ck.equal("predict records", len(predicted), len(records), at + " (predict)"):
            for got, p in zip(records, predicted):
                last = got["layers"][-1]
                ck.equal("last step's top against predict -f json -k %s" % k,
                         [(t["word"], repr(t["probability"])) for t in last["top"]],
                         [(t["word"], repr(t["probability"])) for t in p["predictions"]],
                         "%s, %r" % (at, got["phrase"]))
    if case.get("eval"):  # score --document's perplexity against eval's
        strided = args[args.index("--stride"):args.index("--stride") + 2] if "--stride" in args \
            else []
        run3, _ = run_binary(binary, ["eval"] + model_args(model) + ["-f", "json"] + strided +
                             [args[-1]], None, cwd)
        try:
            evaluated = json.loads(run3.stdout)["perplexity"]
        except (ValueError, KeyError):
            ck.fail(at, "eval failed: %s" % run3.stderr.strip()[:300])
            return
        got = records[0].get("perplexity")
        if evaluated is None or got is None or not math.isfinite(got):
            ck.equal("perplexity against eval's", finite_or_none(got), evaluated, at)
        else:
            want = case["expected"][0]
            scale = max([0.0] + [w["scale"] for w in want["words"]])
            ck.measure("score --document perplexity against eval's (relative)",
                       abs(math.log(got / evaluated)), logprob_limit(scale, want.get("strict")), at,
                       "score %r, eval %r" % (got, evaluated))


# ------------------------------------------------------------------ the cases

def predictable(config, words, phrase):
    """predict's rule (data/FORMAT.md): a phrase is refused (exit 4) when no
    word of it, after truncation, is in the vocabulary (bos alone is fine)."""
    from nextword_ref import tokenize
    tok = {"lowercase": True, "split_punctuation": True}
    tok.update(config.get("tokenizer", {}))
    bos = config.get("bos_token")
    tokens = ([bos] if bos else []) + tokenize(phrase, tok["lowercase"], tok["split_punctuation"])
    truncated = len(tokens) > config["max_len"]
    tokens = tokens[-config["max_len"]:]
    if bos and not truncated:
        if tokens == [bos]:
            return True
        tokens = tokens[1:]
    special = {config.get("unk_token", "<unk>"), bos}
    return any(t in words and t not in special for t in tokens)


def plan_random(seed, config, words, phrases, directory, fixtures=False):
    """The cases run on one random model. Phrases predict refuses (no known
    word) go to score only."""
    rng = random.Random(seed * 31 + 7)
    all_phrases = phrases
    phrases = [p for p in phrases if predictable(config, words, p)] or [
        next(w for w in words if w not in ("<unk>", "[UNK]", "<s>"))]
    known = [w for w in words if w not in ("<unk>", "[UNK]", "<s>")]
    plain = [w for w in known if w.isascii() and w.isalpha() and w.islower()]
    long_phrase = " ".join(rng.choice(known + random_models.UNKNOWN)
                           for _ in range(2 * config["max_len"] + 3))
    score_lines = all_phrases + [long_phrase, rng.choice(plain)]
    if config.get("bos_token"):
        score_lines.append("")
    document = os.path.join(directory, DOCUMENT_NAME)
    k = min(5, len(known))
    word = rng.choice(known)
    # The committed fixtures keep to fewer phrases: lens at every position and
    # the whole trace of one (the shortest of at least 3 words).
    short = min((p for p in phrases if len(p.split()) >= 3), key=len, default=phrases[0])
    cases = [
        {"command": "score", "args": [], "input": score_lines},
        {"command": "score", "args": ["--document", document], "eval": True},
        # A window per word (the only way before --stride), and windows 3 apart.
        {"command": "score", "args": ["--stride", "1", "--document", document], "eval": True},
        {"command": "score", "args": ["--stride", "3", "--document", document], "eval": True},
        {"command": "lens", "args": ["-k", "3", "--mid", "--all-positions"],
         "input": [short] if fixtures else phrases},
        {"command": "lens", "args": ["-k", str(k)], "input": phrases, "predict": True},
        {"command": "trace", "args": [], "input": [short] if fixtures else phrases},
        {"command": "trace", "args": ["--only", "blocks.*.attn.hook_pattern", "--only", "logits",
                                      "--only", "hook_*embed"],
         "input": phrases[-1:] if fixtures else phrases[-2:]},
        {"command": "attribute", "args": [], "input": phrases},
        {"command": "attribute", "args": ["--word", word], "input": phrases[:2]},
    ]
    document_text = "\n".join(all_phrases[:2]) + "\n\n" + all_phrases[2] + "\n<|endoftext|>\n" + \
        "\n".join(all_phrases[3:]) + "\n" + long_phrase + "\n"
    return cases, document_text


def plan_default(directory, fixtures=False):
    phrases = DEFAULT_PHRASES
    document = os.path.join(directory, DOCUMENT_NAME)
    trace_only = ["--only", "blocks.0.attn.hook_[ap]*", "--only", "blocks.1.attn.hook_z",
                  "--only", "blocks.3.hook_resid_post", "--only", "logits"]
    cases = [
        {"command": "score", "args": [], "input": phrases + [DEFAULT_LONG, ""]},
        {"command": "score", "args": ["--document", document], "eval": True},
        {"command": "lens", "args": ["-k", "5"], "input": phrases + [DEFAULT_LONG],
         "predict": True},
        {"command": "lens", "args": ["-k", "3", "--mid", "--all-positions"],
         "input": ["once upon a"]},
        {"command": "trace", "args": trace_only if fixtures else [], "input": ["once upon a"]},
        {"command": "attribute", "args": [], "input": phrases + [DEFAULT_LONG]},
        {"command": "attribute", "args": ["--word", "cat"], "input": phrases[:2]},
        {"command": "attribute", "args": ["--word", "zebrafoo"], "input": ["the"], "exit": 2,
         "names": "zebrafoo"},
        {"command": "attribute", "args": ["--word", "<unk>"], "input": ["the"], "exit": 2,
         "names": "<unk>"},
        {"command": "attribute", "args": ["--word", "<bos>"], "input": ["the"], "exit": 2,
         "names": "<bos>"},
        # predict's rule: a phrase with no known word is an input error (4).
        {"command": "lens", "args": [], "input": ["zebrafoo quokkaqq"], "exit": 4,
         "names": "zebrafoo"},
    ]
    for case in cases:
        case["strict"] = True  # the default model's tolerances: see the docstring
    return cases, DEFAULT_DOCUMENT


# ------------------------------------------------------------------ the reference side

def expectations(inspect_ref, model, case, compact=False):
    """The reference's records for a case, as plain JSON (inspect_ref: the
    module, imported by the caller as it needs torch)."""
    special = inspect_ref.specials(model)
    args = case["args"]

    def opt(name, default=None):
        return args[args.index(name) + 1] if name in args else default
    num = (lambda x: rounded(x)) if compact else (lambda x: x)
    out = []

    def scale_of(logits):
        return max(abs(v) for v in logits)

    if case["command"] == "score":
        if "--document" in args:
            stride = int(opt("--stride")) if "--stride" in args else None
            records = [inspect_ref.score_document(model, opt("--document"), stride)]
        else:
            records = [inspect_ref.score_line(model, line) for line in case["input"]]
        model32 = inspect_ref.float32_copy(model)
        for r in records:
            # torch's own float32 on each context: what float32 alone loses there.
            with inspect_ref.float32():
                logits32 = inspect_ref.context_logits(
                    model32, r["ids"], [w["_position"] for w in r["words"]],
                    inspect_ref.document_stride(model, stride) if "--document" in args else 1)
            words = []
            for w in r["words"]:
                logits = w["_logits"].tolist()
                scale = scale_of(logits)
                lp32 = inspect_ref.torch.log_softmax(logits32[w["_position"]].double(), -1)[w["id"]]
                words.append({"word": w["word"], "id": w["id"], "logprob": num(w["logprob"]),
                              "rank": rank_range(logits, w["id"], special, TOL * scale),
                              "unknown": w["unknown"], "scale": rounded(scale, 4),
                              "float32": rounded(abs(lp32.item() - w["logprob"]), 2)})
            e = {k: r[k] for k in r if k in ("text", "document", "tokens", "ids", "oov")}
            e.update({"words": words, "logprob": num(r["logprob"]),
                      "perplexity": finite_or_none(r["perplexity"])})
            out.append(e)
    elif case["command"] == "lens":
        k = int(opt("-k", 5))
        for phrase in case["input"]:
            r = inspect_ref.lens(model, phrase, k, "--mid" in args, "--all-positions" in args)
            steps = []
            last = {}  # position -> logits of its last step
            for s in r["layers"]:
                last[s["position"]] = s["_logits"].tolist()
            for s in r["layers"]:
                logits = s["_logits"].tolist()
                probabilities = inspect_ref.torch.softmax(s["_logits"], dim=-1).tolist()
                tol = TOL * scale_of(logits)
                order = sorted((j for j in range(len(logits)) if j not in special),
                               key=lambda j: (-logits[j], j))
                best = order[:k]
                floor = logits[best[-1]] - tol if best else float("inf")
                candidates = {model.words[j]: [num(logits[j]), num(probabilities[j])]
                              for j in order if logits[j] >= floor}
                final_logits = last[s["position"]]
                final_tol = TOL * scale_of(final_logits)
                top1 = max(final_logits[j] for j in order)
                final = {}
                for j in order:
                    if final_logits[j] >= top1 - final_tol:
                        final[model.words[j]] = {
                            "rank": rank_range(logits, j, special, tol),
                            "probability": num(probabilities[j])}
                steps.append({"position": s["position"], "layer": s["layer"],
                              "tol": rounded(tol, 4),
                              "sorted": [num(logits[j]) for j in best],
                              "words": [model.words[j] for j in best],
                              "candidates": candidates, "final": final})
            e = {key: r[key] for key in ("phrase", "tokens", "ids", "unknown", "truncated")}
            e["layers"] = steps
            out.append(e)
    elif case["command"] == "trace":
        only = [args[i + 1] for i, a in enumerate(args) if a == "--only"]
        for phrase in case["input"]:
            r = inspect_ref.trace(model, phrase, only)
            everything = inspect_ref.trace(model, phrase)["activations"]
            for name, a in r["activations"].items():
                a["data"] = [num(v) for v in a["data"]]
                if name.endswith("hook_pattern"):
                    scores = everything[name.replace("hook_pattern", "hook_attn_scores")]["data"]
                    a["scale"] = rounded(max(abs(v) for v in scores if v is not None), 4)
            out.append(r)
    elif case["command"] == "attribute":
        if "exit" in case:
            return []
        word = opt("--word")
        for phrase in case["input"]:
            r = inspect_ref.attribute(model, phrase, word)
            logits = r["_logits"].tolist()
            scale = scale_of(logits)
            words = [word] if word else [
                model.words[j] for j in range(len(logits))
                if j not in special and logits[j] >= logits[r["id"]] - TOL * scale]
            candidates = {}
            for w in words:
                a = r if w == r["word"] else inspect_ref.attribute(model, phrase, w)
                candidates[w] = {"id": a["id"], "logit": num(a["logit"]),
                                 "parts": [{"name": p["name"], "value": num(p["value"])}
                                           for p in a["parts"]],
                                 "constant": num(a["constant"])}
            out.append({"phrase": phrase, "tokens": r["tokens"], "ids": r["ids"],
                        "scale": rounded(scale, 4), "candidates": candidates})
    if case.get("strict"):
        for e in out:
            e["strict"] = True
    return out


def load_reference(directory):
    import inspect_ref
    return inspect_ref, inspect_ref.load(directory)


def flags_missing(configs):
    from make_fixtures import covered
    missing = covered(configs)
    if not any("bos_token" not in c for c in configs):
        missing.append("no bos_token")
    if not any(c["d_ff"] == 0 and c["n_layers"] for c in configs):
        missing.append("d_ff=0")
    return missing


# ------------------------------------------------------------------ modes

def live(args, ck):
    import torch
    torch.set_num_threads(1)
    timings = {"binary": 0.0}
    with tempfile.TemporaryDirectory(prefix="nextword-inspect-") as tmp:
        models = []
        # Then as many with the modern options, from seed + 1000 on.
        seeds = [(seed, False, False) for seed in range(args.seed, args.seed + args.models)]
        seeds += [(seed + 1000, True, False) for seed in range(args.seed, args.seed + args.modern)]
        # And with an adaptive softmax, from seed + 2000 on (half of them modern).
        seeds += [(seed + 2000, seed % 2 == 0, True)
                  for seed in range(args.seed, args.seed + args.adaptive)]
        for seed, modern, adaptive in seeds:
            # Half of the modern ones with grouped-query attention (as llama2.c's models have).
            config, tensors, words, phrases = random_models.random_model(
                seed, modern, adaptive, grouped=modern and not adaptive and seed % 2 == 1)
            directory = os.path.join(tmp, str(seed))
            random_models.write_model(directory, seed, config, tensors, words)
            cases, document = plan_random(seed, config, words, phrases, directory)
            models.append(("seed %d (%s)" % (seed, random_models.describe(config)), directory,
                           cases, document, os.path.join(directory, DOCUMENT_NAME), config))
        missing = flags_missing([m[5] for m in models])
        if missing:
            message = "flags not covered by seeds %d..%d: %s" % (
                args.seed, args.seed + args.models - 1, ", ".join(missing))
            if (args.seed, args.models) == (DEFAULT_SEED, DEFAULT_MODELS):
                ck.fail("live models", message)
            else:
                print("note: " + message)
        if not args.no_default:
            cases, document = plan_default(tmp)
            models.append(("default model", os.path.join(REPO, DEFAULT_MODEL), cases, document,
                           os.path.join(tmp, DOCUMENT_NAME), None))
        for where, directory, cases, document, document_path, _ in models:
            with open(document_path, "w", encoding="utf-8") as f:
                f.write(document)
            inspect_ref, model = load_reference(directory)
            with torch.no_grad():
                # This forward pass against nextword_ref's (an assertion).
                for phrase in cases[0]["input"][:3]:
                    if where == "default model" or predictable(model.config, model.words, phrase):
                        inspect_ref.self_check(model, phrase)
                for case in cases:
                    case["expected"] = expectations(inspect_ref, model, case)
                    started = time.perf_counter()
                    run_case(ck, args.nextword, directory, case, None, where)
                    timings["binary"] += time.perf_counter() - started
    return timings


def fixture_files():
    return sorted(os.path.join(FIXTURES, name) for name in os.listdir(FIXTURES)
                  if name.endswith(".json"))


def fixtures(args, ck):
    for path in fixture_files():
        with open(path, encoding="utf-8") as f:
            fixture = json.load(f)
        where = "fixture %s" % os.path.basename(path)
        for case in fixture["cases"]:
            run_case(ck, args.nextword, fixture["model"], case, REPO, where)
    return {}


def write_fixtures():
    import torch
    parity = os.path.join(REPO, "tests", "fixtures", "parity")
    shutil.rmtree(FIXTURES, ignore_errors=True)
    os.makedirs(FIXTURES)
    relative_fixtures = os.path.relpath(FIXTURES, REPO)
    with open(os.path.join(FIXTURES, DOCUMENT_NAME), "w", encoding="utf-8") as f:
        f.write(DEFAULT_DOCUMENT)
    configs = []
    todo = []
    names = sorted(os.listdir(parity))
    for index in FIXTURE_MODELS:
        name = [n for n in names if n.startswith("%02d-" % index)][0]
        # make_fixtures.py draws models 32 on with the modern options.
        config, tensors, words, phrases = random_models.random_model(index, modern=index >= 32)
        configs.append(config)
        cases, document = plan_random(index, config, words, phrases, "", fixtures=True)
        # Each model's document sits beside its expectations.
        document_path = os.path.join(relative_fixtures, name + ".txt")
        for case in cases:
            if "--document" in case["args"]:
                case["args"] = ["--document", document_path]
        todo.append((name, os.path.join("tests", "fixtures", "parity", name), cases,
                     document, document_path))
    missing = flags_missing(configs)
    if missing:
        sys.exit("FIXTURE_MODELS do not cover: " + ", ".join(missing))
    for name, model_dir in (("default", DEFAULT_MODEL), ("previous-default", PREVIOUS_DEFAULT)):
        cases, _ = plan_default(relative_fixtures, fixtures=True)
        todo.append((name, model_dir, cases, None, None))
    cwd = os.getcwd()
    os.chdir(REPO)  # the document paths are relative to the repository
    try:
        for name, model_dir, cases, document, document_path in todo:
            if document is not None:
                with open(document_path, "w", encoding="utf-8") as f:
                    f.write(document)
            inspect_ref, model = load_reference(model_dir)
            with torch.no_grad():
                for case in cases:
                    case["expected"] = expectations(inspect_ref, model, case, compact=True)
            with open(os.path.join(FIXTURES, name + ".json"), "w", encoding="utf-8") as f:
                json.dump({"model": model_dir, "cases": cases}, f, separators=(",", ":"))
    finally:
        os.chdir(cwd)
    total = sum(os.path.getsize(os.path.join(FIXTURES, n)) for n in os.listdir(FIXTURES))
    print("wrote %d fixtures (%d KB) to %s" % (len(todo), total // 1024,
                                              os.path.relpath(FIXTURES, cwd)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword", nargs="?", help="the nextword binary")
    parser.add_argument("--fixtures", action="store_true",
                        help="compare against tests/fixtures/inspect (no torch needed)")
    parser.add_argument("--write-fixtures", action="store_true",
                        help="regenerate tests/fixtures/inspect from the reference")
    parser.add_argument("--models", type=int, default=DEFAULT_MODELS, help="random models (live)")
    parser.add_argument("--modern", type=int, default=12,
                        help="random models with rope, rmsnorm, swiglu (live)")
    parser.add_argument("--adaptive", type=int, default=8,
                        help="random models with an adaptive softmax (live)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="first seed (live); the fixtures use 0..31, live_parity 1000..")
    parser.add_argument("--no-default", action="store_true", help="skip the default model (live)")
    parser.add_argument("--require-torch", default="0")
    args = parser.parse_args()
    required = args.require_torch in ("1", "ON", "true", "TRUE", "on")
    if not args.fixtures:
        try:
            import torch  # noqa: F401
        except ImportError as e:
            print("inspect parity: cannot import torch (%s); install python3-torch" % e)
            return 1 if required else 77
    if args.write_fixtures:
        write_fixtures()
        return 0
    if not args.nextword:
        parser.error("the nextword binary is required")
    args.nextword = os.path.abspath(args.nextword)
    ck = Checker()
    started = time.perf_counter()
    timings = fixtures(args, ck) if args.fixtures else live(args, ck)
    seconds = time.perf_counter() - started
    for failure in ck.failures:
        print("FAIL " + failure)
    mode = "fixtures" if args.fixtures else (
        "live (%d random models from seed %d, %d with rope, rmsnorm or swiglu from seed %d, "
        "%d with an adaptive softmax from seed %d%s)" % (
            args.models, args.seed, args.modern, args.seed + 1000, args.adaptive, args.seed + 2000,
            "" if args.no_default else ", and the default model"))
    print("inspect parity, %s: %d records, %d checks, %d failures, %.1f s%s" % (
        mode, ck.records, ck.checks, len(ck.failures), seconds,
        " (binary %.1f s)" % timings["binary"] if "binary" in timings else ""))
    print("largest errors: " + "; ".join(
        "%s %.3g" % (k, v) if isinstance(v, float) else "%s %d" % (k, v)
        for k, v in sorted(ck.worst.items())))
    return 1 if ck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
