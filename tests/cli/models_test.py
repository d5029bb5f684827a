#!/usr/bin/env python3
"""Models by name (docs/usage.md, "Models by name"): `--model NAME` and `nextword
models` search $NEXTWORD_MODELS (colon-separated), then
$XDG_DATA_HOME/nextword/models (~/.local/share/nextword/models), then the
installed models or the build's data/; the first directory of a name is
what the name means. The models here are copies of data/examples/fruit,
whose answers are known: "banana apple" -> pie.

    python3 tests/cli/models_test.py build/nextword data
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

import cli_common
from cli_common import MODEL, run

NEXTWORD = DATA = None


class ModelsByName(unittest.TestCase):
    def setUp(self):
        cli_common.TEST_MODEL = None  # the default model, as a user has it
        self.tmp = tempfile.mkdtemp(prefix="nextword-models-")
        self.first, self.second, self.xdg = (os.path.join(self.tmp, d)
                                             for d in ("first", "second", "xdg"))
        for d in (self.first, self.second, os.path.join(self.xdg, "nextword", "models")):
            os.makedirs(d)

    def tearDown(self):
        cli_common.TEST_MODEL = "stories"
        shutil.rmtree(self.tmp)

    def fruit(self, where, name):
        """A copy of the fruit model as `name` in directory `where`."""
        shutil.copytree(os.path.join(DATA, "examples", "fruit"), os.path.join(where, name))
        return os.path.join(where, name)

    def env(self, **extra):
        return {"NEXTWORD_MODELS": f"{self.first}:{self.second}", "XDG_DATA_HOME": self.xdg,
                **extra}

    def listed(self, env):
        r = run("models", "-f", "json", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        return {m["name"]: m for m in map(json.loads, r.stdout.splitlines())}

    def assert_one_error(self, r, *parts):
        self.assertEqual(r.returncode, MODEL, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertTrue(r.stderr.startswith("nextword: "), r.stderr)
        for part in parts:
            self.assertIn(part, r.stderr)

    def test_the_build_lists_its_shipped_models(self):
        models = self.listed(self.env())
        self.assertEqual(sorted(models), ["english", "stories"])
        self.assertEqual(models["english"]["directory"], os.path.join(DATA, "english"))
        self.assertTrue(models["english"]["default"])
        self.assertFalse(models["stories"]["default"])
        self.assertIn("CDLA-Sharing-1.0", models["stories"]["text"])
        self.assertEqual(models["stories"]["vocabulary"], 4096)

    def test_search_order_first_directory_of_a_name_wins(self):
        self.fruit(self.second, "fruit")
        self.fruit(os.path.join(self.xdg, "nextword", "models"), "fruit")
        hidden = self.fruit(os.path.join(self.xdg, "nextword", "models"), "stories")
        models = self.listed(self.env())
        self.assertEqual(sorted(models), ["english", "fruit", "stories"])
        self.assertEqual(models["fruit"]["directory"], os.path.join(self.second, "fruit"))
        self.assertEqual(models["stories"]["directory"], hidden)
        self.assertEqual(models["stories"]["vocabulary"], 6)  # the fruit model's words
        r = run("predict", "-m", "stories", "banana apple", env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[0], "pie")
        # NEXTWORD_MODELS comes before XDG_DATA_HOME: now first/stories answers.
        self.fruit(self.first, "stories")
        self.assertEqual(self.listed(self.env())["stories"]["directory"],
                         os.path.join(self.first, "stories"))

    def test_the_default_model_by_name_along_the_path(self):
        self.fruit(self.first, "english")
        r = run("predict", "banana apple", env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[0], "pie")
        # $NEXTWORD_MODEL picks another default; `models` marks that one.
        models = self.listed(self.env(NEXTWORD_MODEL="stories"))
        self.assertTrue(models["stories"]["default"])
        self.assertFalse(models["english"]["default"])
        r = run("models", env=self.env(NEXTWORD_MODEL="stories"))
        self.assertIn("stories (default)\n", r.stdout)
        self.assertIn(f"english\n  40 parameters, 6 words, {self.first}/english\n", r.stdout)

    def test_xdg_default_and_empty_entries(self):
        home = os.path.join(self.tmp, "home")
        self.fruit(os.path.join(home, ".local", "share", "nextword", "models"), "fruit")
        # A relative XDG_DATA_HOME is ignored, as the XDG spec says: HOME's default.
        for xdg in ("", "relative/dir"):
            with self.subTest(xdg=xdg):
                models = self.listed({"HOME": home, "XDG_DATA_HOME": xdg,
                                      "NEXTWORD_MODELS": f"::{self.first}:"})
                self.assertEqual(sorted(models), ["english", "fruit", "stories"])

    def test_missing_name_says_where_it_looked(self):
        r = run("predict", "-m", "nosuch", "x", env=self.env())
        self.assert_one_error(r, "nosuch: no model of that name", "found: english, stories",
                              self.first, self.second,
                              os.path.join(self.xdg, "nextword", "models"), DATA,
                              "a directory is given as ./nosuch")

    def test_a_directory_of_the_name_that_holds_no_model(self):
        os.makedirs(os.path.join(self.second, "english"))
        r = run("predict", "the president of the", env=self.env())
        self.assert_one_error(r, os.path.join(self.second, "english") + ": not a model")

    def test_a_bad_model_is_reported_and_the_others_listed(self):
        broken = os.path.join(self.first, "broken")
        os.makedirs(broken)
        shutil.copy(os.path.join(DATA, "examples", "fruit", "weights.json"), broken)
        with open(os.path.join(broken, "vocab.json"), "w") as f:
            f.write('["<unk>", ')
        r = run("models", "-f", "json", env=self.env())
        self.assertEqual(r.returncode, MODEL, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertTrue(r.stderr.startswith(f"nextword: {broken}/vocab.json: "), r.stderr)
        names = [json.loads(line)["name"] for line in r.stdout.splitlines()]
        self.assertEqual(names, ["english", "stories"])
        r = run("predict", "-m", "broken", "x", env=self.env())
        self.assert_one_error(r, f"{broken}/vocab.json: ")
        # --names reads no model: the broken one is named with the others.
        r = run("models", "--names", env=self.env())
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "broken\nenglish\nstories\n", ""))


if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
