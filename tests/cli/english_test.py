#!/usr/bin/env python3
"""The general-English model, data/english, as a person uses it: the default
model, cased, natural text out, never <unk>, words completed in the writer's
case.

    python3 tests/cli/english_test.py build/nextword data
"""
import json
import re
import unittest

import cli_common
from cli_common import run

PHRASES = ["the president of the united", "fix a bug in the", "I will send you the report by",
           "The capital of France is", "He was born in", "the first world", "New York"]


def words(stdout):
    """The words of a `predict` line (word score word score ...)."""
    return stdout.split()[0::2]


class English(unittest.TestCase):
    def predict(self, *args):
        r = run("predict", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return words(r.stdout)

    def test_the_default_model(self):
        cli_common.TEST_MODEL = None
        try:
            self.assertEqual(self.predict("the president of the united")[0], "States")
            r = run("models", "-f", "json")
        finally:
            cli_common.TEST_MODEL = "stories"
        self.assertEqual(r.returncode, 0, r.stderr)
        models = {m["name"]: m for m in map(json.loads, r.stdout.splitlines())}
        self.assertTrue(models["english"]["default"])
        self.assertFalse(models["stories"]["default"])
        self.assertGreaterEqual(models["english"]["vocabulary"], 32768)

    def test_cased_predictions_never_unk(self):
        for phrase in PHRASES:
            with self.subTest(phrase=phrase):
                predicted = self.predict("-m", "english", "-k", "20", phrase)
                self.assertEqual(len(predicted), 20)
                self.assertNotIn("<unk>", predicted)
                self.assertFalse(any("@" in w for w in predicted), predicted)
        self.assertIn("States", self.predict("-m", "english", "the United"))

    def test_generate_writes_natural_text(self):
        r = run("generate", "-m", "english", "The history of the", "-n", "60")
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout.strip()
        self.assertTrue(text.startswith("The history of the "), text)
        self.assertNotIn("<unk>", text)
        self.assertNotRegex(text, r"@[-,.]@|\s[,.;:!?)]|\(\s")

    def test_generate_does_not_loop_unless_greedy(self):
        # A newcomer's first try: greedy loops on "of the city"; the default
        # (src/predict/repetition.h) writes no run of 4 words twice, prompt
        # included, and --greedy keeps the old text.
        phrase = "The population of the town was"
        r = run("generate", "-m", "english", "-n", "25", "--greedy", phrase)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, phrase + " a population" + " of the city" * 7 + " of the\n")
        for options in ([], ["--temperature", "0.8", "--seed", "3"]):
            with self.subTest(options=options):
                r = run("generate", "-m", "english", "-n", "60", "-f", "json", *options, phrase)
                self.assertEqual(r.returncode, 0, r.stderr)
                words = phrase.split() + json.loads(r.stdout)["words"]
                self.assertEqual(len(words), 66)
                grams = [tuple(words[i:i + 4]) for i in range(len(words) - 3)]
                self.assertEqual(len(set(grams)), len(grams), words)
        # The guard's own option set to off is plain greedy too.
        self.assertEqual(run("generate", "-m", "english", "-n", "25", "--no-repeat-ngram", "0",
                             phrase).stdout,
                         run("generate", "-m", "english", "-n", "25", "--greedy", phrase).stdout)
        r = run("generate", "-m", "english", "--greedy", "--temperature", "0.5", phrase)
        self.assertEqual(r.returncode, cli_common.USAGE, r.stderr)

    def test_complete_in_the_writers_case(self):
        r = run("complete", "-m", "english", "the president of the United Sta")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[0], "States")
        # Matched whatever the case; the model's proper noun keeps its capital.
        r = run("complete", "-m", "english", "the president of the united sta")
        self.assertEqual(r.stdout.split()[0].lower(), "states")


if __name__ == "__main__":
    cli_common.main(__import__(__name__))
