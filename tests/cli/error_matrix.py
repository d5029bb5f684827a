#!/usr/bin/env python3
"""The error matrix: bad inputs through the binary, end to end.

    python3 tests/cli/error_matrix.py build/nextword data

Each case builds its files from the hand-written fruit model, runs one
command, and checks the documented exit code, one line on stderr naming the
file and field (a substring given per case), nothing on stdout (or the one
error record a JSON case expects), and no crash (no signal, no "internal
error"). Cases that stream stdin check their records instead. The count of
cases is printed at the end.
"""
import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import hostile_cases

NEXTWORD = DATA = None
OK, USAGE, MODEL, INPUT, IO = 0, 2, 3, 4, 5


def fruit_weights():
    with open(os.path.join(DATA, "examples", "fruit", "weights.json"), encoding="utf-8") as f:
        return json.load(f)


VOCAB = ["<unk>", "apple", "banana", "phone", "pie", "store"]


class Case:
    def __init__(self, name, code, message, weights=None, vocab=None, raw_weights=None,
                 raw_vocab=None, args=None, stdin=None, stdout=None, safetensors=None,
                 lexicon=None, history=None, command="predict"):
        self.name, self.code, self.message = name, code, message
        # `complete` runs get lexicon.tsv in the model directory and a
        # history file (bytes) given with --history.
        self.lexicon, self.history, self.command = lexicon, history, command
        self.weights, self.vocab = weights, vocab
        self.raw_weights, self.raw_vocab = raw_weights, raw_vocab
        self.args, self.stdin, self.stdout, self.safetensors = args, stdin, stdout, safetensors


def edited(edit):
    w = fruit_weights()
    edit(w)
    return w


def text_with(key_path, extra):
    """The fruit weights text with `extra` ("key": value) written again inside key_path."""
    text = json.dumps(fruit_weights())
    anchor = '"%s": {' % key_path
    at = text.index(anchor) + len(anchor)
    return text[:at] + extra + ", " + text[at:]


def safetensors_bytes(weights, edit=None):
    """The fruit model as safetensors, header optionally edited."""
    header = {"__metadata__": {"format": "nextword", "version": "1",
                               "config": json.dumps(weights["config"])}}
    data, offset = b"", 0
    for name, t in weights["tensors"].items():
        flat = []

        def walk(x):
            if isinstance(x, list):
                for y in x:
                    walk(y)
            else:
                flat.append(float(x))
        walk(t["data"])
        raw = struct.pack("<%df" % len(flat), *flat)
        header[name] = {"dtype": "F32", "shape": t["shape"], "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    if edit:
        edit(header)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def cases():
    good = json.dumps(fruit_weights())
    tensor = "layers.0.attn.w_q"
    yield from [
        Case("truncated JSON at 10%", MODEL, "weights.json: not valid JSON", raw_weights=good[:len(good) // 10]),
        Case("truncated JSON at 50%", MODEL, "weights.json: not valid JSON", raw_weights=good[:len(good) // 2]),
        Case("truncated JSON, last byte gone", MODEL, "weights.json: not valid JSON", raw_weights=good[:-1]),
        Case("not JSON at all", MODEL, "weights.json: not valid JSON", raw_weights="PK\x03\x04 zip?"),
        Case("empty weights file", MODEL, "weights.json: the file is empty", raw_weights=""),
        Case("empty vocab file", MODEL, "vocab.json: the file is empty", raw_vocab=""),
        Case("a directory for weights", MODEL, "is a directory", args=["--weights", "DIR"]),
        Case("an unreadable file", MODEL, "mem: cannot read", args=["--weights", "/proc/self/mem"]),
        Case("a missing file", MODEL, "weights.json: cannot open: No such file or directory",
             args=["--weights", "ABSENT/weights.json"]),
        Case("wrong format", MODEL, 'weights.json: format: must be "nextword"',
             weights=edited(lambda w: w.update(format="gpt2"))),
        Case("wrong version", MODEL, "weights.json: version: unsupported version 2",
             weights=edited(lambda w: w.update(version=2))),
        Case("missing config field", MODEL, "weights.json: config.d_model: missing",
             weights=edited(lambda w: w["config"].pop("d_model"))),
        Case("unknown config field", MODEL, "weights.json: config.dropout: unknown config field",
             weights=edited(lambda w: w["config"].update(dropout=0.1))),
        Case("negative dimension", MODEL, "weights.json: config.d_model: must be between 1 and",
             weights=edited(lambda w: w["config"].update(d_model=-2))),
        Case("zero heads", MODEL, "weights.json: config.n_heads: must be between 1 and",
             weights=edited(lambda w: w["config"].update(n_heads=0))),
        Case("absurd dimension, d_model 10^12", MODEL, "weights.json: config.d_model: must be between 1 and",
             weights=edited(lambda w: w["config"].update(d_model=10 ** 12))),
        Case("a dimension too large for the file", MODEL, "weights.json: config: needs",
             weights=edited(lambda w: w["config"].update(vocab_size=1 << 22))),
        Case("shape mismatch", MODEL, "weights.json: tensors.%s: shape [2,3], config needs [2,2]" % tensor,
             weights=edited(lambda w: w["tensors"][tensor].update(shape=[2, 3]))),
        Case("missing tensor", MODEL, "weights.json: tensors.classifier: missing (config needs shape [6,2])",
             weights=edited(lambda w: w["tensors"].pop("classifier"))),
        Case("unknown tensor, did you mean", MODEL,
             'tensors.layers.0.attn.wq: unknown tensor for this config (did you mean "layers.0.attn.w_q"?)',
             weights=edited(lambda w: w["tensors"].update({"layers.0.attn.wq": w["tensors"].pop(tensor)}))),
        Case("duplicate tensor field", MODEL, "weights.json: tensors.embedding.shape: appears twice",
             raw_weights=text_with("embedding", '"shape": [6, 2]')),
        Case("duplicate config key", MODEL, "weights.json: config.d_model: appears twice",
             raw_weights=text_with("config", '"d_model": 2')),
        Case("Inf in data", MODEL, "weights.json: tensors.embedding.data[0][0]: value 1e+39 is not a finite float32",
             weights=edited(lambda w: w["tensors"]["embedding"]["data"][0].__setitem__(0, 1e39))),
        Case("a NaN literal", MODEL, "weights.json: not valid JSON",
             raw_weights=good.replace("[[0, 0], [1, 1]", "[[NaN, 0], [1, 1]", 1)),
        Case("a number beyond double", MODEL, "weights.json: tensors.embedding: number overflow",
             raw_weights=good.replace("[[0, 0], [1, 1]", "[[1e999, 0], [1, 1]", 1)),
        Case("a string in data", MODEL, 'weights.json: tensors.embedding.data[1][0]: must be a number, got "1"',
             weights=edited(lambda w: w["tensors"]["embedding"]["data"][1].__setitem__(0, "1"))),
        Case("bad base64", MODEL, "weights.json: tensors.classifier.b64: is not valid base64",
             weights=edited(lambda w: w["tensors"].update(
                 classifier={"shape": [6, 2], "dtype": "f32", "b64": "AAAA!AAA" * 8}))),
        Case("NaN in base64", MODEL, "weights.json: tensors.classifier.b64: element 0 is not finite",
             weights=edited(lambda w: w["tensors"].update(classifier={
                 "shape": [6, 2], "dtype": "f32",
                 "b64": base64.b64encode(struct.pack("<12f", float("nan"), *[0.0] * 11)).decode()}))),
        Case("safetensors offsets past the data", MODEL, "w.safetensors: classifier.data_offsets: [",
             safetensors=safetensors_bytes(fruit_weights(), lambda h: h["classifier"].update(
                 data_offsets=[h["classifier"]["data_offsets"][0], 1 << 20]))),
        Case("safetensors size that disagrees with the shape", MODEL, "holds 40 bytes, shape [6,2] needs 48",
             safetensors=safetensors_bytes(fruit_weights(), lambda h: h["classifier"].update(
                 data_offsets=[h["classifier"]["data_offsets"][0], h["classifier"]["data_offsets"][0] + 40]))),
        Case("safetensors overlapping tensors", MODEL, "overlaps another tensor",
             safetensors=safetensors_bytes(fruit_weights(), lambda h: h["layers.0.attn.w_k"].update(
                 data_offsets=h[tensor]["data_offsets"]))),
        Case("safetensors header length that lies", MODEL, "w.safetensors: header length 1000000",
             safetensors=struct.pack("<Q", 1000000) + b"{}"),
        Case("safetensors in double precision", MODEL,
             'w.safetensors: embedding.dtype: must be "F32", "F16" or "BF16"',
             safetensors=safetensors_bytes(fruit_weights(), lambda h: h["embedding"].update(dtype="F64"))),
        Case("vocabulary with a duplicate", MODEL, 'vocab.json: [5]: duplicate word "apple" (also id 1)',
             vocab=VOCAB[:5] + ["apple"]),
        Case("vocabulary with a non-string", MODEL, "vocab.json: [3]: must be a string, got 3",
             vocab=VOCAB[:3] + [3] + VOCAB[4:]),
        Case("vocabulary size against the config", MODEL, "vocab.json: has 5 words",
             vocab=VOCAB[:5]),
        Case("no <unk> in the vocabulary", MODEL, 'has no entry for unk_token "<unk>"',
             vocab=["<nope>"] + VOCAB[1:]),
        Case("object vocabulary repeating a word", MODEL, "vocab.json: apple: appears twice",
             raw_vocab='{"<unk>": 0, "apple": 1, "banana": 2, "phone": 3, "pie": 4, "apple": 5}'),
        Case("a phrase of unknown words", INPUT, "no word of the phrase is in the vocabulary: kiwi mango",
             args=["kiwi mango"]),
        Case("a phrase of invalid UTF-8", INPUT, "no word of the phrase is in the vocabulary",
             args=["\udcff\udcfe apple\udcc3"]),
        Case("a phrase with no words", INPUT, "the phrase has no words", args=["   "]),
        Case("a phrase with a control character", INPUT, "vocabulary: kiwi\\x1bmango",
             args=["kiwi\x1bmango"]),
        Case("a lexicon line without a tab", MODEL, "m/lexicon.tsv:2: expected WORD<TAB>COUNT",
             command="complete", lexicon=b"pear\t3\npeach 1\n"),
        Case("an empty lexicon line", MODEL, "m/lexicon.tsv:2: expected WORD<TAB>COUNT",
             command="complete", lexicon=b"pear\t3\n\npeach\t1\n"),
        Case("a lexicon count of zero", MODEL, "m/lexicon.tsv:1: the count is not a whole number",
             command="complete", lexicon=b"pear\t0\n"),
        Case("a negative lexicon count", MODEL, "m/lexicon.tsv:1: the count is not a whole number",
             command="complete", lexicon=b"pear\t-3\n"),
        Case("a lexicon count above 2^63", MODEL, "m/lexicon.tsv:1: the count is not a whole number",
             command="complete", lexicon=b"pear\t99999999999999999999\n"),
        Case("a lexicon word twice", MODEL, 'm/lexicon.tsv:3: "pear" appears twice',
             command="complete", lexicon=b"pear\t3\nfig\t2\npear\t1\n"),
        Case("a lexicon word of invalid UTF-8", MODEL, "m/lexicon.tsv:1: the word is not valid UTF-8",
             command="complete", lexicon=b"p\xffar\t3\n"),
        Case("a lexicon word with a control character", MODEL,
             "m/lexicon.tsv:1: the word holds a space or control character",
             command="complete", lexicon=b"pe\x1bar\t3\n"),
        Case("a lexicon with CRLF lines", MODEL, "m/lexicon.tsv:1: the count is not a whole number",
             command="complete", lexicon=b"pear\t3\r\n"),
        Case("a history line of invalid UTF-8", INPUT, "history.txt:2: not valid UTF-8",
             command="complete", history=b"we met zorblax\nat \xff noon\n"),
        Case("a history with a NUL byte", INPUT, "history.txt:1: holds a control character",
             command="complete", history=b"zor\x00blax\n"),
        Case("complete with k of 0", USAGE, "--top-k", command="complete", args=["-k", "0", "ap"]),
        Case("eval --ksr on a missing text", IO, "absent.txt: cannot open", command="eval",
             args=["--ksr", "ABSENT.txt"]),
        Case("an unknown command", USAGE, "unknown command 'predcit'", args=None),
        Case("a bad option value", USAGE, "--top-k", args=["-k", "0", "apple"]),
    ]
    yield from inspect_cases()


def inspect_cases():
    """score, lens, trace and attribute: bad phrases, options and models."""
    unknown = "no word of the phrase is in the vocabulary: kiwi mango"
    for command in ("lens", "trace", "attribute"):
        yield from [
            # A phrase given as an argument prints nothing, as text or JSON (as
            # predict); a stdin line gets an error record (the stream case).
            Case(command + ": a phrase of unknown words", INPUT, unknown, command=command,
                 args=["-f", "text", "kiwi mango"], stdout=""),
            Case(command + ": a phrase of unknown words, JSON", INPUT, unknown, command=command,
                 args=["-f", "json", "kiwi mango"], stdout=""),
            Case(command + ": a phrase of invalid UTF-8", INPUT,
                 "no word of the phrase is in the vocabulary", command=command,
                 args=["-f", "text", "\udcff\udcfe apple\udcc3"], stdout=""),
            Case(command + ": a phrase with no words", INPUT, "the phrase has no words",
                 command=command, args=["-f", "text", "   "], stdout=""),
            Case(command + ": a model with a missing tensor", MODEL,
                 "weights.json: tensors.classifier: missing (config needs shape [6,2])",
                 command=command, args=["apple"],
                 weights=edited(lambda w: w["tensors"].pop("classifier"))),
            Case(command + ": a bad format", USAGE, "--format", command=command,
                 args=["-f", "tsv", "apple"]),
        ]
    yield from [
        Case("lens with k of 0", USAGE, "--top-k", command="lens", args=["-k", "0", "apple"]),
        Case("attribute --word not in the vocabulary", USAGE,
             '--word: "kiwi" is not a word of the vocabulary', command="attribute",
             args=["--word", "kiwi", "banana apple"]),
        Case("attribute --word a special token", USAGE, '"<unk>"', command="attribute",
             args=["--word", "<unk>", "banana apple"]),
        Case("attribute --word not in the vocabulary, JSON", USAGE, '"Pie"', command="attribute",
             args=["-f", "json", "--word", "Pie", "banana apple"]),
        Case("trace --only matching nothing", USAGE,
             "--only: no activation of this model matches nope*", command="trace",
             args=["--only", "nope*", "banana apple"]),
        Case("trace --only a name this model lacks", USAGE, "hook_pos_embed", command="trace",
             args=["--only", "hook_pos_embed", "--only", "blocks.0.ln1.*", "banana apple"]),
        Case("score with a batch of 0", USAGE, "--batch", command="score",
             args=["--batch", "0"]),
        Case("score filtering JSON", USAGE, "--max-perplexity", command="score",
             args=["-f", "json", "--max-perplexity", "9"]),
        Case("score --document and a text", USAGE, "--document", command="score",
             args=["--document", "ABSENT.txt", "banana"]),
        Case("score --document of a missing file", IO, "absent.txt: cannot open",
             command="score", args=["--document", "ABSENT.txt"]),
        Case("score --document of a directory", IO, "is a directory, expected a text file",
             command="score", args=["--document", "TMP"]),
        Case("score with a missing tensor", MODEL,
             "weights.json: tensors.classifier: missing (config needs shape [6,2])",
             command="score", args=["apple pie"],
             weights=edited(lambda w: w["tensors"].pop("classifier"))),
        Case("score with a bad vocabulary", MODEL, "vocab.json: has 5 words", command="score",
             args=["apple pie"], vocab=VOCAB[:5]),
    ]


def run_case(case, tmp):
    model = os.path.join(tmp, "m")
    shutil.rmtree(model, ignore_errors=True)
    os.mkdir(model)
    with open(os.path.join(model, "vocab.json"), "w", encoding="utf-8") as f:
        f.write(case.raw_vocab if case.raw_vocab is not None else json.dumps(case.vocab or VOCAB))
    with open(os.path.join(model, "weights.json"), "w", encoding="utf-8") as f:
        f.write(case.raw_weights if case.raw_weights is not None
                else json.dumps(case.weights or fruit_weights()))
    vocab = os.path.join(model, "vocab.json")
    if case.lexicon is not None:
        with open(os.path.join(model, "lexicon.tsv"), "wb") as f:
            f.write(case.lexicon)
    history = []
    if case.history is not None:
        history = ["--history", os.path.join(tmp, "history.txt")]
        with open(history[1], "wb") as f:
            f.write(case.history)
    if case.command != "predict":
        args = [a.replace("ABSENT", os.path.join(tmp, "absent")) for a in (case.args or ["ap"])]
        args = [tmp if a == "TMP" else a for a in args]
        command = [NEXTWORD, case.command, "-m", model, *history, *args]
    elif case.name == "an unknown command":
        command = [NEXTWORD, "predcit", "apple"]
    elif case.safetensors is not None:
        path = os.path.join(model, "w.safetensors")
        with open(path, "wb") as f:
            f.write(case.safetensors)
        command = [NEXTWORD, "predict", "--vocab", vocab, "--weights", path, "apple"]
    elif case.args and case.args[0] == "--weights":
        target = case.args[1].replace("DIR", model).replace("ABSENT", os.path.join(tmp, "absent"))
        command = [NEXTWORD, "predict", "--vocab", vocab, "--weights", target, "apple"]
    else:
        command = [NEXTWORD, "predict", "-m", model, *(case.args or ["apple"])]
    r = subprocess.run([os.fsencode(c) for c in command], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, check=False)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def stream_cases(tmp):
    """Bad lines on stdin: error records in place, the rest flows, memory bounded."""
    fruit = os.path.join(DATA, "examples", "fruit")
    failures = []
    lines = [b"banana apple", b"banana\x00apple", b"\xff\xfe\xfd", b"phone apple", b"kiwi",
             b"apple " * 2_000_000 + b"banana apple", b"phone apple"]
    path = os.path.join(tmp, "stdin.txt")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    with open(path, "rb") as stdin:
        r = subprocess.run(["/usr/bin/time", "-f", "maxrss %M", NEXTWORD, "predict", "-m", fruit, "-f",
                            "json", "-k", "1"], stdin=stdin, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60, check=False)
    records = [json.loads(l) for l in r.stdout.decode().splitlines()]
    err = [l for l in r.stderr.decode("utf-8", "replace").splitlines()
           if not l.startswith("Command exited")]
    rss_kb = int(err[-1].split()[-1])
    words = [x.get("predictions", [{}])[0].get("word") if "error" not in x else "ERROR" for x in records]
    if r.returncode != INPUT:
        failures.append("stream: exit %d, expected %d" % (r.returncode, INPUT))
    if words != ["pie", "ERROR", "ERROR", "store", "ERROR", "pie", "store"]:
        failures.append("stream: records %s" % words)
    if err[:-1] != ["nextword: <stdin>:2: no word of the phrase is in the vocabulary: banana\\x00apple",
                    "nextword: <stdin>:3: no word of the phrase is in the vocabulary: \\xff\\xfe\\xfd",
                    "nextword: <stdin>:5: no word of the phrase is in the vocabulary: kiwi"]:
        failures.append("stream: stderr %r" % err[:-1])
    if rss_kb > 100_000:
        failures.append("stream: a 12 MB line took %d KB" % rss_kb)
    return 2, failures


def inspect_stream_cases(tmp):
    """The stream of stream_cases through score, lens, trace and attribute: one
    record per line in order (score takes any line), memory bounded."""
    fruit = os.path.join(DATA, "examples", "fruit")
    failures = []
    lines = [b"banana apple", b"banana\x00apple", b"\xff\xfe\xfd", b"", b"kiwi",
             b"apple " * 2_000_000 + b"banana apple", b"phone apple"]
    path = os.path.join(tmp, "stdin.txt")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")

    def run_stream(*args):
        with open(path, "rb") as stdin:
            r = subprocess.run(["/usr/bin/time", "-f", "maxrss %M", NEXTWORD, *args, "-m", fruit],
                               stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=60, check=False)
        err = [l for l in r.stderr.decode("utf-8", "replace").splitlines()
               if not l.startswith("Command exited")]
        rss_kb = int(err[-1].split()[-1])
        if rss_kb > 100_000:
            failures.append("%s stream: a 12 MB line took %d KB" % (args[0], rss_kb))
        return r.returncode, [json.loads(l) for l in r.stdout.decode().splitlines()], err[:-1]

    # score: every line is a record, even one of no known word; exit 0.
    code, records, err = run_stream("score", "-f", "json")
    if code != OK:
        failures.append("score stream: exit %d, expected 0" % code)
    ppl = [None if x["perplexity"] is None else round(x["perplexity"], 3) for x in records]
    if ppl[:5] != [59.598, None, None, None, None] or ppl[6:] != [59.598] or ppl[5] is None:
        failures.append("score stream: perplexities %s" % ppl)
    if err[:1] != ["nextword: <stdin>:6: note: line longer than 64 KiB: only its last 64 KiB "
                   "were read"] or len(err) != 2 or not err[1].startswith("nextword: scored 7 lines"):
        failures.append("score stream: stderr %r" % err)
    # lens, trace, attribute: error records in place of the bad lines; exit 4.
    bad = ["nextword: <stdin>:2: no word of the phrase is in the vocabulary: banana\\x00apple",
           "nextword: <stdin>:3: no word of the phrase is in the vocabulary: \\xff\\xfe\\xfd",
           "nextword: <stdin>:4: the phrase has no words",
           "nextword: <stdin>:5: no word of the phrase is in the vocabulary: kiwi"]
    for command in ("lens", "trace", "attribute"):
        code, records, err = run_stream(command, "-f", "json")
        if code != INPUT:
            failures.append("%s stream: exit %d, expected %d" % (command, code, INPUT))
        kinds = ["ERROR" if "error" in x else x["tokens"][-1] for x in records]
        if kinds != ["apple", "ERROR", "ERROR", "ERROR", "ERROR", "apple", "apple"]:
            failures.append("%s stream: records %s" % (command, kinds))
        if err != bad:
            failures.append("%s stream: stderr %r" % (command, err))
    return 4, failures


def hostile_case(tmp):
    """A 77 MB weights.json with one bad value in its only tensor: refused with
    a message naming the tensor, in far less memory than a DOM of it."""
    V, d = 60000, 128
    config = {"vocab_size": V, "d_model": d, "n_layers": 0, "n_heads": 1, "d_k": 1, "d_v": 1,
              "max_len": 8, "tied_classifier": True}
    weights, vocab = os.path.join(tmp, "big.json"), os.path.join(tmp, "bigvocab.json")
    with open(weights, "w", encoding="utf-8") as f:
        f.write('{"format":"nextword","version":1,"config":%s,"tensors":{"embedding":'
                '{"shape":[%d,%d],"data":[' % (json.dumps(config), V, d))
        chunk = ",".join(["0.1234567"] * 1000)
        f.write(",".join(chunk if i != 3000 else '"x",' + chunk[10:] for i in range(V * d // 1000)))
        f.write("]}}}")
    with open(vocab, "w", encoding="utf-8") as f:
        json.dump(["<unk>"] + ["w%d" % i for i in range(V - 1)], f)
    r = subprocess.run(["/usr/bin/time", "-f", "maxrss %M", NEXTWORD, "info", "--vocab", vocab,
                        "--weights", weights], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120, check=False)
    err = [l for l in r.stderr.splitlines() if not l.startswith("Command exited")]
    failures = []
    if r.returncode != MODEL or r.stdout:
        failures.append("hostile file: exit %d, stdout %r" % (r.returncode, r.stdout[:100]))
    if "big.json: tensors.embedding: is not a valid tensor of shape [60000,128]" not in err[0]:
        failures.append("hostile file: %r" % err[0])
    if int(err[-1].split()[-1]) > 200_000:
        failures.append("hostile file: %s KB" % err[-1].split()[-1])
    os.remove(weights)
    return 1, failures


def main():
    global NEXTWORD, DATA
    NEXTWORD, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp()
    failures, count = [], 0
    try:
        for case in cases():
            count += 1
            code, out, err = run_case(case, tmp)
            lines = err.splitlines()
            problems = []
            if code != case.code:
                problems.append("exit %d, expected %d" % (code, case.code))
            if out != (case.stdout or ""):
                problems.append("stdout %r, expected %r" % (out[:200], case.stdout or ""))
            if len(lines) != 1:
                problems.append("%d lines on stderr" % len(lines))
            if case.message not in err:
                problems.append("stderr lacks %r" % case.message)
            if "internal error" in err or code < 0 or code > 130:
                problems.append("crashed")
            if problems:
                failures.append("%s: %s\n    stderr: %s" % (case.name, "; ".join(problems), err.strip()))
        hostile_cases.setup(NEXTWORD, DATA)
        for extra in (stream_cases, inspect_stream_cases, hostile_case, *hostile_cases.ALL):
            n, extra_failures = extra(tmp)
            count += n
            failures += extra_failures
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print("FAIL " + f)
    print("%d error cases, %d failed" % (count, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
