#!/usr/bin/env python3
"""GGUF files run as a person runs nextword: `--model FILE.gguf` in the
commands, read in place. The golden test: greedy `generate` from "Once upon
a time" on llama.cpp's stories260K.gguf (the same weights as llama2.c's
stories260K.bin) writes exactly what llama2.c's run.c writes. Files that
cannot be read are one line naming the file and the field, exit 3.

    python3 tests/cli/gguf_test.py build/nextword data ../shared/models
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import cli_common
from cli_common import MODEL, run

SHARED = None
GENERATED = 252  # run.c's 256 forward passes, less the prompt's 4 pieces


def gguf(name):
    return os.path.join(SHARED, "gguf", name)


class Gguf(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="nextword-gguf-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_greedy_generate_is_run_c_byte_for_byte(self):
        with open(os.path.join(SHARED, "stories260K", "greedy-once-upon-a-time.txt"), "rb") as f:
            golden = f.read()
        r = subprocess.run([cli_common.NEXTWORD, "generate", "--greedy", "--model",
                            gguf("stories260K.gguf"), "-n", str(GENERATED), "Once upon a time"],
                           capture_output=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, golden)

    def test_generate_does_not_repeat_a_run_of_4_words_unless_greedy(self):
        # run.c's greedy text says "didn't know what to do." three times; by
        # default (src/predict/repetition.h) no run of 4 words stands twice,
        # words as `score` counts them, whatever pieces spell them.
        def repeats(text):
            r = run("score", "--model", gguf("stories260K.gguf"), "-f", "json",
                    text.replace("\n", " "))
            self.assertEqual(r.returncode, 0, r.stderr)
            words = [w["word"] for w in json.loads(r.stdout)["words"] if w["word"].strip()]
            grams = [tuple(words[i:i + 4]) for i in range(len(words) - 3)]
            return len(grams) - len(set(grams))

        with open(os.path.join(SHARED, "stories260K", "greedy-once-upon-a-time.txt"),
                  encoding="utf-8") as f:
            golden = f.read()
        self.assertGreater(repeats(golden), 10)
        r = run("generate", "--model", gguf("stories260K.gguf"), "-n", str(GENERATED),
                "Once upon a time")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(repeats(r.stdout), 0, r.stdout)
        # The same text up to the first repeat.
        first = golden.index("didn't know what to do.") + len("didn't know what to do.")
        self.assertEqual(r.stdout[:first], golden[:first])

    def test_greedy_generate_through_an_ollama_store(self):
        # The same file as ollama keeps it (tests/cli/ollama_test.py has the
        # store's every case): blobs/sha256-HEX named by its manifest.
        with open(gguf("stories260K.gguf"), "rb") as f:
            data = f.read()
        digest = hashlib.sha256(data).hexdigest()
        store = os.path.join(self.tmp.name, "ollama")
        manifests = os.path.join(store, "manifests", "registry.ollama.ai", "library", "stories")
        os.makedirs(manifests, exist_ok=True)
        os.makedirs(os.path.join(store, "blobs"), exist_ok=True)
        shutil.copyfile(gguf("stories260K.gguf"), os.path.join(store, "blobs", "sha256-" + digest))
        with open(os.path.join(manifests, "260k"), "w", encoding="utf-8") as f:
            json.dump({"schemaVersion": 2, "layers": [{
                "mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + digest,
                "size": len(data)}]}, f)
        with open(os.path.join(SHARED, "stories260K", "greedy-once-upon-a-time.txt"), "rb") as f:
            golden = f.read()
        r = subprocess.run([cli_common.NEXTWORD, "generate", "--greedy", "--model",
                            "ollama:stories:260k",
                            "-n", str(GENERATED), "Once upon a time"], capture_output=True,
                           env={**os.environ, "OLLAMA_MODELS": store}, check=False)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(r.stdout, golden)

    def test_a_file_in_the_working_directory_is_a_model_not_a_name(self):
        here = os.path.join(self.tmp.name, "here")
        os.makedirs(here, exist_ok=True)
        shutil.copyfile(gguf("stories260K.gguf"), os.path.join(here, "stories260K.gguf"))
        r = subprocess.run([cli_common.NEXTWORD, "predict", "-m", "stories260K.gguf", "-f", "json",
                            "Once upon a"], cwd=here, capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        self.assertEqual(record["tokens"], ["<s>", " Once", " upon", " a"])
        self.assertEqual(record["predictions"][0]["word"], "time")

    def test_a_gguf_file_in_a_model_folder_is_a_model_by_name(self):
        folder = os.path.join(self.tmp.name, "models")
        os.makedirs(folder, exist_ok=True)
        shutil.copyfile(gguf("stories260K.gguf"), os.path.join(folder, "tiny.gguf"))
        env = {"NEXTWORD_MODELS": folder}
        r = run("models", "--names", env=env)
        self.assertIn("tiny", r.stdout.split("\n"))
        r = run("models", "-f", "json", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        listed = [json.loads(line) for line in r.stdout.splitlines()]
        tiny = [m for m in listed if m["name"] == "tiny"]
        self.assertEqual(len(tiny), 1, r.stdout)
        self.assertEqual(tiny[0]["vocabulary"], 512)
        self.assertEqual(tiny[0]["directory"], os.path.join(folder, "tiny.gguf"))
        r = run("predict", "-m", "tiny", "-k", "1", "Once upon a", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("time "), r.stdout)

    def test_commands_run_on_the_file(self):
        model = gguf("stories260K.gguf")
        for args in (["predict", "-k", "3", "Once upon a"], ["attention", "Once upon a"],
                     ["score", "Once upon a time, there was a girl."], ["info"],
                     ["complete", "Once upon a ti"], ["lens", "Once upon a"]):
            with self.subTest(args=args):
                r = run(*args[:1], "--model", model, *args[1:])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertTrue(r.stdout.strip())
        r = run("info", "--model", model)
        self.assertIn("tokenizer model          llama (SentencePiece)", r.stdout)
        r = run("info", "--model", model, "-f", "json")
        self.assertEqual(json.loads(r.stdout)["gguf"]["tokenizer"], "llama")

    def test_tokenize_gives_llama_cpps_ids_for_its_test_strings(self):
        # llama.cpp's tokenizer tests: each string of NAME.gguf.inp (separated
        # by a line __ggml_vocab_test__) and its ids in NAME.gguf.out, without
        # the BOS token, from a vocabulary-only file.
        # All nine: SentencePiece (llama-spm, phi-3) and byte-level BPE. The
        # texts of one line go through stdin, one process a vocabulary; those
        # with line breaks as arguments.
        for name in ("llama-spm", "phi-3", "gpt-2", "starcoder", "falcon", "deepseek-llm",
                     "deepseek-coder", "mpt", "refact"):
            vocab = os.path.join(SHARED, "gguf", "vocab", "ggml-vocab-%s.gguf" % name)
            with open(vocab + ".inp", encoding="utf-8") as f:
                texts = f.read().split("\n__ggml_vocab_test__\n")
            with open(vocab + ".out", encoding="utf-8") as f:
                expected = f.read().split("\n")
            self.assertGreaterEqual(len(texts), 46)
            pairs = list(zip(texts[:46], expected))
            lines = [(t, ids) for t, ids in pairs if "\n" not in t and "\r" not in t]
            r = run("tokenize", "-m", vocab, stdin="".join(t + "\n" for t, _ in lines))
            self.assertEqual(r.returncode, 0, r.stderr)
            for (text, ids), got in zip(lines, r.stdout.split("\n")):
                with self.subTest(vocabulary=name, text=text):
                    self.assertEqual(got.split(), ids.split())
            for text, ids in pairs:
                if (text, ids) in lines:
                    continue
                with self.subTest(vocabulary=name, text=text):
                    r = run("tokenize", "-m", vocab, "--", text)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual(r.stdout.split(), ids.split())
        r = run("tokenize", "-m", gguf("stories260K.gguf"), "-f", "json", "Once upon a time")
        self.assertEqual(json.loads(r.stdout), {"ids": [403, 407, 261, 378],
                                                "pieces": [" Once", " upon", " a", " time"]})
        r = run("tokenize", "-m", gguf("stories260K.gguf"), stdin="Once upon\na time\n")
        self.assertEqual(r.stdout, "403 407\n261 378\n")
        # --join writes the pieces' bytes, the lines themselves; so too for
        # every one-line text of llama.cpp's tests, in both kinds of tokenizer.
        r = run("tokenize", "--join", "-m", gguf("stories260K.gguf"), stdin="Once upon\na time\n")
        self.assertEqual(r.stdout, "Once upon\na time\n")
        for name in ("llama-spm", "gpt-2"):
            vocab = os.path.join(SHARED, "gguf", "vocab", "ggml-vocab-%s.gguf" % name)
            with open(vocab + ".inp", encoding="utf-8") as f:
                texts = f.read().split("\n__ggml_vocab_test__\n")[:46]
            lines = "".join(t + "\n" for t in texts if "\n" not in t and "\r" not in t)
            r = run("tokenize", "--join", "-m", vocab, stdin=lines)
            self.assertEqual((r.returncode, r.stdout), (0, lines), name)

    def test_files_that_cannot_be_read_are_one_line(self):
        with open(gguf("stories260K.gguf"), "rb") as f:
            good = f.read()
        cut = os.path.join(self.tmp.name, "cut.gguf")
        with open(cut, "wb") as f:
            f.write(good[:len(good) // 2])
        cases = {
            gguf("stories260K-gguf-v1.gguf"): "version: 1, GGUF's first version",
            cut: "(truncated?)",
        }
        for path, message in cases.items():
            with self.subTest(path=path):
                r = run("predict", "--model", path, "Once upon a")
                self.assertEqual(r.returncode, MODEL, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(path + ": ", r.stderr)
                self.assertIn(message, r.stderr)
                self.assertEqual(r.stdout, "")
        # A vocabulary-only file: no tensors.
        r = run("predict", "--model", os.path.join(SHARED, "gguf", "vocab",
                                                   "ggml-vocab-llama-spm.gguf"), "Once upon a")
        self.assertEqual(r.returncode, MODEL, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("ggml-vocab-llama-spm.gguf: ", r.stderr)


if __name__ == "__main__":
    SHARED = os.path.abspath(sys.argv.pop(3))
    cli_common.main(sys.modules[__name__])
