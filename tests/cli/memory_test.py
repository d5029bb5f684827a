#!/usr/bin/env python3
"""The memory (docs/usage.md, "The memory"; data/FORMAT.md, memory.bin): `nextword
memory` counts a slice of TinyStories for a copy of the stories model,
fits its weights on a development text, and every command that predicts or
scores then mixes it in; --no-memory, and a model without memory.bin, give
the transformer's numbers exactly; the inspection views show the
transformer's own with the memory's weight; a bad file is one line naming
the field; train --init-from starts from a model's weights.

    python3 tests/cli/memory_test.py build/nextword data
"""
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

import cli_common
from cli_common import MODEL, USAGE, run

NEXTWORD = DATA = None
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared",
                      "corpus")


def wikitext(text, articles=4, words=400):
    """A development text in WikiText's form: ' = Title = ' headings, then
    space-separated tokens."""
    tokens = text.replace(".", " .").replace(",", " ,").split()
    out = []
    for a in range(articles):
        out.append(" = Story %d = \n\n %s \n\n" % (a, " ".join(tokens[a * words:(a + 1) * words])))
    return "".join(out)


class Memory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="nextword-memory-")
        cls.model = os.path.join(cls.tmp, "stories")
        shutil.copytree(os.path.join(DATA, "stories"), cls.model)
        os.remove(os.path.join(cls.model, "weights.json"))
        with open(os.path.join(CORPUS, "tinystories-train-head.txt"), encoding="utf-8") as f:
            text = f.read()
        cls.train = os.path.join(cls.tmp, "train.txt")
        with open(cls.train, "w", encoding="utf-8") as f:
            f.write(text[:len(text) // 2])  # a slice, as CI may take
        cls.dev = os.path.join(cls.tmp, "dev.tokens")
        with open(os.path.join(CORPUS, "tinystories-train-continuation-lowercase.txt"),
                  encoding="utf-8") as f:
            dev = f.read()
        with open(cls.dev, "w", encoding="utf-8") as f:
            f.write(wikitext(dev))
        cls.tokens = os.path.join(cls.tmp, "train.tok")
        r = run("memory", "-m", cls.model, cls.train, "--order", "4", "--cutoffs", "1,2",
                "--dev", cls.dev, "-f", "json", "--tokens", cls.tokens)
        assert r.returncode == 0, r.stderr
        cls.summary = json.loads(r.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_summary(self):
        s = self.summary
        self.assertEqual(s["file"], os.path.join(self.model, "memory.bin"))
        self.assertEqual(s["bytes"], os.path.getsize(s["file"]))
        self.assertEqual([o["order"] for o in s["orders"]], [1, 2, 3, 4])
        self.assertEqual([o["cutoff"] for o in s["orders"]], [1, 1, 2, 2])
        # Cutoff 1 keeps every bigram; cutoff 2 fewer trigrams than there are.
        self.assertEqual(s["orders"][1]["kept"], s["orders"][1]["distinct"])
        self.assertLess(s["orders"][2]["kept"], s["orders"][2]["distinct"])
        fit = s["fit"]
        self.assertEqual(len(fit["lambdas"]), 4 * 16)
        # The nats per model token (no spelling) order as the perplexities do.
        self.assertLess(fit["mixed_nats"], min(fit["transformer_nats"], fit["memory_nats"]))
        # --tokens: the counted stream as words, a document a line; the
        # unigrams it holds are the memory's (order 1 counts every token).
        with open(self.tokens, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual(sum(len(line.split()) for line in lines) + len(lines), s["tokens"])
        self.assertTrue(lines[0].startswith("one day , a little girl"), lines[0][:40])
        self.assertTrue(all(0 <= x <= 1 for x in fit["lambdas"]))
        # The fitted mixture beats both of its parts on the text it was fitted on.
        self.assertLess(fit["perplexity"], fit["transformer_perplexity"])
        self.assertLess(fit["perplexity"], fit["memory_perplexity"])

    def test_query_is_the_format_read_plainly(self):
        # --query: the memory alone on lines of words; its total ln p is the
        # one tests/bench/kenlm_compare.py's reader (FORMAT.md read in
        # Python) gives, context by context, lines starting short.
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "bench"))
        import kenlm_compare
        with open(self.tokens, encoding="utf-8") as f:
            lines = [line for line in f.read().splitlines() if line.strip()][:30]
        lines.append("lily zzzunknownzzz went")  # a word outside the vocabulary
        path = os.path.join(self.tmp, "query.tok")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        r = run("memory", "-m", self.model, "--query", path, "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        q = json.loads(r.stdout)
        vocab = kenlm_compare.load_vocab(self.model)
        index = {w: i for i, w in enumerate(vocab)}
        memory = kenlm_compare.Memory(os.path.join(self.model, "memory.bin"), vocab)
        unk, bos = index["<unk>"], index["<bos>"]
        scores = kenlm_compare.score_memory(memory, index, [line.split() for line in lines],
                                            unk, bos)
        total = math.fsum(x for line in scores for x in line)
        self.assertEqual(q["tokens"], sum(len(line.split()) for line in lines))
        self.assertEqual(q["unknown"], 1)
        self.assertAlmostEqual(q["total_ln_p"] / total, 1.0, places=12)
        self.assertGreater(q["lookups_per_s"], 0)

    def predict(self, *extra, model=None):
        r = run("predict", "-m", model or self.model, "lily and her mom went to the", "-f", "json",
                *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_no_memory_is_the_model_without_one(self):
        plain = self.predict(model=os.path.join(DATA, "stories"))
        self.assertEqual(self.predict("--no-memory"), plain)
        self.assertNotIn("memory_weight", plain)
        mixed = self.predict()
        self.assertIn("memory_weight", mixed)
        self.assertNotEqual(mixed["predictions"], plain["predictions"])
        # ln p of the mixture: the listed probabilities are those logits' exponents.
        for p in mixed["predictions"]:
            self.assertAlmostEqual(p["probability"], 2.718281828 ** p["logit"], places=5)

    def test_attention_shows_the_transformer(self):
        r = run("attention", "-m", self.model, "lily and her mom went to the", "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        plain = self.predict("--no-memory")
        self.assertEqual(record["predictions"], plain["predictions"])
        self.assertEqual(record["memory_weight"], self.predict()["memory_weight"])

    def eval(self, *extra):
        r = run("eval", "-m", self.model, "--wikitext", self.dev, "-f", "json", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_eval_mixes_and_splits_the_loss(self):
        mixed, alone = self.eval(), self.eval("--no-memory")
        # The fit's figures are eval's (the same text, protocol and weights).
        self.assertAlmostEqual(mixed["perplexity"], self.summary["fit"]["perplexity"], places=6)
        self.assertAlmostEqual(alone["perplexity"],
                               self.summary["fit"]["transformer_perplexity"], places=6)
        for r in (mixed, alone):
            bands = r["bands"]
            self.assertEqual([b["band"] for b in bands], ["vocabulary", "outside"])
            self.assertEqual(sum(b["tokens"] for b in bands), r["model_tokens"])
            self.assertAlmostEqual(sum(b["total_nats"] for b in bands), r["total_nats"], places=6)
            self.assertAlmostEqual(sum(b["loss_share"] for b in bands), 1.0, places=9)

    def test_score_and_complete_mix(self):
        line = "once upon a time there was a little girl named lily\n"
        scores = [run("score", "-m", self.model, "-f", "json", *extra, stdin=line)
                  for extra in ((), ("--no-memory",))]
        for r in scores:
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotEqual(scores[0].stdout, scores[1].stdout)
        plain = run("score", "-m", os.path.join(DATA, "stories"), "-f", "json", stdin=line)
        self.assertEqual(scores[1].stdout, plain.stdout)
        completions = [run("complete", "-m", self.model, "once upon a ti", *extra)
                       for extra in ((), ("--no-memory",))]
        self.assertEqual(completions[0].returncode, 0, completions[0].stderr)
        self.assertTrue(completions[0].stdout.split()[0].startswith("ti"))

    def test_bad_files_are_one_line_naming_the_field(self):
        broken = os.path.join(self.tmp, "broken")
        shutil.copytree(self.model, broken)
        path = os.path.join(broken, "memory.bin")
        with open(path, "rb") as f:
            data = f.read()
        cases = [(data[:-8], path + ": " + str(len(data) - 8) + " bytes, but its header describes "
                  + str(len(data)) + " (truncated?)"),
                 (b"NWMEMORX" + data[8:], path + ": magic: not a nextword memory"),
                 (data[:16] + b"\x01" + data[17:], path + ": vocab_size: ")]
        for content, message in cases:
            with open(path, "wb") as f:
                f.write(content)
            r = run("predict", "-m", broken, "once upon a")
            self.assertEqual(r.returncode, MODEL, r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("nextword: " + message), r.stderr)
            self.assertEqual(r.stdout, "")
        # The memory of another model's vocabulary.
        fruit = os.path.join(self.tmp, "fruit")
        shutil.copytree(os.path.join(DATA, "examples", "fruit"), fruit)
        shutil.copy(os.path.join(self.model, "memory.bin"), os.path.join(fruit, "memory.bin"))
        r = run("predict", "-m", fruit, "banana apple")
        self.assertEqual(r.returncode, MODEL)
        self.assertIn("memory.bin: vocab_size:", r.stderr)
        # --no-memory does not read it at all.
        self.assertEqual(run("predict", "-m", fruit, "--no-memory", "banana apple").returncode, 0)

    def test_refit(self):
        # No text, --dev: the weights of the memory already there, fitted again
        # (to the same values: the same transformer, memory and text).
        copy = os.path.join(self.tmp, "refit")
        shutil.copytree(self.model, copy)
        path = os.path.join(copy, "memory.bin")
        with open(path, "rb") as f:
            before = f.read()
        with open(path, "r+b") as f:  # other weights first
            f.seek(384)
            f.write(b"\0" * 8 * 64)
        r = run("memory", "-m", copy, "--dev", self.dev, "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        refit = json.loads(r.stdout)
        for a, b in zip(refit["fit"]["lambdas"], self.summary["fit"]["lambdas"]):
            self.assertAlmostEqual(a, b, places=6)
        self.assertAlmostEqual(refit["fit"]["perplexity"], self.summary["fit"]["perplexity"],
                               places=6)
        with open(path, "rb") as f:
            after = f.read()
        self.assertEqual(len(after), len(before))
        self.assertEqual(after[:384], before[:384])
        self.assertEqual(after[384 + 8 * 64:], before[384 + 8 * 64:])
        r = run("memory", "-m", copy)
        self.assertEqual(r.returncode, USAGE)

    def test_usage_errors(self):
        r = run("memory", "-m", self.model, self.train, "--cutoffs", "3,2", "-o",
                os.path.join(self.tmp, "x.bin"))
        self.assertEqual(r.returncode, USAGE)
        self.assertIn("cutoffs fall with the order", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.bin")))

    def test_train_init_from(self):
        out = os.path.join(self.tmp, "tiny")
        common = ["--vocab-size", "64", "--d-model", "8", "--layers", "1", "--heads", "2",
                  "--d-ff", "8", "--context", "8", "--batch", "4", "--val-fraction", "0",
                  "--eval-every", "0", "--checkpoint-every", "0", "--threads", "1", "-f", "json"]
        r = run("train", self.dev, "-o", out, "--steps", "3", *common)
        self.assertEqual(r.returncode, 0, r.stderr)
        # One step at a learning rate of 1e-9 from it: its weights again.
        again = os.path.join(self.tmp, "again")
        r = run("train", self.dev, "-o", again, "--steps", "1", "--lr", "1e-9", "--min-lr", "0",
                "--warmup", "0", "--weight-decay", "0", "--init-from", out, *common)
        self.assertEqual(r.returncode, 0, r.stderr)
        def tensors(directory):  # as numbers (train writes base64)
            numbers = os.path.join(directory, "numbers.json")
            r = run("convert", os.path.join(directory, "weights.json"), numbers, "--numbers")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(numbers) as f:
                return json.load(f)["tensors"]
        before, after = tensors(out), tensors(again)
        self.assertEqual(sorted(before), sorted(after))
        for name in before:
            for a, b in zip(before[name]["data"], after[name]["data"]):
                self.assertAlmostEqual(a, b, places=5)
        # A warmup-stable-decay run lengthened on resume: --steps is the new total.
        longer = os.path.join(self.tmp, "longer")
        wsd = ["--schedule", "wsd", "--decay-fraction", "0.5"]
        r = run("train", self.dev, "-o", longer, "--steps", "2", *wsd,
                *[a if a != "--checkpoint-every" else "--log-every" for a in common])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(os.path.join(longer, "checkpoint.json")))
        r = run("train", "--resume", longer, "--steps", "4", "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["steps"], 4)
        r = run("train", "--resume", longer, "--steps", "3", "-f", "json")
        self.assertEqual(r.returncode, USAGE, r.stderr)
        self.assertIn("has done 4 already", r.stderr)
        # Another shape is refused, naming a tensor.
        r = run("train", self.dev, "-o", os.path.join(self.tmp, "other"), "--steps", "1",
                "--init-from", out, *[("16" if a == "8" and i == 3 else a)
                                      for i, a in enumerate(common)])
        self.assertEqual(r.returncode, USAGE, r.stderr)
        self.assertIn("--init-from " + out + ": tensor", r.stderr)


def main():
    cli_common.main(sys.modules[__name__])


if __name__ == "__main__":
    main()
