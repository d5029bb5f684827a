#!/usr/bin/env python3
"""A model nobody here trained (issue 36): llama2.c's stories260K, both of
its file versions, converted with its tokenizer, then run as a person runs
nextword. The golden test: greedy `generate` from "Once upon a time" writes
exactly what llama2.c's run.c writes (`run stories260K.bin -z tok512.bin
-t 0.0 -n 256 -i "Once upon a time"`: 256 forward passes, from <s> on,
print the prompt's 4 pieces, then one new piece each: 252).

    python3 tests/cli/llama2c_test.py build/nextword data ../shared/models
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import cli_common
from cli_common import MODEL, USAGE, run

SHARED = None
GENERATED = 252


def stories(name):
    return os.path.join(SHARED, "stories260K", name)


class Llama2c(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="nextword-llama2c-")
        cls.models = {}
        for version, name in ((0, "stories260K.bin"), (1, "stories260K_v1.bin")):
            out = os.path.join(cls.tmp.name, "v%d" % version)
            r = run("convert", stories(name), "--tokenizer", stories("tok512.bin"), out)
            assert r.returncode == 0, r.stderr
            cls.models[version] = out

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_both_versions_convert_to_the_same_model(self):
        files = []
        for model in self.models.values():
            with open(os.path.join(model, "weights.safetensors"), "rb") as f:
                files.append(f.read())
        self.assertEqual(files[0], files[1])
        with open(os.path.join(self.models[0], "vocab.json"), encoding="utf-8") as f:
            pieces = json.load(f)
        self.assertEqual(len(pieces), 512)
        self.assertEqual(pieces[:3], ["<unk>", "\n<s>\n", "\n</s>\n"])

    def test_the_model_round_trips_through_weights_json(self):
        model = self.models[0]
        as_json = os.path.join(self.tmp.name, "weights.json")
        r = run("convert", os.path.join(model, "weights.safetensors"), as_json)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(as_json, encoding="utf-8") as f:
            root = json.load(f)
        self.assertEqual(root["config"]["n_kv_heads"], 4)
        self.assertEqual(root["config"]["tokenizer"], {"kind": "sentencepiece"})
        self.assertEqual(root["tensors"]["piece_scores"]["shape"], [512])
        vocab = os.path.join(model, "vocab.json")
        outputs = [run("predict", "--vocab", vocab, "--weights", weights, "-f", "json", "-k", "9",
                       "Lily and Ben").stdout
                   for weights in (as_json, os.path.join(model, "weights.safetensors"))]
        self.assertEqual(outputs[0], outputs[1])
        self.assertEqual(json.loads(outputs[0])["predictions"][0]["word"], "were")

    def test_greedy_generate_is_run_c_byte_for_byte(self):
        with open(stories("greedy-once-upon-a-time.txt"), "rb") as f:
            golden = f.read()
        for version, model in self.models.items():
            with self.subTest(version=version):
                r = subprocess.run([cli_common.NEXTWORD, "generate", "--model", model,
                                    "-n", str(GENERATED), "Once upon a time"],
                                   capture_output=True, check=False)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout, golden)

    def test_commands_run_on_the_converted_model(self):
        model = self.models[1]
        for args in (["predict", "-k", "3", "Once upon a"], ["attention", "Once upon a"],
                     ["score", "Once upon a time, there was a girl."],
                     ["predict", "-f", "json", "Lily went"]):
            with self.subTest(args=args):
                r = run(*args[:1], "--model", model, *args[1:])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout.strip())
        r = run("predict", "--model", model, "-f", "json", "Once upon a")
        record = json.loads(r.stdout)
        self.assertEqual(record["tokens"], ["\n<s>\n", " Once", " upon", " a"])
        self.assertEqual(record["predictions"][0]["word"], "time")

    def test_broken_files_are_one_line_errors(self):
        with open(stories("stories260K_v1.bin"), "rb") as f:
            checkpoint = f.read()
        with open(stories("tok512.bin"), "rb") as f:
            tokenizer = f.read()
        out = os.path.join(self.tmp.name, "out")
        cases = {
            "cut.bin": (checkpoint[:4096 * 100], stories("tok512.bin"), "has 409600 bytes"),
            "padded.bin": (checkpoint + b"\0" * 8, stories("tok512.bin"),
                           "8 bytes after the last tensor"),
            "header.bin": (checkpoint[:8] + (-64).to_bytes(4, "little", signed=True) +
                           checkpoint[12:], stories("tok512.bin"),
                           "header.dim: must be 1 to 1048576, got -64"),
        }
        short_tokenizer = os.path.join(self.tmp.name, "short.tok")
        with open(short_tokenizer, "wb") as f:
            f.write(tokenizer[:len(tokenizer) // 2])
        cases["ok.bin"] = (checkpoint, short_tokenizer, short_tokenizer + ": piece ")
        for name, (data, tok, message) in cases.items():
            with self.subTest(name=name):
                path = os.path.join(self.tmp.name, name)
                with open(path, "wb") as f:
                    f.write(data)
                r = run("convert", path, "--tokenizer", tok, out)
                self.assertEqual(r.returncode, MODEL, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertEqual(r.stdout, "")
        self.assertFalse(os.path.exists(os.path.join(out, "weights.safetensors")))
        r = run("convert", stories("stories260K.bin"), os.path.join(self.tmp.name, "x"))
        self.assertEqual(r.returncode, USAGE, r.stderr)
        self.assertIn("--tokenizer", r.stderr)


if __name__ == "__main__":
    SHARED = os.path.abspath(sys.argv.pop(3))
    cli_common.main(sys.modules[__name__])
