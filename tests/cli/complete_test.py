#!/usr/bin/env python3
"""End-to-end tests of predictive text: `nextword complete` (records, the
stdin stream as one typing session, case, the lexicon, --no-repeat, --learn
and --history, bad input) and `nextword eval --ksr`, whose counts must equal
those of the independent protocol in tests/bench/ksr_protocol.py driving the
`complete` stream line by line.

    python3 tests/cli/complete_test.py build/nextword data
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import cli_common
from cli_common import MODEL, INPUT, USAGE, read, run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import ksr_protocol  # noqa: E402

NEXTWORD = DATA = None  # set by cli_common.main

STORY = ("once upon a time, there was a little girl named lily. she loved to play outside "
         "with her dog, max. one day, lily and max went to the park. \"look, max!\" said "
         "lily. \"a big red ball!\" max barked and ran to the ball. lily laughed.")
# Typographic quotes and apostrophes: a word is the same word only in the
# same spelling, and suggestions follow the writer's (don’t after “).
CURLY = ("mom said, \u201cit\u2019s late. let\u2019s go home.\u201d lily didn\u2019t want "
         "to go. \u201cdon\u2019t be sad,\u201d said mom. \u201cwe\u2019ll come back.\u201d "
         "lily said, \"it's fun here. i don't want to go.\"")


def words(record):
    return record.split("  ") if record else []


class Complete(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.fruit = os.path.join(DATA, "examples", "fruit")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_the_word_being_typed_and_the_next_word(self):
        r = run("complete", "once upon a ti")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(words(r.stdout.rstrip("\n"))[0], "time")
        self.assertTrue(all(w.startswith("ti") for w in words(r.stdout.rstrip("\n"))))
        self.assertEqual(len(words(r.stdout.rstrip("\n"))), 6)  # presage's default k
        # Several arguments are one text, joined by spaces.
        self.assertEqual(run("complete", "once", "upon", "a", "ti").stdout, r.stdout)
        # A text ending in a space asks for the next word: the same as predict's.
        nxt = run("complete", "-k", "3", "-f", "tsv", "the little girl was very ").stdout.split("\t")
        pred = run("predict", "-k", "3", "-f", "tsv", "the little girl was very").stdout.split("\t")
        self.assertEqual(nxt[0::2], [w for w in pred[0::2]])
        self.assertEqual(nxt[1::2], pred[1::2])

    def test_json_record(self):
        r = run("complete", "-f", "json", "-k", "2", "-m", self.fruit, "banana apple P")
        record = json.loads(r.stdout)
        self.assertEqual(list(record), ["text", "context", "prefix", "suggestions"])
        self.assertEqual(record["text"], "banana apple P")
        self.assertEqual(record["context"], "banana apple ")
        self.assertEqual(record["prefix"], "P")
        self.assertEqual([s["word"] for s in record["suggestions"]], ["Pie", "Phone"])
        self.assertEqual([s["source"] for s in record["suggestions"]], ["model", "model"])
        e3, e1 = 2.718281828459045 ** 3, 2.718281828459045
        self.assertAlmostEqual(record["suggestions"][0]["probability"], e3 / (e3 + e1 + 4), 6)

    def test_case_follows_the_writer(self):
        self.assertEqual(words(run("complete", "Li").stdout.strip())[0], "Lily")
        after_said = words(run("complete", "she said li").stdout.strip())
        self.assertIn("lily", after_said)
        self.assertTrue(all(w.islower() for w in after_said), after_said)
        start = words(run("complete", "").stdout.strip())
        self.assertIn("Once", start)  # nothing typed: sentence starters, capitalized
        self.assertTrue(all(w[0].isupper() for w in start))
        after = words(run("complete", "he smiled. ").stdout.strip())
        self.assertTrue(all(w[0].isupper() for w in after), after)
        self.assertIn("I", words(run("complete", "then i").stdout.strip()))
        quoted = words(run("complete", 'she said, "').stdout.strip())
        self.assertTrue(quoted and all(w[0].isupper() for w in quoted), quoted)

    def test_apostrophes_follow_the_writer(self):
        # The model's word is "let's"; a writer of typographic quotes gets ’.
        curly = words(run("complete", "\u201cwe are late. let").stdout.strip())
        straight = words(run("complete", "\"we are late. let").stdout.strip())
        self.assertEqual(curly[0], "Let\u2019s")
        self.assertEqual(straight[0], "Let's")
        self.assertEqual([w.replace("\u2019", "'") for w in curly], straight)
        self.assertEqual(words(run("complete", "we are late. don\u2019").stdout.strip()),
                         ["Don\u2019t"])

    def test_stdin_is_one_session_and_keeps_trailing_whitespace(self):
        lines = ["once upon a", "once upon a ", "once upon a ti", "", "banana apple pie zzzz"]
        r = run("complete", "-f", "json", stdin="".join(l + "\n" for l in lines))
        self.assertEqual(r.returncode, 0, r.stderr)
        records = [json.loads(l) for l in r.stdout.splitlines()]
        self.assertEqual([x["text"] for x in records], lines)
        self.assertEqual(records[0]["prefix"], "a")
        self.assertEqual(records[1]["prefix"], "")
        self.assertEqual(records[1]["suggestions"][0]["word"], "time")
        self.assertEqual(records[4]["suggestions"], [])  # nothing fits: no error
        # CRLF ends a line like LF; a tab at the end is whitespace kept.
        r = run("complete", "-f", "json", stdin="once upon a\r\nonce upon a\t\n")
        prefixes = [json.loads(l)["prefix"] for l in r.stdout.splitlines()]
        self.assertEqual(prefixes, ["a", ""])

    def test_stream_answers_each_line_before_the_next_arrives(self):
        with subprocess.Popen([NEXTWORD, "complete", "-f", "tsv"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, bufsize=1) as p:
            for text in ["once upon a ", "once upon a time, there was a l", "lily"]:
                p.stdin.write(text + "\n")
                p.stdin.flush()
                self.assertTrue(p.stdout.readline().endswith("\n"))
            p.stdin.close()
            p.wait(timeout=30)
        self.assertEqual(p.returncode, 0)

    def test_batches_give_the_records_of_single_lines(self):
        words = STORY.split()
        lines = "".join(" ".join(words[:i]) + (" " if i % 3 else "") + "\n"
                        for i in range(len(words)))
        runs = {b: run("complete", "-f", "tsv", "--batch", b, stdin=lines).stdout.splitlines()
                for b in ("1", "7", "64")}
        self.assertEqual(len(runs["1"]), len(words))
        for b in ("7", "64"):
            for one, batched in zip(runs["1"], runs[b]):
                self.assertEqual(one.split("\t")[0::2], batched.split("\t")[0::2])
                for p, q in zip(one.split("\t")[1::2], batched.split("\t")[1::2]):
                    self.assertAlmostEqual(float(p), float(q), delta=2e-6)

    def test_lexicon_completes_the_list(self):
        # The default model ships lexicon.tsv: "puppy's" is outside the vocabulary.
        r = run("complete", "-f", "json", "her little puppy'")
        suggestions = json.loads(r.stdout)["suggestions"]
        self.assertIn({"word": "puppy's", "source": "lexicon"},
                      [{"word": s["word"], "source": s["source"]} for s in suggestions])
        lex = os.path.join(self.tmp, "lexicon.tsv")
        with open(lex, "w") as f:
            f.write("pear\t3\npeach\t1\n")
        r = run("complete", "-m", self.fruit, "--lexicon", lex, "banana apple pe")
        self.assertEqual(r.stdout, "pear  peach\n")
        # Without one, a model still works.
        self.assertEqual(run("complete", "-m", self.fruit, "banana apple pe").stdout, "\n")

    def test_lexicon_index(self):
        """lexicon.bin and vocab.bin (nextword lexicon, made at build time for
        the shipped models): the same suggestions as the lexicon.tsv and
        vocab.json they index, read in their place only while they match
        those files."""
        model = os.path.join(self.tmp, "english")
        os.mkdir(model)
        for name in ("vocab.json", "weights.safetensors", "memory.bin", "lexicon.tsv"):
            shutil.copy2(os.path.join(DATA, "english", name), model)
        typed = "".join(phrase[:cut] + "\n" for phrase in (
            "the end of the Second World", "in the village of Zwolle", "a kind of quasiparticle",
            "He was born in Lyonnais", "the Treaty of Westphalia", "an Inuk", "xq")
            for cut in range(1, len(phrase) + 1))
        args = ("complete", "-m", model, "-f", "json", "--learn")
        from_tsv = run(*args, stdin=typed)
        self.assertEqual(from_tsv.returncode, 0, from_tsv.stderr)
        r = run("lexicon", "-m", model, "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        summary = json.loads(r.stdout)
        self.assertEqual(list(summary), ["file", "bytes", "lexicon_words", "offered_words",
                                         "oov_count", "vocab_index"])
        self.assertEqual(summary["vocab_index"], os.path.join(model, "vocab.bin"))
        self.assertEqual(summary["file"], os.path.join(model, "lexicon.bin"))
        self.assertEqual(summary["lexicon_words"], 854454)
        self.assertEqual(summary["bytes"], os.path.getsize(os.path.join(model, "lexicon.bin")))
        from_bin = run(*args, stdin=typed)
        self.assertEqual(from_bin.stdout, from_tsv.stdout)
        lexicon_words = [s["word"] for line in from_bin.stdout.splitlines()
                         for s in json.loads(line)["suggestions"] if s["source"] == "lexicon"]
        self.assertIn("Zwolle-IJssel", lexicon_words)
        # The shipped model's indexes are the ones `nextword lexicon` writes.
        for name in ("lexicon.bin", "vocab.bin"):
            with open(os.path.join(model, name), "rb") as f, \
                    open(os.path.join(DATA, "english", name), "rb") as g:
                self.assertEqual(f.read(), g.read(), name)
        # A broken vocab.bin: one line naming it and the field; vocab.json
        # newer than it: vocab.json read, the same words.
        with open(os.path.join(model, "vocab.bin"), "r+b") as f:
            f.write(b"NOTANIDX")
        r = run("predict", "-m", model, "the end of the Second")
        self.assertEqual((r.returncode, r.stdout), (MODEL, ""))
        self.assertEqual(r.stderr, "nextword: %s: magic: not a vocabulary index "
                         "(expected \"NWVOCIDX\")\n" % os.path.join(model, "vocab.bin"))
        os.utime(os.path.join(model, "vocab.json"),
                 ns=(os.stat(os.path.join(model, "vocab.bin")).st_mtime_ns + 10**9,) * 2)
        self.assertEqual(run(*args, stdin=typed).stdout, from_tsv.stdout)
        # The .tsv changed afterwards: read, not the index made from the old one.
        with open(os.path.join(model, "lexicon.tsv"), "a", encoding="utf-8") as f:
            f.write("Zwollezwolle\t1\n")
        r = run("complete", "-m", model, "in Zwollez")
        self.assertEqual(r.stdout, "Zwollezwolle\n")
        # A broken index: one line naming it and the field.
        with open(os.path.join(model, "lexicon.bin"), "r+b") as f:
            f.write(b"NOTANIDX")
        os.utime(os.path.join(model, "lexicon.bin"), None)
        r = run("complete", "-m", model, "in Zwo")
        self.assertEqual((r.returncode, r.stdout), (MODEL, ""))
        self.assertEqual(r.stderr, "nextword: %s: magic: not a lexicon index "
                         "(expected \"NWLEXIDX\")\n" % os.path.join(model, "lexicon.bin"))
        r = run("lexicon", "-m", self.fruit)
        self.assertEqual((r.returncode, r.stdout), (MODEL, ""))
        self.assertIn("lexicon.tsv: cannot open", r.stderr)

    def test_no_repeat(self):
        stdin = "banana apple \nbanana apple p\n"
        plain = run("complete", "-m", self.fruit, "-k", "1", stdin=stdin).stdout
        self.assertEqual(plain, "pie\npie\n")
        once = run("complete", "-m", self.fruit, "-k", "1", "--no-repeat", stdin=stdin).stdout
        self.assertEqual(once, "pie\nphone\n")

    def test_learn_and_history(self):
        history = os.path.join(self.tmp, "history.txt")
        with open(history, "w") as f:
            f.write("We met Zorblax at noon.\nzorblax waved.\n")
        self.assertEqual(run("complete", "we met zorb").stdout, "\n")  # no such word
        r = run("complete", "-f", "json", "--history", history, "we met zorb")
        s = json.loads(r.stdout)["suggestions"]
        self.assertEqual((s[0]["word"], s[0]["source"]), ("Zorblax", "history"))
        # --learn alone learns what the session types.
        r = run("complete", "--learn", stdin="I saw Quorbix today. \nthen qu\n")
        self.assertIn("Quorbix", r.stdout.splitlines()[1].split("  "))
        r = run("complete", stdin="I saw Quorbix today. \nthen qu\n")
        self.assertNotIn("Quorbix", r.stdout)

    def test_bad_files(self):
        lex = os.path.join(self.tmp, "lexicon.tsv")
        with open(lex, "w") as f:
            f.write("pear\t3\npeach 1\n")
        r = run("complete", "-m", self.fruit, "--lexicon", lex, "x")
        self.assertEqual((r.returncode, r.stdout), (MODEL, ""))
        self.assertEqual(r.stderr, "nextword: %s:2: expected WORD<TAB>COUNT\n" % lex)
        history = os.path.join(self.tmp, "history.txt")
        with open(history, "wb") as f:
            f.write(b"fine\nstill fine\nbad \xff byte\n")
        r = run("complete", "--history", history, "x")
        self.assertEqual((r.returncode, r.stdout), (INPUT, ""))
        self.assertEqual(r.stderr, "nextword: %s:3: not valid UTF-8\n" % history)
        r = run("complete", "--lexicon", os.path.join(self.tmp, "none.tsv"), "x")
        self.assertEqual(r.returncode, MODEL)
        self.assertIn("none.tsv: cannot open", r.stderr)
        self.assertEqual(run("complete", "-k", "0", "x").returncode, USAGE)
        # The caches' shares leave the model none.
        r = run("complete", "--learn", "--learn-weight", "0.6", "--learn-context-weight", "0.5", "x")
        self.assertEqual((r.returncode, r.stdout), (USAGE, ""))
        self.assertEqual(r.stderr, "nextword: --learn-weight and --learn-context-weight: their sum "
                         "1.100000 is over 1, the model's share would be negative\n")

    def test_hostile_lines_behave_as_in_predict(self):
        lines = [b"caf\xff ti", b"\x01bad \x02", b"once upon a " * 8000, b"x" * 70000]
        r = subprocess.run([NEXTWORD, "complete", "-f", "json"], input=b"\n".join(lines) + b"\n",
                           capture_output=True, check=False)
        self.assertEqual(r.returncode, 0)
        records = [json.loads(l) for l in r.stdout.decode().splitlines()]
        self.assertEqual(len(records), 4)
        self.assertEqual(records[2]["suggestions"][0]["word"], "time")
        self.assertEqual(records[3]["suggestions"], [])
        r = subprocess.run([NEXTWORD, "complete"], input=b"x" * 70000 + b"\n",
                           capture_output=True, check=False)
        self.assertIn(b"<stdin>:1: note: line longer than 64 KiB", r.stderr)


class KeystrokeSavings(unittest.TestCase):
    """eval --ksr against the protocol implemented again in Python, driving
    the `complete` stream: the same ki, ks and kn, to the keystroke."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.text = os.path.join(self.tmp, "story.txt")
        with open(self.text, "w") as f:
            f.write(STORY + "\n\n" + STORY.replace("lily", "Zorblax") + "\n\n" + CURLY + "\n")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def python_count(self, *flags):
        engine = ksr_protocol.LineEngine([NEXTWORD, "complete", "-f", "tsv", *flags],
                                         ksr_protocol.parse_tsv_pairs)
        try:
            return ksr_protocol.simulate(read(self.text), engine, k=6)
        finally:
            engine.close()

    def test_eval_ksr_equals_the_python_protocol(self):
        for flags in ([], ["--no-repeat"], ["--learn", "--no-repeat"]):
            with self.subTest(flags=flags):
                r = run("eval", "--ksr", "-f", "json", self.text, *flags)
                self.assertEqual(r.returncode, 0, r.stderr)
                mine = json.loads(r.stdout)
                theirs = self.python_count(*flags)
                for key in ("ki", "ks", "kn", "words", "selected", "queries"):
                    self.assertEqual(mine[key], theirs[key], key)
                self.assertAlmostEqual(mine["ksr"], theirs["ksr"], 12)
                self.assertGreater(mine["ksr"], 0.5)
                self.assertLessEqual(mine["forward_passes"], mine["words"])

    def test_learning_helps_on_repeated_rare_words(self):
        plain = json.loads(run("eval", "--ksr", "-f", "json", self.text).stdout)
        learn = json.loads(run("eval", "--ksr", "-f", "json", "--learn", self.text).stdout)
        self.assertGreater(learn["ksr"], plain["ksr"])

    def test_text_report(self):
        r = run("eval", "--ksr", self.text, "-k", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"KSR +0\.\d{4} \(k 3\)")
        self.assertIn("per keystroke", r.stdout)


if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
