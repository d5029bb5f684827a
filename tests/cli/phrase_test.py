#!/usr/bin/env python3
"""End-to-end tests of the commands that read phrases: predict (records,
the default model, streams through real pipes), attention and its pictures,
and generate.

    python3 tests/cli/phrase_test.py build/nextword data
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import cli_common
from cli_common import USAGE, INPUT, read, run

NEXTWORD = DATA = None  # set by cli_common.main


class Predict(unittest.TestCase):
    def setUp(self):
        self.fruit = os.path.join(DATA, "examples", "fruit")

    def test_text_record(self):
        r = run("predict", "--model", self.fruit, "banana", "apple")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertEqual(r.stdout, "pie 0.7494  store 0.1014  apple 0.0373  banana 0.0373  "
                                   "phone 0.0373\n")

    def test_json_record(self):
        r = run("predict", "-m", self.fruit, "-f", "json", "-k", "2", "Phone apple")
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        self.assertEqual(list(record), ["phrase", "tokens", "ids", "unknown", "truncated",
                                        "predictions"])
        self.assertEqual(record["tokens"], ["phone", "apple"])
        self.assertEqual(record["ids"], [3, 1])
        self.assertEqual([p["word"] for p in record["predictions"]], ["store", "pie"])
        self.assertAlmostEqual(record["predictions"][0]["probability"], 0.7493536, places=6)
        self.assertEqual(record["predictions"][0]["logit"], 3.0)

    def test_tsv_record(self):
        r = run("predict", "-m", self.fruit, "-f", "tsv", "-k", "2", "banana apple")
        self.assertEqual(r.stdout, "pie\t0.749354\tstore\t0.101414\n")

    def test_unknown_words_and_truncation(self):
        phrase = "kiwi " + "banana " * 8 + "apple"
        r = run("predict", "-m", self.fruit, "-f", "json", phrase)
        record = json.loads(r.stdout)
        self.assertTrue(record["truncated"])
        self.assertEqual(len(record["tokens"]), 8)  # max_len
        self.assertEqual(record["unknown"], [])  # kiwi was cut off
        r = run("predict", "-m", self.fruit, "kiwi apple")
        self.assertEqual(r.returncode, 0)
        self.assertIn("not in the vocabulary: kiwi", r.stderr)
        self.assertEqual(run("predict", "-q", "-m", self.fruit, "kiwi apple").stderr, "")
        record = json.loads(run("predict", "-m", self.fruit, "-f", "json", "kiwi apple").stdout)
        self.assertEqual(record["unknown"], ["kiwi"])
        self.assertEqual(record["ids"], [0, 1])

    def test_special_tokens_never_predicted(self):
        r = run("predict", "-m", self.fruit, "-f", "json", "-k", "100", "apple")
        words = [p["word"] for p in json.loads(r.stdout)["predictions"]]
        self.assertEqual(sorted(words), ["apple", "banana", "phone", "pie", "store"])
        total = sum(p["probability"] for p in json.loads(r.stdout)["predictions"])
        self.assertLess(total, 1.0)  # <unk> keeps its share of the distribution

    def test_default_model_from_environment(self):
        r = run("predict", "banana apple", env={"NEXTWORD_MODEL": self.fruit})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("pie "))


class DefaultModel(unittest.TestCase):
    """The bundled model answers with no --model, from the build tree and installed."""

    def test_once_upon_a_time(self):
        r = run("predict", "-k", "1", "once upon a")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[0], "time")

    def test_installed_binary_finds_the_default_model(self):
        build = os.path.dirname(os.path.abspath(NEXTWORD))
        if not os.path.exists(os.path.join(build, "cmake_install.cmake")) or not shutil.which("cmake"):
            self.skipTest("no CMake build tree to install from")
        with tempfile.TemporaryDirectory() as prefix:
            subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                           stdout=subprocess.DEVNULL, check=True)
            env = {k: v for k, v in os.environ.items() if k != "NEXTWORD_MODEL"}
            r = subprocess.run([os.path.join(prefix, "bin", "nextword"), "predict",
                                "the president of the united"],
                               cwd=prefix, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, check=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split()[0], "States")  # data/english
            r = subprocess.run([os.path.join(prefix, "bin", "nextword"), "predict", "-m",
                                "stories", "once upon a"], cwd=prefix, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               check=False)
            self.assertEqual(r.stdout.split()[0], "time")


class Streams(unittest.TestCase):
    def setUp(self):
        self.fruit = os.path.join(DATA, "examples", "fruit")

    def test_thousand_lines_thousand_records_in_order(self):
        phrases = ["banana apple" if i % 3 else "phone apple" for i in range(1000)]
        r = run("predict", "-m", self.fruit, "-f", "json", stdin="\n".join(phrases) + "\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        records = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual(len(records), 1000)
        for phrase, record in zip(phrases, records):
            self.assertEqual(record["phrase"], phrase)
            self.assertEqual(record["predictions"][0]["word"],
                             "pie" if phrase.startswith("banana") else "store")

    def test_bad_line_gets_an_error_record_and_the_rest_flows(self):
        stdin = "banana apple\nzzz\n\nphone apple\r\n"
        r = run("predict", "-m", self.fruit, "-f", "json", stdin=stdin)
        self.assertEqual(r.returncode, INPUT)
        records = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual(len(records), 4)
        self.assertEqual(records[1]["error"], "no word of the phrase is in the vocabulary: zzz")
        self.assertEqual(records[1]["exit_code"], INPUT)
        self.assertEqual(records[2]["error"], "the phrase has no words")
        self.assertEqual(records[3]["phrase"], "phone apple")
        self.assertEqual(r.stderr.splitlines(), [
            "nextword: <stdin>:2: no word of the phrase is in the vocabulary: zzz",
            "nextword: <stdin>:3: the phrase has no words"])
        # Text and TSV keep one line per input line: an empty line for an error.
        r = run("predict", "-m", self.fruit, "-f", "tsv", "-k", "1", stdin=stdin)
        self.assertEqual(r.stdout, "pie\t0.749354\n\n\nstore\t0.749354\n")

    def test_interactive_answers_each_line_at_once(self):
        p = subprocess.Popen([NEXTWORD, "predict", "-m", self.fruit, "-k", "1"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            for phrase, word in (("banana apple", "pie"), ("phone apple", "store")):
                p.stdin.write(phrase + "\n")
                p.stdin.flush()
                self.assertTrue(p.stdout.readline().startswith(word))  # before stdin closes
        finally:
            p.stdin.close()
            p.wait(timeout=10)
            p.stdout.close()
        self.assertEqual(p.returncode, 0)

    def test_closed_pipe_ends_it_quietly(self):
        # `nextword predict < big | head -1`: one record, then a quiet end
        # (SIGPIPE, as for any Unix filter), nothing on stderr.
        with tempfile.TemporaryDirectory() as tmp:
            big = os.path.join(tmp, "big.txt")
            with open(big, "w", encoding="utf-8") as f:
                f.write("banana apple\n" * 200000)
            r = subprocess.run("'%s' predict -m '%s' < '%s' | head -1" % (NEXTWORD, self.fruit, big),
                               shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, check=False, timeout=60)
            self.assertEqual(r.stdout, "pie 0.7494  store 0.1014  apple 0.0373  banana 0.0373  "
                                       "phone 0.0373\n")
            self.assertEqual(r.stderr, "")
            with open(big, "rb") as stdin:
                p = subprocess.Popen([NEXTWORD, "predict", "-m", self.fruit], stdin=stdin,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                first = p.stdout.readline()
                p.stdout.close()
                _, err = p.communicate(timeout=60)
            self.assertTrue(first.startswith(b"pie"))
            self.assertEqual(err, b"")
            self.assertIn(p.returncode, (0, -13))  # done, or ended by SIGPIPE

    def test_batches_change_no_record(self):
        # Phrases of many lengths, errors among them, through the default model
        # one at a time and in batches: the same records, in the same order.
        words = "once upon a time there was a little girl named lily who loved the park".split()
        phrases = [" ".join(words[i % 7:i % 7 + 1 + i % 11]) for i in range(300)]
        phrases[17] = "zzzz qqqq"
        phrases[150] = ""
        stdin = "\n".join(phrases) + "\n"
        runs = {b: run("predict", "-f", "json", "-k", "3", "--batch", b, stdin=stdin)
                for b in ("1", "7", "64")}
        one = [json.loads(l) for l in runs["1"].stdout.splitlines()]
        self.assertEqual(len(one), 300)
        for b in ("7", "64"):
            self.assertEqual(runs[b].returncode, INPUT)
            self.assertEqual(runs[b].stderr, runs["1"].stderr)
            records = [json.loads(l) for l in runs[b].stdout.splitlines()]
            self.assertEqual(len(records), 300)
            for x, y in zip(one, records):
                self.assertEqual(x["phrase"], y["phrase"])
                self.assertEqual(x.get("error"), y.get("error"))
                for p, q in zip(x.get("predictions", []), y.get("predictions", [])):
                    self.assertEqual(p["word"], q["word"])
                    self.assertAlmostEqual(p["probability"], q["probability"], places=5)

    def test_attention_from_stdin(self):
        r = run("attention", "-m", self.fruit, stdin="banana apple\nphone apple\n")
        self.assertEqual([json.loads(l)["tokens"][0] for l in r.stdout.splitlines()],
                         ["banana", "phone"])


class Attention(unittest.TestCase):
    def test_attention_json(self):
        fruit = os.path.join(DATA, "examples", "fruit")
        r = run("attention", "-m", fruit, "banana apple")
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        self.assertEqual(record["tokens"], ["banana", "apple"])
        self.assertEqual(record["attention"], [[[[1.0, 0.0], [0.5, 0.5]]]])
        self.assertEqual(record["predictions"][0]["word"], "pie")

    def test_attention_nesting_is_layer_head_query_key(self):
        model = os.path.join(os.path.dirname(__file__), "..", "fixtures", "parity")
        name = next(d for d in sorted(os.listdir(model)) if d.startswith("31-"))  # 3 layers, 3 heads
        r = run("attention", "-m", os.path.join(model, name), "the cat sat on the mat")
        record = json.loads(r.stdout)
        T = len(record["tokens"])
        self.assertEqual(len(record["attention"]), 3)
        for layer in record["attention"]:
            self.assertEqual(len(layer), 3)
            for head in layer:
                self.assertEqual(len(head), T)
                for q, row in enumerate(head):
                    self.assertEqual(len(row), T)
                    self.assertAlmostEqual(sum(row), 1.0, places=5)
                    self.assertTrue(all(x == 0.0 for x in row[q + 1:]))  # causal


class Pictures(unittest.TestCase):
    """attention as a terminal heatmap, SVG, HTML and bertviz JSON; predict --explain."""

    def test_text_heatmap(self):
        r = run("attention", "-m", os.path.join(DATA, "examples", "fruit"), "-f", "text",
                "banana apple")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("layer 1 of 1, mean of 1 heads", lines[0])
        self.assertEqual(lines[1].split(), ["banana", "apple"])
        # banana attends to itself (100%); apple half and half (the article's example).
        self.assertTrue(lines[2].startswith("banana ") and lines[2].endswith("\u2588" * 6))
        self.assertEqual(lines[3].split()[1:], ["\u2593" * 6, "\u2593" * 6])
        self.assertNotIn("\x1b[", r.stdout)  # a pipe gets no colors
        self.assertTrue(lines[-1].startswith("next: pie 0.7494"))
        colored = run("attention", "-m", os.path.join(DATA, "examples", "fruit"), "-f", "text",
                      "--color", "always", "banana apple").stdout
        self.assertIn("\x1b[48;", colored)
        self.assertNotIn("\x1b[", run("attention", "-f", "text", "--color", "always", "once upon",
                                      env={"NO_COLOR": "1"}).stdout.split("\n")[0])
        head = run("attention", "-f", "text", "--layer", "2", "--head", "3", "once upon a").stdout
        self.assertIn("layer 2 of 4, head 3 of 6", head)  # the default model: 4 layers of 6 heads
        for bad, count in ((["--layer", "5"], 4), (["--head", "0"], 6), (["--head", "7"], 6),
                           (["--layer", "x"], 4)):
            r = run("attention", "-f", "text", *bad, "once")
            self.assertEqual(r.returncode, USAGE, bad)
            self.assertIn(f"{bad[1]} is not \"mean\" or a number from 1 to {count}", r.stderr)

    def test_svg_is_well_formed_with_a_cell_per_pair(self):
        import xml.etree.ElementTree as ET
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "a.svg")
            r = run("attention", "-f", "svg", "-o", path, "--layer", "mean", "once upon a time")
            self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)
            root = ET.parse(path).getroot()
        svg = "{http://www.w3.org/2000/svg}"
        self.assertEqual(root.tag, svg + "svg")
        cells = [e for e in root.iter(svg + "rect") if "cell" in e.get("class", "")]
        self.assertEqual(len(cells), 25)  # <bos> and four words: 5 x 5
        self.assertEqual(sum("masked" in e.get("class") for e in cells), 10)
        self.assertIn("mean of all 4 layers", root.find(svg + "title").text)
        text = ET.tostring(root, encoding="unicode")
        for outside in ("href", "<script", "@font-face", "http://www.w3.org/1999/xlink"):
            self.assertNotIn(outside, text)
        r = run("attention", "-f", "svg", stdin="once\n")
        self.assertEqual(r.returncode, USAGE)
        self.assertIn("draws one phrase", r.stderr)

    def test_bertviz_shape(self):
        r = run("attention", "-f", "bertviz", "once upon a")
        record = json.loads(r.stdout)
        self.assertEqual(record["tokens"], ["<bos>", "once", "upon", "a"])
        attention = record["attention"]  # [layer][batch][head][query][key]
        self.assertEqual((len(attention), len(attention[0]), len(attention[0][0]),
                          len(attention[0][0][0]), len(attention[0][0][0][0])), (4, 1, 6, 4, 4))
        for row in attention[2][0][1]:
            self.assertAlmostEqual(sum(row), 1.0, places=5)

    def test_html_is_self_contained(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "a.html")
            self.assertEqual(run("attention", "-f", "html", "-o", path, "once </script> a").returncode, 0)
            page = read(path)
        self.assertTrue(page.startswith("<!DOCTYPE html>"))
        self.assertEqual(page.count("</script>"), 3)  # data, drawing code, start: the phrase cannot close the data early
        for outside in ("http://", "https://", "<link", " src="):
            self.assertNotIn(outside, page)

    def test_explain(self):
        r = run("predict", "--explain", "lily and her mom went to the")
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], run("predict", "lily and her mom went to the").stdout.rstrip("\n"))
        self.assertEqual(len(lines), 5)  # one line per layer
        self.assertRegex(lines[1], r'^  layer 1: "the" looked most at .+ \(\d+%\)')
        record = json.loads(run("predict", "--explain", "-f", "json", "once upon a").stdout)
        self.assertEqual(len(record["explain"]), 4)
        self.assertEqual(run("predict", "--explain", "-f", "tsv", "x").returncode, USAGE)


class Generate(unittest.TestCase):
    def test_continues_the_phrase(self):
        r = run("generate", "Once upon a", "-n", "12")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("Once upon a time, there was"), r.stdout)
        record = json.loads(run("generate", "Once upon a", "-n", "12", "-f", "json").stdout)
        self.assertEqual(len(record["words"]), 12)
        self.assertEqual(record["text"] + "\n", r.stdout)

    def test_same_seed_same_text(self):
        sample = ["generate", "the little girl", "-n", "30", "--temperature", "0.9",
                  "--top-k", "50", "--top-p", "0.95"]
        a = run(*sample, "--seed", "11").stdout
        self.assertEqual(a, run(*sample, "--seed", "11").stdout)
        self.assertNotEqual(a, run(*sample, "--seed", "12").stdout)
        self.assertEqual(run("generate", "x", "--temperature", "-1").returncode, USAGE)
        self.assertEqual(run("generate", "zzzz qqqq").returncode, INPUT)


if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
