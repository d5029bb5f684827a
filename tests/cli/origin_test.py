#!/usr/bin/env python3
"""The shipped files are what the tools make from ../shared's text:
data/stories/lexicon.tsv, lexicon.bin and vocab.json again from the stories
model's training text. Needs ../shared (tests/needs_shared.py skips it
without).

    python3 tests/cli/origin_test.py build/nextword data
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import cli_common
from cli_common import read, run

NEXTWORD = DATA = None  # set by cli_common.main


class Origin(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_shipped_lexicon_is_what_train_writes(self):
        """data/stories/lexicon.tsv comes from the default model's own text:
        a run on it (data/stories/train.sh's split; one step suffices, the
        lexicon and vocabulary are written first) writes the shipped lexicon
        and vocabulary byte for byte."""
        corpus = os.path.join(DATA, "..", "..", "shared", "corpus")
        continuation = os.path.join(corpus, "tinystories-train-continuation-lowercase.txt")
        subprocess.run([os.path.join(DATA, "..", "tools", "dev_split.sh"), continuation,
                        self.tmp], check=True)
        train_part = os.path.join(self.tmp, "continuation-train.txt")
        out = os.path.join(self.tmp, "default")
        r = run("train", os.path.join(corpus, "tinystories-train-head.txt"), train_part, "-o", out,
                "--vocab-size", "4096", "--d-model", "8", "--layers", "1", "--heads", "1",
                "--d-ff", "8", "--context", "64", "--batch", "1", "--steps", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        # lexicon.bin: train's index and the one the build made (`nextword lexicon`).
        with open(os.path.join(out, "lexicon.bin"), "rb") as f, \
                open(os.path.join(DATA, "stories", "lexicon.bin"), "rb") as g:
            self.assertEqual(f.read(), g.read())
        for name in ("lexicon.tsv", "vocab.json"):
            self.assertEqual(read(os.path.join(out, name)),
                             read(os.path.join(DATA, "stories", name)), name)


if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
