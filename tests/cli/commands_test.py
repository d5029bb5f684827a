#!/usr/bin/env python3
"""End-to-end tests of the other commands: convert, bench, info, --help and
--version, tokenize --join, train and eval, and the exit codes of usage,
model, input and I/O errors.

    python3 tests/cli/commands_test.py build/nextword data
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import cli_common
from cli_common import USAGE, MODEL, INPUT, IO, INTERRUPTED, read, run

NEXTWORD = DATA = None  # set by cli_common.main


def safetensors_values(path):
    """Every value of a safetensors file, in data order, read with Python's
    struct (F32, F16 as "e", BF16 as the upper half of a float32), and its
    tensors' header entries."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__")
    data, values = raw[8 + n:], []
    for t in sorted(header.values(), key=lambda t: t["data_offsets"][0]):
        chunk = data[t["data_offsets"][0]:t["data_offsets"][1]]
        if t["dtype"] == "BF16":
            chunk = b"".join(b"\0\0" + chunk[i:i + 2] for i in range(0, len(chunk), 2))
        code = {"F32": "f", "F16": "e", "BF16": "f"}[t["dtype"]]
        values.extend(struct.unpack(f"<{len(chunk) // struct.calcsize(code)}{code}", chunk))
    return tuple(values), header


class Convert(unittest.TestCase):
    """nextword convert: every form of the weights predicts the same, bit for bit."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.fruit = os.path.join(DATA, "examples", "fruit")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def test_round_trip_through_every_form(self):
        source = os.path.join(self.fruit, "weights.json")
        steps = [(source, "a.safetensors", []), ("a.safetensors", "b.json", ["--numbers"]),
                 ("b.json", "c.json", []), ("c.json", "d.safetensors", [])]
        for src, dst, flags in steps:
            r = run("convert", src if os.path.isabs(src) else self.path(src), self.path(dst), *flags)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        with open(self.path("a.safetensors"), "rb") as a, open(self.path("d.safetensors"), "rb") as d:
            self.assertEqual(a.read(), d.read())
        self.assertTrue(read(self.path("b.json")).count('"data":[') > 0)
        vocab = os.path.join(self.fruit, "vocab.json")
        expected = run("predict", "-m", self.fruit, "-f", "json", "banana apple").stdout
        for name in ("a.safetensors", "b.json", "c.json"):
            r = run("predict", "--vocab", vocab, "--weights", self.path(name), "-f", "json",
                    "banana apple")
            self.assertEqual(r.stdout, expected, name)

    def test_model_directory_prefers_safetensors(self):
        model = self.path("model")
        os.mkdir(model)
        shutil.copy(os.path.join(self.fruit, "vocab.json"), model)
        run("convert", os.path.join(self.fruit, "weights.json"),
            os.path.join(model, "weights.safetensors"))
        info = json.loads(run("info", "-m", model, "-f", "json").stdout)
        self.assertTrue(info["weights_file"].endswith("weights.safetensors"))
        self.assertIn("memory-mapped", run("info", "-m", model).stdout)
        self.assertEqual(run("predict", "-m", model, "banana apple").stdout,
                         run("predict", "-m", self.fruit, "banana apple").stdout)

    def test_shipped_safetensors_matches_shipped_json(self):
        default = os.path.join(DATA, "stories")
        run("convert", os.path.join(default, "weights.json"), self.path("w.safetensors"))
        with open(self.path("w.safetensors"), "rb") as ours, \
                open(os.path.join(default, "weights.safetensors"), "rb") as shipped:
            self.assertTrue(ours.read() == shipped.read(),
                            "data/stories/weights.safetensors is stale: run nextword convert")

    def test_errors(self):
        r = run("convert", os.path.join(self.fruit, "weights.json"), self.path("x.safetensors"),
                "--numbers")
        self.assertEqual(r.returncode, USAGE)
        self.assertIn("--numbers is for JSON output", r.stderr)
        r = run("convert", self.path("absent.json"), self.path("y.json"))
        self.assertEqual(r.returncode, MODEL)
        self.assertIn("absent.json: cannot open", r.stderr)
        with open(self.path("bad.safetensors"), "wb") as f:
            f.write(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")
        r = run("convert", self.path("bad.safetensors"), self.path("z.json"))
        self.assertEqual(r.returncode, MODEL)
        self.assertIn("bad.safetensors: __metadata__: missing", r.stderr)
        self.assertFalse(os.path.exists(self.path("z.json")))

    def test_half_precision_files(self):
        """--dtype f16 and bf16: every tensor rounded to nearest even (checked
        against Python's own binary16 packing, and bfloat16 worked out on the
        float32 bits), about half the bytes, read back as exactly those halves."""
        default = os.path.join(DATA, "stories")  # the default model
        f32 = os.path.join(default, "weights.safetensors")
        for dtype in ("f16", "bf16"):
            r = run("convert", f32, self.path(dtype + ".safetensors"), "--dtype", dtype)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        floats, _ = safetensors_values(f32)
        halves, header = safetensors_values(self.path("f16.safetensors"))
        self.assertEqual({t["dtype"] for t in header.values()}, {"F16"})
        expected = b"".join(struct.pack("<e", x) for x in floats)
        self.assertTrue(halves == struct.unpack(f"<{len(floats)}e", expected))
        bf16, header = safetensors_values(self.path("bf16.safetensors"))
        self.assertEqual({t["dtype"] for t in header.values()}, {"BF16"})
        bits = struct.unpack(f"<{len(floats)}I", struct.pack(f"<{len(floats)}f", *floats))
        rounded = [(b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16 for b in bits]
        self.assertTrue(bf16 == struct.unpack(f"<{len(floats)}f",
                                              struct.pack(f"<{len(floats)}I", *rounded)))
        # About half the bytes (the header stays): 10,234,344 -> 5,119,080.
        for dtype in ("f16", "bf16"):
            ratio = os.path.getsize(self.path(dtype + ".safetensors")) / os.path.getsize(f32)
            self.assertTrue(0.49 < ratio < 0.51, (dtype, ratio))
        # Converted once at load into float32 storage of its own, not mapped.
        info = run("info", "--vocab", os.path.join(default, "vocab.json"),
                   "--weights", self.path("f16.safetensors")).stdout
        self.assertNotIn("memory-mapped", info)
        # To JSON and back: the exact float32 values of the halves, so the same bytes.
        run("convert", self.path("f16.safetensors"), self.path("h.json"), "--numbers")
        run("convert", self.path("h.json"), self.path("again.safetensors"), "--dtype", "f16")
        with open(self.path("f16.safetensors"), "rb") as a, \
                open(self.path("again.safetensors"), "rb") as b:
            self.assertTrue(a.read() == b.read())
        data = json.loads(read(self.path("h.json")))["tensors"]["embedding"]["data"]
        self.assertEqual(struct.unpack("<4096f", struct.pack("<4096f", *data[:4096])),
                         halves[:4096])  # the shortest decimals are the float32s of the halves

    def test_half_precision_predicts_as_float32(self):
        """The default model as F16 gives each of the float32 model's top 5
        words, for 10 phrases, a probability within 1e-2 relative of its own
        (measured 1.1e-3; bf16, 8 bits of mantissa against 11: 1.3e-2, held to
        5e-2). The fruit model's weights are small integers, which F16 holds
        exactly: its predictions do not change at all."""
        default = os.path.join(DATA, "stories")
        phrases = "".join(p + "\n" for p in (
            "once upon a", "the little girl", "she was very", "he wanted to play with",
            "they went to the", "one day , a", "the dog ran", "mom said", "it was a sunny",
            "lily and ben"))
        vocab = os.path.join(default, "vocab.json")

        def predict(weights, k):
            r = run("predict", "--vocab", vocab, "--weights", weights, "-k", k, "-f", "json",
                    stdin=phrases)
            self.assertEqual(r.returncode, 0, r.stderr)
            return [{p["word"]: p["probability"] for p in json.loads(line)["predictions"]}
                    for line in r.stdout.splitlines()]

        expected = predict(os.path.join(default, "weights.safetensors"), "5")
        for dtype, tolerance in (("f16", 1e-2), ("bf16", 5e-2)):
            half = self.path(dtype + ".safetensors")
            run("convert", os.path.join(default, "weights.safetensors"), half, "--dtype", dtype)
            for want, got in zip(expected, predict(half, "10"), strict=True):
                for word, p in want.items():
                    self.assertLessEqual(abs(got[word] - p), tolerance * p, (dtype, word))
        fruit_f16 = self.path("fruit.safetensors")
        run("convert", os.path.join(self.fruit, "weights.json"), fruit_f16, "--dtype", "f16")
        vocab = os.path.join(self.fruit, "vocab.json")
        self.assertEqual(
            run("predict", "--vocab", vocab, "--weights", fruit_f16, "-f", "json", "banana apple",
                "-k", "6").stdout,
            run("predict", "-m", self.fruit, "-f", "json", "banana apple", "-k", "6").stdout)

    def test_half_precision_errors(self):
        source = os.path.join(self.fruit, "weights.json")
        r = run("convert", source, self.path("x.json"), "--dtype", "f16")
        self.assertEqual((r.returncode, r.stdout), (USAGE, ""))
        self.assertIn("--dtype f16 is for .safetensors output", r.stderr)
        r = run("convert", source, self.path("x.safetensors"), "--dtype", "f64")
        self.assertEqual(r.returncode, USAGE)
        self.assertIn("--dtype", r.stderr)
        # A value F16 cannot hold (65520 and up round beyond 65504): one line
        # naming the file, tensor and element, exit 2 as for a bad option value.
        model = json.loads(read(source))
        model["tensors"]["classifier"]["data"][1][0] = 70000
        with open(self.path("big.json"), "w", encoding="utf-8") as f:
            json.dump(model, f)
        r = run("convert", self.path("big.json"), self.path("big.safetensors"), "--dtype", "f16")
        self.assertEqual((r.returncode, r.stdout), (USAGE, ""))
        self.assertEqual(r.stderr, "nextword: " + self.path("big.json") + ": classifier: element 2 "
                         "is 70000, beyond F16's range (largest 65504); --dtype bf16 or f32 holds "
                         "it\n")
        self.assertFalse(os.path.exists(self.path("big.safetensors")))
        r = run("convert", self.path("big.json"), self.path("big.safetensors"), "--dtype", "bf16")
        self.assertEqual(r.returncode, 0, r.stderr)


class Bench(unittest.TestCase):
    def test_bench_reports_every_figure(self):
        fruit = os.path.join(DATA, "examples", "fruit")
        r = run("bench", "-m", fruit, "-b", "1,3", "-l", "2,4", "--seconds", "0.02", "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout)
        self.assertGreater(report["load_ms"], 0)
        self.assertGreater(report["json_loader"]["speedup"], 0)
        self.assertGreater(report["sgemm_peak_gflops"], 0)
        self.assertEqual([(x["batch"], x["tokens"]) for x in report["runs"]],
                         [(1, 2), (3, 2), (1, 4), (3, 4)])
        for x in report["runs"]:
            self.assertAlmostEqual(x["fraction_of_peak"], x["gflops"] / x["sgemm_peak_gflops"])
            self.assertAlmostEqual(x["tokens_per_s"], x["batch"] * x["tokens"] / x["best_ms"] * 1e3)
        # complete's keystrokes: 200 words typed a character at a time, a
        # forward pass only where a word starts.
        k = report["keystrokes"]
        self.assertEqual(k["words"], 200)
        self.assertGreater(k["keystrokes"], 200)
        self.assertGreater(k["new_word_median_ms"], 0)
        self.assertLessEqual(k["inside_word_median_ms"], k["new_word_median_ms"])
        text = run("bench", "-m", fruit, "-b", "2", "-l", "3", "--seconds", "0.02",
                   "--no-json-loader").stdout
        self.assertIn("sgemm peak", text)
        self.assertIn("ms median per keystroke", text)
        self.assertNotIn("json loader", text)
        r = run("bench", "-m", fruit, "-l", "9")
        self.assertEqual(r.returncode, USAGE)
        self.assertIn("more than the model's max_len 8", r.stderr)

    def test_bench_products(self):
        """--products: every product of a forward pass at 1 to 128 rows, for
        this model's shapes and a d_model 512 model's, against OpenBLAS."""
        fruit = os.path.join(DATA, "examples", "fruit")
        info = json.loads(run("info", "-m", fruit, "-f", "json").stdout)
        config = info["config"]
        r = run("bench", "-m", fruit, "--products", "--seconds", "0.01", "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout)
        self.assertIn(report["kernels"], ("plain", "avx2", "avx512"))
        rows = report["products"]
        d, width = config["d_model"], config["n_heads"] * config["d_k"]
        shapes = [("q", d, width), ("o", width, d)]
        if config.get("d_ff", 0) > 0:
            shapes += [("ff_in", d, config["d_ff"]), ("ff_out", config["d_ff"], d)]
        shapes.append(("classifier", d, config["vocab_size"]))
        big = [("q", 512, 512), ("o", 512, 512), ("ff_in", 512, 2048), ("ff_out", 2048, 512),
               ("classifier", 512, config["vocab_size"])]
        expected = [(model, name, m, k, n) for model, products in
                    (("this model", shapes), ("d_model 512", big))
                    for name, k, n in products for m in (1, 4, 16, 64, 128)]
        self.assertEqual([(x["model"], x["product"], x["M"], x["K"], x["N"]) for x in rows],
                         expected)
        for x in rows:
            self.assertAlmostEqual(x["ratio"], x["gflops"] / x["sgemm_gflops"])
            self.assertAlmostEqual(x["fraction_of_peak"], x["gflops"] / report["sgemm_peak_gflops"])
        forced = run("bench", "-m", fruit, "--products", "--seconds", "0.01",
                     env={"NEXTWORD_KERNELS": "plain"}).stdout
        self.assertTrue(forced.startswith("kernels      plain "), forced[:80])


class Info(unittest.TestCase):
    def test_info(self):
        fruit = os.path.join(DATA, "examples", "fruit")
        r = run("info", "-m", fruit, "-f", "json")
        info = json.loads(r.stdout)
        self.assertEqual(info["parameters"], 6 * 2 + 4 * 4 + 6 * 2)
        self.assertEqual(info["vocab_size"], 6)
        self.assertEqual(info["config"]["residual"], False)
        self.assertEqual(info["weights_bytes"], os.path.getsize(os.path.join(fruit, "weights.json")))
        text = run("info", "-m", fruit).stdout
        self.assertIn("parameters", text)
        self.assertIn("layers.0.attn.w_q", text)

    def test_help_and_version(self):
        for command in ([], ["predict"], ["attention"], ["info"], ["train"], ["eval"],
                        ["convert"], ["bench"], ["generate"]):
            r = run(*command, "--help")
            self.assertEqual(r.returncode, 0)
            self.assertIn("Usage:", r.stdout)
        self.assertIn("Exit codes", run("--help").stdout)
        r = run("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^nextword \d+\.\d+\.\d+")


class TokenizeJoin(unittest.TestCase):
    """tokenize --join: each line's tokens written back as generate writes
    them, line by line through real pipes."""

    # Lines as people write them: numbers, decimals, times, abbreviations,
    # quotes, parentheses, contractions, slashes and dashes, and the cases
    # that stay apart (1, 2 and 3; a sentence ending in 1990.), with a word
    # outside the vocabulary.
    LINES = [
        "Risk sold 850,000 copies (about 3.5 times more) by 10:30 p.m. in the U.S., e.g. in D.C.",
        "Mustaine said, \"if anybody else's name was on 'Risk', it would have sold.\"",
        "It closed in 1990. Then 1, 2 and 3 opened; the players' union didn't.",
        "Zqxjvw and/or AT&T cost $5\u2014since 1991\u20131992.",
    ]

    def test_lines_come_back_through_a_pipe(self):
        # One line in, its line out, before the next is written.
        p = subprocess.Popen([NEXTWORD, "tokenize", "--join", "-m", "english"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for line in self.LINES:
            p.stdin.write(line + "\n")
            p.stdin.flush()
            self.assertEqual(p.stdout.readline(), line + "\n")
        p.stdin.close()
        self.assertEqual(p.wait(timeout=60), 0)
        p.stdout.close()
        # The word outside the vocabulary is kept as it is spelled.
        r = run("tokenize", "-m", "english", "-f", "json", "Zqxjvw")
        self.assertEqual(json.loads(r.stdout)["pieces"], ["<unk>"])
        # Given as arguments, the words are one text.
        r = run("tokenize", "--join", "-m", "english", "about", "3.5", "(", "U.S.", ")")
        self.assertEqual((r.returncode, r.stdout), (0, "about 3.5 (U.S.)\n"))

    def test_joined_text_reads_as_the_same_tokens(self):
        # tokenize --join | tokenize: the ids of the joined lines, through a
        # pipe between two processes, are the lines' own.
        text = "".join(line + "\n" for line in self.LINES) + "rock-'n'-roll ( a ) ' b '\n"
        joiner = subprocess.Popen([NEXTWORD, "tokenize", "--join", "-m", "english"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        reader = subprocess.Popen([NEXTWORD, "tokenize", "-m", "english"], stdin=joiner.stdout,
                                  stdout=subprocess.PIPE, text=True)
        joiner.stdout.close()
        joiner.stdin.write(text)
        joiner.stdin.close()
        ids, _ = reader.communicate(timeout=60)
        self.assertEqual((joiner.wait(timeout=60), reader.returncode), (0, 0))
        self.assertEqual(ids, run("tokenize", "-m", "english", stdin=text).stdout)
        self.assertEqual(len(ids.split("\n")), len(self.LINES) + 2)

    def test_a_lowercase_model_gets_its_capitals_back(self):
        r = run("tokenize", "--join", "-m", "stories",
                stdin="once upon a time, lily had 1,000 toys. she said, \"i'm happy!\"\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "Once upon a time, lily had 1,000 toys. "
                                   "She said, \"I'm happy!\"\n")

    def test_ids_or_text(self):
        r = run("tokenize", "--join", "-f", "json", "-m", "english", "x")
        self.assertEqual((r.returncode, r.stdout), (USAGE, ""))
        self.assertEqual(len(r.stderr.splitlines()), 1)
        self.assertIn("--join", r.stderr)


STORY = ("Once upon a time there was a little cat. The cat liked to play in the sun. "
         "One day the cat saw a big dog. The dog was kind and they played all day.\n")
TINY = ["--vocab-size", "40", "--d-model", "16", "--layers", "1", "--heads", "2",
        "--context", "16", "--batch", "8", "--warmup", "10", "--lr", "1e-2", "--dropout", "0",
        "--val-fraction", "0.1", "--threads", "1"]


class Errors(unittest.TestCase):
    """Each error: one line on stderr naming file and field, nothing on stdout, its code."""

    def setUp(self):
        self.fruit = os.path.join(DATA, "examples", "fruit")
        self.tmp = tempfile.mkdtemp(prefix="nextword-cli-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def broken_model(self, edit):
        with open(os.path.join(self.fruit, "weights.json"), encoding="utf-8") as f:
            weights = json.load(f)
        edit(weights)
        shutil.copy(os.path.join(self.fruit, "vocab.json"), self.tmp)
        with open(os.path.join(self.tmp, "weights.json"), "w", encoding="utf-8") as f:
            json.dump(weights, f)
        return self.tmp

    def assert_error(self, result, code, message):
        self.assertEqual(result.returncode, code, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertIn(message, result.stderr)
        self.assertTrue(result.stderr.startswith("nextword: "))

    def test_usage(self):
        self.assert_error(run("predict", "--bogus", "x"), USAGE, "--bogus")
        self.assert_error(run("predict", "-k", "0", "x"), USAGE, "--top-k")
        self.assert_error(run("predict", "-f", "xml", "x"), USAGE, "--format")
        self.assert_error(run("predict", "--vocab", "v.json", "x"), USAGE, "--weights")
        self.assert_error(run("predict", "-m", "d", "--vocab", "v", "--weights", "w", "x"), USAGE,
                          "--model")
        self.assert_error(run(), USAGE, "subcommand")
        self.assert_error(run("frobnicate"), USAGE, "frobnicate")

    def test_model_files(self):
        self.assert_error(run("predict", "-m", os.path.join(self.tmp, "none"), "x"), MODEL,
                          "weights.json: cannot open")
        path = self.broken_model(lambda w: w["tensors"]["layers.0.attn.w_q"].update(shape=[2, 3]))
        self.assert_error(run("predict", "-m", path, "apple"), MODEL,
                          "weights.json: tensors.layers.0.attn.w_q: shape [2,3], config needs [2,2]")
        path = self.broken_model(lambda w: w["config"].update(n_heads=-1))
        self.assert_error(run("info", "-m", path), MODEL, "weights.json: config.n_heads: must be")
        with open(os.path.join(self.tmp, "weights.json"), "w", encoding="utf-8") as f:
            f.write('{"format": "nextword", "version": 1, "config": {')
        self.assert_error(run("predict", "-m", self.tmp, "apple"), MODEL, "not valid JSON")
        self.assert_error(
            run("predict", "--vocab", os.path.join(self.fruit, "vocab.json"), "--weights",
                self.tmp, "apple"), MODEL, "is a directory")
        self.assert_error(run("predict", "x", env={"NEXTWORD_MODEL": self.tmp + "/none"}), MODEL,
                          "cannot open")

    def test_input(self):
        self.assert_error(run("predict", "-m", self.fruit, "zzz qqq"), INPUT,
                          "no word of the phrase is in the vocabulary: zzz qqq")
        self.assert_error(run("predict", "-m", self.fruit, "   "), INPUT, "the phrase has no words")

    def test_io(self):
        with open(os.devnull, "r", encoding="utf-8") as read_only:
            r = run("predict", "-m", self.fruit, "apple", stdout=read_only)
        self.assertEqual(r.returncode, IO)
        self.assertEqual(r.stderr, "nextword: standard output: cannot write: Bad file descriptor\n")


class TrainAndEval(unittest.TestCase):
    """A new user's path: their own text in, a model out, predictions from it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.text = os.path.join(self.tmp, "stories.txt")
        with open(self.text, "w", encoding="utf-8") as f:
            for _ in range(40):
                f.write(STORY + "\n<|endoftext|>\n")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def train(self, *extra):
        out = os.path.join(self.tmp, "model")
        return out, run("train", self.text, "-o", out, *TINY, *extra)

    def test_train_then_predict_and_eval(self):
        out, r = self.train("--steps", "200", "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        summary = json.loads(r.stdout)
        self.assertEqual(summary["steps"], 200)
        self.assertTrue(summary["completed"])
        self.assertLess(summary["loss"], 0.5)  # the story is learned by heart
        # stderr is not a terminal: one JSON line per report, after the opening note.
        lines = r.stderr.strip().split("\n")
        self.assertIn("training", lines[0])
        reports = [json.loads(line) for line in lines[1:]]
        self.assertEqual([p["step"] for p in reports], list(range(10, 201, 10)))
        self.assertIn("val_loss", reports[-1])
        self.assertEqual(sorted(os.listdir(out)),
                         ["checkpoint.json", "lexicon.bin", "lexicon.tsv", "vocab.json",
                          "weights.json"])
        # lexicon.tsv: every word of the text with its count, most frequent
        # first; the vocabulary is <unk>, <bos>, then its first words.
        lexicon = [line.split("\t") for line in read(os.path.join(out, "lexicon.tsv")).splitlines()]
        words = STORY.lower().replace(".", " .").replace(",", " ,").split()
        self.assertEqual({w: int(c) for w, c in lexicon},
                         {w: 40 * words.count(w) for w in set(words)})
        counts = [int(c) for _, c in lexicon]
        self.assertEqual(counts, sorted(counts, reverse=True))
        vocab = json.loads(read(os.path.join(out, "vocab.json")))
        self.assertEqual(vocab[2:], [w for w, _ in lexicon][:len(vocab) - 2])

        p = run("predict", "-m", out, "-k", "1", "once upon a")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split()[0], "time")
        p = run("predict", "-m", out, "-k", "1", "the cat saw a big")
        self.assertEqual(p.stdout.split()[0], "dog")

        e = run("eval", self.text, "-m", out, "-f", "json")
        self.assertEqual(e.returncode, 0, e.stderr)
        result = json.loads(e.stdout)
        self.assertEqual(list(result), ["documents", "tokens", "unknown_rate", "cross_entropy",
                                        "perplexity", "top1", "top5", "stride"])
        self.assertEqual(result["documents"], 40)
        self.assertEqual(result["unknown_rate"], 0)
        self.assertGreater(result["top1"], 0.8)
        self.assertAlmostEqual(result["perplexity"], 2.718281828 ** result["cross_entropy"], 5)
        text = run("eval", self.text, "-m", out).stdout
        self.assertIn("perplexity", text)

    def test_distill_from_a_teacher(self):
        """train --teacher: a student of the Llama-style block learns from a
        teacher trained on the same text; a teacher of another vocabulary or
        a shorter context is refused; a resumed run keeps its teacher."""
        teacher, r = self.train("--steps", "150", "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        student = os.path.join(self.tmp, "student")
        r = run("train", self.text, "-o", student, *TINY, "--positional", "rope", "--norm",
                "rmsnorm", "--activation", "swiglu", "--teacher", teacher, "--teacher-weight",
                "0.7", "--temperature", "2", "--steps", "150", "--checkpoint-every", "100",
                "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(json.loads(r.stdout)["loss"], 1.0)
        p = run("predict", "-m", student, "-k", "1", "once upon a")
        self.assertEqual(p.stdout.split()[0], "time")
        with open(os.path.join(student, "checkpoint.json"), encoding="utf-8") as f:
            options = json.load(f)["options"]
        self.assertEqual(options["teacher"], teacher)
        self.assertAlmostEqual(options["teacher_weight"], 0.7, 6)
        self.assertEqual(options["temperature"], 2.0)
        # A teacher whose vocabulary differs: one line, exit 2.
        other = os.path.join(self.tmp, "other.txt")
        with open(other, "w", encoding="utf-8") as f:
            f.write("a completely different text about zebras and quokkas.\n" * 30)
        r = run("train", other, "-o", os.path.join(self.tmp, "x"), *TINY, "--teacher", teacher)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertRegex(r.stderr, r"^nextword: train: --teacher .*: its vocabulary has \d+ words, "
                                   r"the text's \d+\n$")
        longer = ["64" if i > 0 and TINY[i - 1] == "--context" else a for i, a in enumerate(TINY)]
        r = run("train", self.text, "-o", os.path.join(self.tmp, "y"), *longer, "--teacher", teacher)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("shorter than --context 64", r.stderr)

    def learns_and_keeps(self, flag, option):
        """A run with `flag` learns the story and its checkpoint records
        `option`; returns the model's directory."""
        out, r = self.train("--steps", "150", flag, "--checkpoint-every", "100", "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(json.loads(r.stdout)["loss"], 0.5)
        with open(os.path.join(out, "checkpoint.json"), encoding="utf-8") as f:
            self.assertTrue(json.load(f)["options"][option])
        return out

    def test_document_windows(self):
        """--document-windows: every window starts at a document's bos; the
        run learns, the checkpoint keeps the option, and without a bos
        token it is refused."""
        self.learns_and_keeps("--document-windows", "document_windows")
        r = run("train", self.text, "-o", os.path.join(self.tmp, "nobos"), *TINY,
                "--document-windows", "--no-bos")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr, "nextword: train: --document-windows needs a bos token\n")

    def test_shuffle(self):
        """--shuffle: epochs of window starts; the run learns, the checkpoint
        keeps the option, and it draws other windows than the default."""
        out = self.learns_and_keeps("--shuffle", "shuffle")
        shuffled = read(os.path.join(out, "weights.json"))
        out, r = self.train("--steps", "150", "--checkpoint-every", "100")
        self.assertNotEqual(read(os.path.join(out, "weights.json")), shuffled)
        # Windows that tile the text need two of them in it.
        wide = [("1000" if TINY[i - 1] == "--context" else a) for i, a in enumerate(TINY)]
        r = run("train", self.text, "-o", os.path.join(self.tmp, "wide"), *wide, "--shuffle")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertRegex(r.stderr, r"^nextword: train: --shuffle tiles the text with windows: it "
                         r"needs 2 x --context = 2000 training tokens\n$")

    def test_same_seed_same_model(self):
        out, r = self.train("--steps", "30")
        first = read(os.path.join(out, "weights.json"))
        out, r = self.train("--steps", "30")
        self.assertEqual(first, read(os.path.join(out, "weights.json")))
        out, r = self.train("--steps", "30", "--seed", "2")
        self.assertNotEqual(first, read(os.path.join(out, "weights.json")))

    def test_ctrl_c_saves_and_resume_reaches_the_uninterrupted_weights(self):
        """Ctrl-C (SIGINT), and SIGTERM and SIGHUP alike."""
        steps = ["--steps", "1500", "--log-every", "1", "--checkpoint-every", "0"]
        whole, r = self.train(*steps)
        self.assertEqual(r.returncode, 0, r.stderr)
        expected = read(os.path.join(whole, "weights.json"))

        for name, number in (("SIGINT", 2), ("SIGTERM", 15), ("SIGHUP", 1)):
            with self.subTest(signal=name):
                out = os.path.join(self.tmp, "stopped-" + name)
                process = subprocess.Popen([NEXTWORD, "train", self.text, "-o", out, *TINY,
                                            *steps], stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True)
                process.stderr.readline()  # the opening note
                process.stderr.readline()  # the first step is done
                process.send_signal(number)
                stdout, stderr = process.communicate(timeout=120)
                self.assertEqual(process.returncode, INTERRUPTED, stderr)
                self.assertIn("nextword train --resume " + out, stderr)
                self.assertFalse(json.loads(stdout)["completed"] if stdout.startswith("{")
                                 else False)
                with open(os.path.join(out, "checkpoint.json"), encoding="utf-8") as f:
                    stopped_at = json.load(f)["step"]
                self.assertLess(stopped_at, 1500)
                p = run("predict", "-m", out, "once upon a")  # what was saved loads
                self.assertEqual(p.returncode, 0, p.stderr)

                r = run("train", "--resume", out, "-f", "json")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(json.loads(r.stdout)["steps"], 1500)
                self.assertEqual(expected, read(os.path.join(out, "weights.json")))

    def test_errors(self):
        r = run("train", os.path.join(self.tmp, "missing.txt"), "-o", self.tmp + "/m")
        self.assertEqual(r.returncode, IO)
        self.assertIn("missing.txt", r.stderr)
        self.assertEqual(r.stdout, "")
        r = run("train", self.text, "-o", self.tmp + "/m", "--heads", "0")
        self.assertEqual(r.returncode, USAGE)
        self.assertEqual(r.stdout, "")
        r = run("train", self.text, "-o", self.tmp + "/m", "--positional", "rotary")
        self.assertEqual(r.returncode, USAGE)
        r = run("train", self.text)
        self.assertEqual(r.returncode, USAGE)
        self.assertIn("--output", r.stderr)
        r = run("train", "--resume", self.tmp)
        self.assertEqual(r.returncode, IO)
        self.assertIn("checkpoint.json", r.stderr)
        r = run("eval", os.path.join(self.tmp, "missing.txt"), "-m",
                os.path.join(DATA, "examples", "fruit"))
        self.assertEqual(r.returncode, IO)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.strip().split("\n")), 1)


# Two articles for the fruit model: a title, a <unk>, `apple @-@ pie` (one
# model token that stands for 3 WikiText tokens), kiwi outside the vocabulary.
WIKITEXT = (" = Apple Pie = \n \n apple banana <unk> pie kiwi apple @-@ pie kiwi \n"
            " = = Store = = \n kiwi store \n = Phone = \n phone apple <unk> kiwi phone \n")


class WikitextEval(unittest.TestCase):
    """eval --wikitext: the WikiText-103 measure (docs/models.md, "eval --wikitext")."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.fruit = os.path.join(DATA, "examples", "fruit")
        self.text = os.path.join(self.tmp, "valid.tokens")
        with open(self.text, "w", encoding="utf-8") as f:
            f.write(WIKITEXT)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def measure(self, *flags):
        r = run("eval", "--wikitext", self.text, "-m", self.fruit, "-f", "json", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout), r.stderr

    def test_json_fields_and_the_cache(self):
        result, stderr = self.measure()
        self.assertEqual(list(result), [
            "documents", "wikitext_tokens", "unknown", "heading_marks", "scored", "model_tokens",
            "oov_tokens", "oov_rate", "total_nats", "cross_entropy", "perplexity", "top1", "top5",
            "lexicon", "lexicon_words", "cache", "bands"])
        # Where the loss goes: the vocabulary's 11 tokens and the 5 outside it,
        # whose spelling (uniform bytes, no lexicon) is 4 x kiwi and apple-pie:
        # -ln q(w) = ln 256 + len(w) ln 257.
        vocabulary, outside = result["bands"]
        self.assertEqual((vocabulary["band"], vocabulary["ids"], vocabulary["tokens"]),
                         ("vocabulary", [0, 6], 11))
        self.assertEqual((outside["band"], outside["tokens"]), ("outside", 5))
        spelling = 5 * math.log(256) + (4 * 4 + 9) * math.log(257)
        self.assertAlmostEqual(outside["spelling_nats"], spelling, 9)
        self.assertAlmostEqual(outside["unk_nats"] + outside["spelling_nats"],
                               outside["total_nats"], 9)
        self.assertAlmostEqual(vocabulary["total_nats"] + outside["total_nats"],
                               result["total_nats"], 9)
        self.assertAlmostEqual(outside["loss_share"], outside["total_nats"] / result["total_nats"])
        # 28 WikiText tokens, 2 <unk> and 8 heading marks unscored: N = 18,
        # from 16 model tokens (kiwi 4 times and apple-pie outside the vocabulary).
        self.assertEqual([result[k] for k in ("documents", "wikitext_tokens", "unknown",
                                              "heading_marks", "scored", "model_tokens",
                                              "oov_tokens")], [2, 28, 2, 8, 18, 16, 5])
        self.assertAlmostEqual(result["oov_rate"], 5 / 16)
        self.assertAlmostEqual(result["cross_entropy"], result["total_nats"] / 18, 12)
        self.assertAlmostEqual(result["perplexity"], math.exp(result["total_nats"] / 18), 6)
        self.assertEqual((result["lexicon"], result["lexicon_words"], result["cache"]),
                         (False, 0, None))
        # No lexicon beside the fruit model: one note, once.
        self.assertEqual(len(stderr.strip().split("\n")), 1)
        self.assertIn("no lexicon.tsv", stderr)

        cached, _ = self.measure("--cache")
        without = cached["cache"].pop("without")
        self.assertEqual(cached["cache"], {"size": 2000, "weight": 0.1, "sharpness": 10.0})
        self.assertLess(cached["total_nats"], result["total_nats"])  # kiwi comes back
        # The same pass scores the model alone: a run without --cache's bits.
        self.assertEqual([without[k] for k in ("total_nats", "cross_entropy", "perplexity", "top1",
                                               "top5")],
                         [result[k] for k in ("total_nats", "cross_entropy", "perplexity", "top1",
                                              "top5")])
        off, _ = self.measure("--cache", "--cache-weight", "0", "--cache-size", "5")
        self.assertEqual(off["total_nats"], result["total_nats"])
        self.assertEqual((off["top1"], off["top5"]), (result["top1"], result["top5"]))

        lexicon = os.path.join(self.tmp, "lexicon.tsv")
        with open(lexicon, "w", encoding="utf-8") as f:
            f.write("apple\t9\nkiwi\t3\n")
        spelled, stderr = self.measure("--lexicon", lexicon)
        self.assertEqual((spelled["lexicon"], spelled["lexicon_words"]), (True, 1))
        self.assertEqual(stderr, "")
        self.assertLess(spelled["total_nats"], result["total_nats"])

        text = run("eval", "--wikitext", self.text, "-m", self.fruit).stdout
        self.assertIn("scored (N)       18", text)
        self.assertIn("\n  vocabulary 0-5                11   2.213   12.1%", text)
        self.assertIn("perplexity", text)

    def test_errors(self):
        missing = os.path.join(self.tmp, "missing.tokens")
        r = run("eval", "--wikitext", missing, "-m", self.fruit)
        self.assertEqual((r.returncode, r.stdout), (IO, ""))
        self.assertEqual(r.stderr, f"nextword: {missing}: cannot open: No such file or directory\n")
        empty = os.path.join(self.tmp, "empty.tokens")
        with open(empty, "w", encoding="utf-8") as f:
            f.write(" = = = \n <unk> \n")
        r = run("eval", "--wikitext", empty, "-m", self.fruit)
        self.assertEqual((r.returncode, r.stdout), (INPUT, ""))
        self.assertEqual(r.stderr, f"nextword: {empty}: no WikiText token to score\n")
        for flags in (["eval", "-m", self.fruit],
                      ["eval", "--wikitext", self.text, "--cache", "--cache-weight", "1"],
                      ["eval", "--wikitext", self.text, "--cache-size", "10"],
                      ["eval", "--cache", self.text],
                      ["eval", self.text, "--wikitext", self.text]):
            r = run(*flags)
            self.assertEqual((r.returncode, r.stdout), (USAGE, ""), flags)
            self.assertEqual(len(r.stderr.strip().split("\n")), 1, r.stderr)

class StridedEval(unittest.TestCase):
    """eval and score --document in windows --stride tokens apart (docs/models.md, "Training on your own text")."""

    # Recorded with 943f99e, the build before --stride, which ran a window of
    # max_len words for every word past the first max_len: --stride 1 must
    # give these figures (to the last bit on the machine that recorded them;
    # another kernel family may move the sums in their last places).
    BEFORE = {"stories": (604, 2.3292336773599063, 0.5331125827814569, 0.7764900662251656),
              "english": (604, 5.149375896653156, 0.22350993377483444, 0.4470198675496689)}

    def setUp(self):
        self.story = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                  "eval", "story.txt")

    def eval(self, model, *flags):
        r = run("eval", self.story, "-m", model, "-f", "json", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_stride_one_is_the_window_per_word(self):
        for model, (tokens, nats, top1, top5) in self.BEFORE.items():
            one = self.eval(model, "--stride", "1")
            self.assertEqual((one["tokens"], one["stride"]), (tokens, 1), model)
            self.assertAlmostEqual(one["cross_entropy"], nats, delta=1e-6)
            self.assertAlmostEqual(one["top1"], top1, 9)
            self.assertAlmostEqual(one["top5"], top5, 9)
            # Default: half of max_len (128), the same words in fewer windows,
            # each word read after 65 to 128 words instead of 128: close, not equal.
            strided = self.eval(model)
            self.assertEqual((strided["tokens"], strided["stride"]), (tokens, 64))
            self.assertNotEqual(strided["cross_entropy"], one["cross_entropy"])
            self.assertLess(abs(strided["cross_entropy"] - nats), 0.02 * nats)
            # A stride of max_len or more: each window scores all its words.
            whole = self.eval(model, "--stride", "128")
            self.assertEqual(self.eval(model, "--stride", "5000")["cross_entropy"],
                             whole["cross_entropy"])
            # score --document reads the file as eval does, in the same windows.
            r = run("score", "--document", self.story, "-m", model, "-f", "json", "--stride", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertAlmostEqual(json.loads(r.stdout)["perplexity"], one["perplexity"], 9)

    def test_errors(self):
        for flags in (["--stride", "0"], ["--stride", "x"], ["--wikitext", self.story, "--stride", "2"],
                      ["--ksr", "--stride", "2"]):
            r = run("eval", self.story, "-m", "stories", *flags)
            self.assertEqual((r.returncode, r.stdout), (USAGE, ""), flags)
            self.assertEqual(len(r.stderr.strip().split("\n")), 1, r.stderr)
        r = run("score", "--stride", "2", "-m", "stories", "a phrase")
        self.assertEqual((r.returncode, r.stdout), (USAGE, ""))

if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
