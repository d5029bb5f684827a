#!/usr/bin/env python3
"""A model nobody here trained: llama2.c's stories260K, both of
its file versions, converted with its tokenizer, then run as a person runs
nextword. The golden test: greedy `generate` from "Once upon a time" writes
exactly what llama2.c's run.c writes (`run stories260K.bin -z tok512.bin
-t 0.0 -n 256 -i "Once upon a time"`: 256 forward passes, from <s> on,
print the prompt's 4 pieces, then one new piece each: 252).

    python3 tests/cli/llama2c_test.py build/nextword data ../shared/models
"""
import http.client
import json
import os
import re
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
                r = subprocess.run([cli_common.NEXTWORD, "generate", "--greedy", "--model",
                                    model, "-n", str(GENERATED), "Once upon a time"],
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

    def test_bench_times_the_word_search_both_ways(self):
        r = run("bench", "--model", self.models[1], "-b", "1", "-l", "4", "--seconds", "0.05",
                "--no-json-loader", "-f", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        search = json.loads(r.stdout)["word_search"]
        self.assertGreater(search["pieces"], 8)  # "Once upon a time, there was a little"
        self.assertGreater(search["side_by_side_ms"], 0)
        self.assertGreater(search["one_at_a_time_ms"], 0)
        self.assertAlmostEqual(search["speedup"],
                               search["one_at_a_time_ms"] / search["side_by_side_ms"])
        text = run("bench", "--model", self.models[1], "-b", "1", "-l", "4", "--seconds", "0.05",
                   "--no-json-loader").stdout
        self.assertIn("ms one at a time", text)

    def test_complete_offers_whole_words_that_fit_what_is_typed(self):
        model = self.models[1]
        r = run("complete", "--model", model, "-f", "json", "-k", "4",
                stdin="Once upon a ti\nLily and Ben went to the p\nOnce upon a time, there was a \n")
        self.assertEqual(r.returncode, 0, r.stderr)
        records = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual(records[0]["suggestions"][0]["word"], "time")
        self.assertGreater(records[0]["suggestions"][0]["probability"], 0.9)
        for record in records:
            words = [s["word"] for s in record["suggestions"]]
            self.assertEqual(len(words), 4, record)
            for word in words:
                self.assertTrue(word.lower().startswith(record["prefix"]), record)
                self.assertRegex(word, r"^\w")  # a word, not a piece or a mark
            probabilities = [s["probability"] for s in record["suggestions"]]
            self.assertEqual(probabilities, sorted(probabilities, reverse=True))
        self.assertEqual(records[1]["suggestions"][0]["word"], "park")
        self.assertEqual(records[2]["suggestions"][0]["word"], "little")
        # The writer's capital.
        r = run("complete", "--model", model, "-k", "1", "Once upon a Ti")
        self.assertEqual(r.stdout.split(), ["Time"])
        r = run("complete", "--model", model, "--learn", "Once upon")
        self.assertEqual(r.returncode, USAGE, r.stderr)
        self.assertIn("learn: needs a model of whole words", r.stderr)

    def test_score_speaks_in_words_whose_pieces_sum(self):
        model = self.models[0]
        line = "Once upon a time there was a little girl"
        text = run("score", "--model", model, "-q", line).stdout
        self.assertTrue(text.startswith("Once=403 -0.2437\tupon=407 "), text)
        self.assertIn("\tgirl=298+315+421 ", text)
        record = json.loads(run("score", "--model", model, "-q", "-f", "json", line).stdout)
        self.assertEqual([w["word"] for w in record["words"]], line.split())
        self.assertAlmostEqual(sum(w["logprob"] for w in record["words"]), record["logprob"])
        self.assertEqual([w["rank"] for w in record["words"]][:4], [1, 1, 1, 1])
        r = run("score", "--model", model, "-f", "tsv", line)
        self.assertEqual(r.stdout.split("\t")[3].strip(), "9")
        self.assertIn("9 words", r.stderr)

    def test_inspection_labels_pieces(self):
        model = self.models[0]
        lens = run("lens", "--model", model, "Lily went to the").stdout.splitlines()
        self.assertEqual(lens[0], 'after piece "\u2581the" (position 5): the lens at each step')
        self.assertTrue(lens[1].endswith("top pieces"), lens[1])
        attribute = run("attribute", "--model", model, "Lily went to the").stdout
        self.assertTrue(attribute.startswith(
            'logit of piece "\u2581p" (id 282) after pieces "\\n<s>\\n \u2581Lily \u2581w ent '
            '\u2581to \u2581the": '), attribute)
        attention = run("attention", "--model", model, "-f", "text", "Lily went").stdout
        self.assertIn("(rows: the piece attending; columns: the piece attended to)", attention)
        for command in ("lens", "trace", "attribute", "attention"):
            record = json.loads(run(command, "--model", model, "-f", "json", "Lily").stdout)
            self.assertEqual(record["token_unit"], "piece", command)
            self.assertEqual(record["tokens"], ["\n<s>\n", " Lily"], command)

    def test_serve_and_lsp_speak_in_words(self):
        model = self.models[1]
        server = subprocess.Popen([cli_common.NEXTWORD, "serve", "--port", "0", "--model", model],
                                  stderr=subprocess.PIPE, text=True)
        try:
            port = int(re.search(r"127\.0\.0\.1:(\d+) ", server.stderr.readline()).group(1))
            answers = {}
            for path, body in (("/v1/predict", {"phrase": "Lily and Ben went to the"}),
                               ("/v1/complete", {"text": "Lily and Ben went to the p"}),
                               ("/v1/score", {"text": "a little girl"})):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                connection.request("POST", path, body=json.dumps(body))
                response = connection.getresponse()
                self.assertEqual(response.status, 200, path)
                answers[path] = json.loads(response.read())
                connection.close()
        finally:
            server.terminate()
            server.wait(timeout=60)
            server.stderr.close()
        self.assertEqual(answers["/v1/predict"]["predictions"][0]["word"], "park")
        self.assertEqual(answers["/v1/complete"]["suggestions"][0]["word"], "park")
        self.assertEqual([w["word"] for w in answers["/v1/score"]["words"]],
                         ["a", "little", "girl"])

        def frame(message):
            data = json.dumps(message).encode()
            return b"Content-Length: %d\r\n\r\n" % len(data) + data

        uri = "file:///story.md"
        text = "Lily and Ben went to the p"
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": None, "rootUri": None, "capabilities": {}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "markdown", "version": 1, "text": text}}},
            {"jsonrpc": "2.0", "id": 2, "method": "textDocument/completion", "params": {
                "textDocument": {"uri": uri}, "position": {"line": 0, "character": len(text)}}},
            {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"}]
        r = subprocess.run([cli_common.NEXTWORD, "lsp", "--model", model],
                           input=b"".join(frame(m) for m in messages), capture_output=True,
                           timeout=120, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        replies = [json.loads(body) for body in
                   re.split(rb"Content-Length: \d+\r\n\r\n", r.stdout) if body]
        completion = next(m for m in replies if m.get("id") == 2)["result"]
        labels = [item["label"] for item in completion["items"]]
        self.assertEqual(labels[0], "park", labels)
        self.assertTrue(all(label.startswith("p") for label in labels), labels)

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
