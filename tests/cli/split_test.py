#!/usr/bin/env python3
"""Records do not depend on how the work is split: every record of
predict, complete, score and attention is byte-identical whatever --batch,
--threads and the way the input is cut into processes, on the default model
and on small models of other shapes (where OpenBLAS picks other kernels).

    python3 tests/cli/split_test.py build/nextword data [--quick]

--quick (the sanitizer build, whose binary runs 5 times slower): one fixture
model instead of three, half the lines.
"""
import json
import os
import random
import sys
import tempfile
import unittest

import cli_common
from cli_common import run

NEXTWORD = DATA = None  # set by cli_common.main
QUICK = cli_common.quick()
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "parity")

# The way each command prints its scores in full (shortest round-trip floats).
COMMANDS = {
    "predict": ["predict", "-f", "json", "-k", "8"],
    "complete": ["complete", "-f", "json"],
    "score": ["score", "-f", "json"],
    "attention": ["attention", "-f", "json"],
}
CONFIGS = [(batch, threads) for batch in (1, 7, 64) for threads in (1, 2)]


def random_lines(vocab_path, count, seed):
    """Phrases of 1 to 90 words (past max_len for the fixture models, whose
    max_len is 8 to 12), drawn from the vocabulary, with unknown words,
    punctuation, a word being typed and lines that cannot be predicted (no
    words)."""
    with open(vocab_path, encoding="utf-8") as f:
        vocab = json.load(f)
    words = [w for w in (vocab if isinstance(vocab, list) else vocab.get("tokens", vocab))
             if isinstance(w, str) and not w.startswith("<")]
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        if i % 37 == 5:
            lines.append(rng.choice(["", "   ", "?!"]))
            continue
        length = rng.choice([1, 2, 3, 5, 8, 13, 21]) if i % 5 else rng.randint(1, 90)
        phrase = [rng.choice(words) for _ in range(length)]
        if i % 7 == 3:
            phrase.insert(rng.randrange(len(phrase) + 1), "zzqxv")
        if i % 11 == 4:
            phrase[-1] = phrase[-1][:max(1, len(phrase[-1]) // 2)]  # a word being typed
        lines.append(" ".join(phrase) + rng.choice(["", "", " ", ".", ","]))
    return "\n".join(lines) + "\n"


class SplitTest(unittest.TestCase):
    def models(self):
        """(name, model arguments, vocab.json) of every model tried."""
        found = [("default", ["-m", os.path.join(DATA, "stories")],
                  os.path.join(DATA, "stories", "vocab.json"))]
        for name in sorted(os.listdir(FIXTURES))[1:2 if QUICK else 4]:
            folder = os.path.join(FIXTURES, name)
            found.append((name, ["-m", folder], os.path.join(folder, "vocab.json")))
        return found

    def output(self, args, text):
        result = run(*args, "-q", stdin=text)
        self.assertIn(result.returncode, (0, 4), result.stderr)  # 4: lines with no words
        self.assertTrue(result.stdout)
        return result.stdout

    def test_batches_and_threads(self):
        for name, model, vocab in self.models():
            count = 160 if name == "default" else 80
            text = random_lines(vocab, count // 2 if QUICK else count, seed=len(name))
            for command, args in COMMANDS.items():
                with self.subTest(model=name, command=command):
                    reference = None
                    for batch, threads in CONFIGS:
                        out = self.output([*args, *model, "--batch", str(batch), "-t",
                                           str(threads)], text)
                        if reference is None:
                            reference = out
                            self.assertEqual(len(out.splitlines()), len(text.splitlines()))
                        else:
                            self.assertEqual(out, reference, f"--batch {batch} -t {threads}")

    def test_cut_into_processes(self):
        """One process per piece, pieces of 1, 7, 64 and the rest, joined:
        what `parallel --pipe -k` does (tests/cli/parallel_test.py runs the
        real thing)."""
        for name, model, vocab in self.models()[:2]:
            text = random_lines(vocab, 120, seed=7)
            lines = text.splitlines(keepends=True)
            for command, args in COMMANDS.items():
                with self.subTest(model=name, command=command):
                    whole = self.output([*args, *model], text)
                    pieces, at = [], 0
                    for size in (1, 7, 64, 1, len(lines)):
                        if at < len(lines):
                            pieces.append("".join(lines[at:at + size]))
                            at += size
                    joined = "".join(self.output([*args, *model, "-t", "1"], p) for p in pieces)
                    self.assertEqual(joined, whole)

    def test_score_document(self):
        """--document scores a whole file in windows grouped by --batch."""
        model = ["-m", os.path.join(DATA, "stories")]
        text = random_lines(os.path.join(DATA, "stories", "vocab.json"), 60, seed=3)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "document.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            outputs = {(b, t): self.output(["score", "-f", "json", "--document", path, *model,
                                            "--batch", str(b), "-t", str(t)], "")
                       for b, t in CONFIGS}
        reference = outputs[CONFIGS[0]]
        for config, out in outputs.items():
            self.assertEqual(out, reference, f"--batch {config[0]} -t {config[1]}")


if __name__ == "__main__":
    cli_common.main(__import__(__name__))
