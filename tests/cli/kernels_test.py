#!/usr/bin/env python3
"""Every family of product kernels this CPU runs, forced with
NEXTWORD_KERNELS (plain, avx2, avx512):

  - within a family, records do not depend on how the work is split: predict,
    score and complete the same bytes whatever --batch and --threads and the
    cut into processes; generate the same words on 1 and 2 threads; serve's
    batches the same bytes as the command's stream;
  - between families, the same predictions within the reference tolerance
    (the families may differ in the last bits, never more);
  - a family this CPU cannot run, or a name that is none, is a usage error
    (exit 2) naming NEXTWORD_KERNELS;
  - the English model's F16 weights read in place by the products give the
    bytes of the same weights widened at load (NEXTWORD_HALVES), in every
    family;
  - a GGUF model's BF16 and block (Q8_0 .. Q6_K) tensors read in place give
    the bytes of the same values held in F32, in every family, at every
    split, with float32 activations (NEXTWORD_ACTIVATIONS=f32); with the
    default 8-bit activations for blocks, the same bytes at every split;
  - NEXTWORD_ACTIVATIONS other than q8 or f32 is a usage error (exit 2).

    python3 tests/cli/kernels_test.py build/nextword data [--quick]

--quick (the sanitizer build): one split against the whole where there are
three, and 8 lines for the GGUF files rather than 12.
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest
import urllib.request

import cli_common
from cli_common import USAGE, run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import gguf_writer as w  # noqa: E402

NEXTWORD = DATA = None  # set by cli_common.main
QUICK = cli_common.quick()
FAMILIES = ("plain", "avx2", "avx512")
PHRASES = ["once upon a", "lily and her mom went to the", "the dog was very", "zzqxv",
           "she saw a big red", "tom and ben played with the ball in the", "the",
           "one day a little girl named lily went to the park with her mom and"] * 5
COMMANDS = {
    "predict": ["predict", "-f", "json", "-k", "8", "-q"],
    "score": ["score", "-f", "json", "-q"],
    "complete": ["complete", "-f", "json", "-q"],
}


def runs_here(family):
    return run("info", env={"NEXTWORD_KERNELS": family}).returncode == 0


class Families(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.families = [f for f in FAMILIES if runs_here(f)]

    def out(self, family, args, stdin=None, activations=None):
        env = {"NEXTWORD_KERNELS": family}
        if activations is not None:
            env["NEXTWORD_ACTIVATIONS"] = activations
        result = run(*args, stdin=stdin, env=env)
        self.assertIn(result.returncode, (0, 4), result.stderr)
        return result.stdout

    def test_every_cpu_runs_plain_and_bench_names_the_family(self):
        self.assertIn("plain", self.families)
        self.assertIn("avx2", self.families)  # every machine this project runs on has AVX2
        for family in self.families:
            text = self.out(family, ["bench", "--no-json-loader", "-b", "1", "-l", "4",
                                     "--seconds", "0.01"])
            self.assertRegex(text, r"\nkernels +" + family + " ")

    def test_records_do_not_depend_on_the_split(self):
        text = "\n".join(PHRASES) + "\n"
        lines = text.splitlines(keepends=True)
        for family in self.families:
            for command, args in COMMANDS.items():
                with self.subTest(family=family, command=command):
                    whole = self.out(family, [*args, "--batch", "64", "-t", "2"], text)
                    self.assertEqual(len(whole.splitlines()), len(lines))
                    for batch, threads in ((7, 2),) if QUICK else ((1, 1), (7, 2), (64, 1)):
                        self.assertEqual(self.out(family, [*args, "--batch", str(batch), "-t",
                                                           str(threads)], text), whole)
                    pieces = ["".join(lines[0:1]), "".join(lines[1:8]), "".join(lines[8:])]
                    self.assertEqual("".join(self.out(family, [*args, "-t", "1"], p)
                                             for p in pieces), whole)

    def test_generate_is_the_full_pass(self):
        """generate runs each new word through the key/value cache; a second
        process given the first half as its phrase runs it in one full pass
        and must go on with the same words."""
        for family in self.families:
            with self.subTest(family=family):
                first = json.loads(self.out(family, ["generate", "--greedy", "-f", "json",
                                                     "-n", "40", "once upon a"]))["words"]
                self.assertEqual(len(first), 40)
                rest = json.loads(self.out(family, ["generate", "--greedy", "-f", "json",
                                                    "-n", "20",
                                                    " ".join(["once upon a", *first[:20]])]))
                self.assertEqual(rest["words"], first[20:])

    def test_serve_batches_are_the_stream(self):
        for family in self.families:
            with self.subTest(family=family):
                env = dict(os.environ, NEXTWORD_KERNELS=family)
                server = subprocess.Popen([NEXTWORD, "serve", "--port", "0", "-t", "2"],
                                          stderr=subprocess.PIPE, text=True, env=env)
                try:
                    match = re.search(r"127\.0\.0\.1:(\d+) ", server.stderr.readline())
                    self.assertTrue(match)
                    body = json.dumps({"phrases": PHRASES, "k": 8}).encode()
                    request = urllib.request.Request(
                        f"http://127.0.0.1:{match.group(1)}/v1/predict", data=body,
                        headers={"Content-Type": "application/json"})
                    with urllib.request.urlopen(request, timeout=60) as response:
                        body = response.read().decode()
                finally:
                    server.terminate()
                    server.wait(timeout=60)
                    server.stderr.close()
                stream = self.out(family, ["predict", "-f", "json", "-k", "8"],
                                  "\n".join(PHRASES) + "\n")
                # The bytes themselves: a record re-encoded here could print its
                # floats otherwise than nlohmann's writer.
                self.assertEqual(body, '{"results":[' + ",".join(stream.splitlines()) + "]}\n")

    def test_families_agree_within_the_reference_tolerance(self):
        text = "\n".join(PHRASES[:8]) + "\n"
        records = {f: [json.loads(line) for line in
                       self.out(f, ["predict", "-f", "json", "-k", "8", "-q"], text).splitlines()]
                   for f in self.families}
        first = records[self.families[0]]
        for family in self.families[1:]:
            for a, b in zip(first, records[family]):
                if "predictions" not in a:
                    self.assertEqual(a, b)
                    continue
                pa = {p["word"]: p["probability"] for p in a["predictions"]}
                pb = {p["word"]: p["probability"] for p in b["predictions"]}
                for word in pa.keys() & pb.keys():
                    self.assertAlmostEqual(pa[word], pb[word], delta=1e-4,
                                           msg=f"{family}: {a.get('phrase')} {word}")
                self.assertEqual(a["predictions"][0]["word"], b["predictions"][0]["word"])

    def test_halves_read_in_place_are_the_bits_of_halves_widened_at_load(self):
        """The English model is F16: every family's products read its halves
        (NEXTWORD_HALVES=read, the default) or its floats widened at load
        (=widen); predict, score, complete and generate print the same bytes."""
        english = ["-m", os.path.join(DATA, "english")]
        text = "the end of the Second World\nthe history of the\nin 1990 , the\nzzqxv\n"
        for family in self.families:
            for args in (["predict", "-f", "json", "-k", "8"], ["score", "-f", "json"],
                         ["complete", "-f", "json"],
                         ["generate", "--greedy", "-n", "30", "the history of"],
                         ["lens", "-f", "json", "the end of the"]):
                with self.subTest(family=family, command=args[0]):
                    out = {}
                    for halves in ("read", "widen"):
                        result = run(args[0], *english, *args[1:], stdin=text,
                                     env={"NEXTWORD_KERNELS": family, "NEXTWORD_HALVES": halves})
                        self.assertIn(result.returncode, (0, 4), result.stderr)  # 4: zzqxv
                        out[halves] = result.stdout + result.stderr
                    self.assertTrue(out["read"])
                    self.assertEqual(out["read"], out["widen"])

    def test_gguf_rows_read_in_place_are_the_bits_of_their_floats(self):
        """A llama GGUF file with every matrix (embedding and classifier too)
        in BF16, Q8_0 or one of ggml's other blocks (Q4_0, Q5_1, Q4_K: rows of
        256 for it, Q6_K), and its twin holding the same values in F32: with
        float32 activations (NEXTWORD_ACTIVATIONS=f32) every family prints
        the same bytes for both, whatever --batch and --threads (the products
        widen the rows exactly as they read them). With the default, 8-bit
        activations for the blocks, every family prints the same bytes
        whatever --batch and --threads, and not the twin's (the rounding is
        there; its products are the plain loop's bits in every family, as
        tests/unit/q8_activations_test.cpp checks)."""
        pieces = ["\u2581the", "\u2581cat", "\u2581sat", "\u2581a", "\u2581hat", "\u2581on",
                  "\u2581mat", "\u2581", "a", "t", "h", "e"]
        tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + pieces
        heads, kv = 4, 2

        def model(path, type_name, twin):
            d, ff = (256, 512) if type_name.endswith("_K") else (64, 96)
            rng = random.Random(3)
            g = w.Gguf()
            g.add("general.architecture", w.STRING, "llama")
            for key, value in (("context_length", 32), ("embedding_length", d),
                               ("block_count", 2), ("feed_forward_length", ff),
                               ("attention.head_count", heads),
                               ("attention.head_count_kv", kv)):
                g.add("llama." + key, w.U32, value)
            g.add("tokenizer.ggml.model", w.STRING, "llama")
            g.add_array("tokenizer.ggml.tokens", w.STRING, tokens)
            g.add_array("tokenizer.ggml.scores", w.F32, [0.0] * 259 + [-1.0] * len(pieces))

            def tensor(name, rows, length):
                ggml_type, stored, held = w.TYPES[type_name if rows > 1 else "F32"]
                values = [rng.gauss(0, 0.4) if rows > 1 else 1 + rng.uniform(-0.1, 0.1)
                          for _ in range(rows * length)]
                data = stored(values)
                if twin:
                    ggml_type, data = w.F32_TYPE, w.floats_bytes(held(data))
                g.tensor(name, [length] if rows == 1 else [length, rows], ggml_type, data)

            tensor("token_embd.weight", len(tokens), d)
            for layer in range(2):
                p = "blk.%d." % layer
                for name, rows, length in (("attn_norm", 1, d), ("attn_q", d, d),
                                           ("attn_k", kv * d // heads, d),
                                           ("attn_v", kv * d // heads, d), ("attn_output", d, d),
                                           ("ffn_norm", 1, d), ("ffn_gate", ff, d),
                                           ("ffn_up", ff, d), ("ffn_down", d, ff)):
                    tensor(p + name + ".weight", rows, length)
            tensor("output_norm.weight", 1, d)
            tensor("output.weight", len(tokens), d)
            with open(path, "wb") as f:
                f.write(g.bytes())

        # --quick: 8 lines, still two batches of 5 (a score of 12 lines takes
        # 7 s in the sanitizer build, and this test runs 24 a type and family).
        text = "the cat sat\na hat on the mat\nthe\nat the hat and the cat\n" * (2 if QUICK else 3)
        with tempfile.TemporaryDirectory(prefix="nextword-kernels-gguf-") as tmp:
            for type_name in ("BF16", "Q8_0", "Q4_0", "Q5_1", "Q4_K", "Q6_K"):
                read, twin = (os.path.join(tmp, "%s%s.gguf" % (type_name, twin))
                              for twin in ("", "-f32"))
                model(read, type_name, False)
                model(twin, type_name, True)
                for family in self.families:
                    for args in (["predict", "-f", "json", "-k", "8", "-q"],
                                 ["score", "-f", "json", "-q"]):
                        with self.subTest(type=type_name, family=family, command=args[0]):
                            whole = self.out(family, [*args, "-m", twin, "--batch", "1"], text)
                            self.assertEqual(len(whole.splitlines()), len(text.splitlines()))
                            for batch, threads in ((("5", "2"),) if QUICK else
                                                   (("1", "1"), ("5", "2"), ("12", "1"))):
                                self.assertEqual(self.out(family, [*args, "-m", read, "--batch",
                                                                   batch, "-t", threads], text,
                                                          activations="f32"),
                                                 whole.replace(twin, read))
                            if type_name == "BF16":
                                continue  # float32 activations whatever the choice
                            rounded = self.out(family, [*args, "-m", read, "--batch", "1", "-t",
                                                        "1"], text)
                            self.assertNotEqual(rounded, whole.replace(twin, read))
                            self.assertEqual(self.out(family, [*args, "-m", read, "--batch", "5",
                                                               "-t", "2"], text), rounded)
                    with self.subTest(type=type_name, family=family, command="generate"):
                        # Bytes: a random model's pieces need not be UTF-8.
                        env = dict(os.environ, NEXTWORD_KERNELS=family,
                                   NEXTWORD_ACTIVATIONS="f32")
                        out = [subprocess.run([NEXTWORD, "generate", "--greedy", "-m", m, "-n",
                                               "30", "the cat"], capture_output=True, env=env,
                                              check=True).stdout for m in (read, twin)]
                        self.assertGreater(len(out[0]), len("the cat"))
                        self.assertEqual(out[0], out[1])

    def test_a_family_that_is_not_here_is_a_usage_error(self):
        for name in ["bogus", *[f for f in FAMILIES if f not in self.families]]:
            with self.subTest(name=name):
                result = run("predict", "once upon a", env={"NEXTWORD_KERNELS": name})
                self.assertEqual(result.returncode, USAGE)
                self.assertEqual(result.stdout, "")
                self.assertRegex(result.stderr,
                                 r'^nextword: NEXTWORD_KERNELS: "' + name +
                                 r'" is not a kernel family this CPU runs \(plain, [^)]*\)\n$')


    def test_activations_other_than_q8_or_f32_are_a_usage_error(self):
        for name in ["q4", "F32", "f32 "]:
            with self.subTest(name=name):
                result = run("predict", "once upon a", env={"NEXTWORD_ACTIVATIONS": name})
                self.assertEqual(result.returncode, USAGE)
                self.assertEqual(result.stdout, "")
                self.assertEqual(result.stderr, 'nextword: NEXTWORD_ACTIVATIONS: "%s" is not q8 '
                                 'or f32\n' % name)
        for name in ["q8", "f32", ""]:  # empty: the default
            with self.subTest(name=name):
                self.assertEqual(run("predict", "once upon a",
                                     env={"NEXTWORD_ACTIVATIONS": name}).returncode, 0)


if __name__ == "__main__":
    cli_common.main(__import__(__name__))
