#!/usr/bin/env python3
"""End-to-end tests of the inspection commands: score (its three formats,
stdin streams through real pipes, the perplexity filters, --document against
eval), lens, trace and attribute (their JSON shapes against the spec, the
values of the hand-written fruit model, and their errors).

    python3 tests/cli/inspect_test.py build/nextword data
"""
import fnmatch
import json
import math
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import cli_common
from cli_common import USAGE, INPUT, IO, run

NEXTWORD = DATA = None  # set by cli_common.main

# A story of nine documents (blank lines between them), 200 words and more:
# the default model's contexts (max_len 64) slide over it.
STORY = """Once upon a time, there was a little girl named Lily. She loved to play outside in the park
with her friends. One day, she saw a big red ball under a tree.

Lily ran to the ball and picked it up. "Can I play with it?" she asked her mom. Her mom smiled
and said yes. Lily was very happy.

They played with the ball all day. The sun was warm and the grass was green. A little dog came
to play too. The dog liked the ball very much.

When it was time to go home, Lily gave the ball to the dog. The dog wagged its tail.
Lily and her mom walked home together.

The next day, Lily went back to the park. The dog was there again, and it had the ball in its mouth.
They played all afternoon until the sky turned orange and it was time to eat dinner.

Tom had a blue car. He liked to drive it on the floor of his room. His sister wanted to play too,
but Tom did not want to share. Mom told him that sharing is kind.

Tom gave the car to his sister. She smiled and said thank you. Then they played together and
built a big road out of blocks. They were best friends.

At night, Tom looked at the stars from his window. He made a wish to go to the moon one day.
His dad said that if he works hard, he can do anything.



The end. zorblax quux.
"""


def fruit():
    return os.path.join(DATA, "examples", "fruit")


def previous_default():
    """The default model before the modern options (learned positions, layernorm, GELU,
    d_model 128, 4 layers of 4 heads), whose trace and attribute layout the
    tests below write out by hand."""
    return os.path.join(DATA, "..", "tests", "fixtures", "previous-default")


def run_bytes(*args, stdin=b""):
    """Like cli_common.run, but stdin and stdout are bytes."""
    env = dict(os.environ)
    env["NEXTWORD_MODEL"] = "stories"  # as cli_common.run
    return subprocess.run([NEXTWORD, *args], input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, check=False)


def records(stdout):
    return [json.loads(line) for line in stdout.splitlines()]


def default_vocab():
    with open(os.path.join(DATA, "stories", "vocab.json"), encoding="utf-8") as f:
        return json.load(f)


class Score(unittest.TestCase):
    def test_json_record_by_hand(self):
        # fruit (no bos): banana is context only; apple after banana has the
        # logits pie 4, the rest 0; pie after banana apple has pie 3, store 1.
        r = run("score", "-m", fruit(), "-f", "json", "banana", "apple", "pie")
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        self.assertEqual(list(record), ["text", "tokens", "ids", "words", "logprob", "perplexity",
                                        "oov"])
        self.assertEqual(record["text"], "banana apple pie")
        self.assertEqual(record["tokens"], ["banana", "apple", "pie"])
        self.assertEqual(record["ids"], [2, 1, 4])
        apple, pie = record["words"]
        self.assertEqual(list(apple), ["word", "id", "logprob", "rank", "unknown"])
        self.assertEqual((apple["word"], apple["id"], apple["rank"], apple["unknown"]),
                         ("apple", 1, 2, False))
        self.assertAlmostEqual(apple["logprob"], -math.log(math.exp(4) + 5), places=6)
        self.assertEqual((pie["word"], pie["id"], pie["rank"], pie["unknown"]), ("pie", 4, 1, False))
        self.assertAlmostEqual(pie["logprob"], 3 - math.log(math.exp(3) + math.e + 4), places=6)
        self.assertAlmostEqual(record["logprob"], apple["logprob"] + pie["logprob"], places=12)
        self.assertAlmostEqual(record["perplexity"], math.exp(-record["logprob"] / 2), places=9)
        self.assertEqual(record["oov"], 0)

    def test_text_and_tsv_agree_with_json(self):
        line = "banana kiwi apple pie"
        record = json.loads(run("score", "-m", fruit(), "-f", "json", line).stdout)
        text = run("score", "-m", fruit(), line)
        self.assertEqual(text.returncode, 0, text.stderr)
        # KenLM-like: word=id logprob, tab-separated, then the total and the OOV count.
        fields = text.stdout.rstrip("\n").split("\t")
        self.assertEqual(len(fields), len(record["words"]) + 1)
        for field, w in zip(fields, record["words"]):
            self.assertEqual(field, "%s=%d %.4f" % (w["word"], w["id"], w["logprob"]))
        self.assertEqual(fields[-1], "Total: %.4f OOV: %d" % (record["logprob"], record["oov"]))
        self.assertEqual(record["oov"], 1)
        self.assertEqual(fields[0], "kiwi=0 %.4f" % record["words"][0]["logprob"])
        tsv = run("score", "-m", fruit(), "-f", "tsv", line).stdout.rstrip("\n").split("\t")
        self.assertEqual(len(tsv), 4)  # logprob, perplexity, oov, words
        self.assertAlmostEqual(float(tsv[0]), record["logprob"], places=5)
        self.assertAlmostEqual(float(tsv[1]), record["perplexity"], places=5)
        self.assertEqual((int(tsv[2]), int(tsv[3])), (1, 3))

    def test_default_model_ranks_are_predicts(self):
        # With a bos every word is scored; rank 1 is predict's first word and
        # its logprob the log of predict's probability.
        p = json.loads(run("predict", "-f", "json", "-k", "3", "the cat sat on the").stdout)
        top = p["predictions"]
        for rank, prediction in enumerate(top, 1):
            line = "the cat sat on the " + prediction["word"]
            record = json.loads(run("score", "-f", "json", line).stdout)
            self.assertEqual(record["tokens"][0], "<bos>")
            self.assertEqual(record["ids"][0], 1)
            self.assertEqual(len(record["words"]), 6)  # every word, the first too
            last = record["words"][-1]
            self.assertEqual((last["word"], last["id"], last["rank"]),
                             (prediction["word"], prediction["id"], rank))
            self.assertAlmostEqual(last["logprob"], math.log(prediction["probability"]), places=5)

    def test_unknown_words(self):
        r = run("score", "-f", "json", "the zorblax sat on the quux")
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        unknown = [w for w in record["words"] if w["unknown"]]
        self.assertEqual([w["word"] for w in unknown], ["zorblax", "quux"])
        self.assertEqual([w["id"] for w in unknown], [0, 0])
        self.assertTrue(all(w["rank"] >= 1 for w in unknown))
        self.assertEqual(record["oov"], 2)
        self.assertIn("6 words (2 unknown)", r.stderr)
        # Text spelt like the special tokens is split into unknown words, never bos.
        record = json.loads(run("score", "-f", "json", "the <bos> dog").stdout)
        self.assertEqual(record["ids"].count(1), 1)
        self.assertEqual(record["words"][-1]["word"], "dog")

    def test_stdin_records_in_order_any_batch(self):
        vocab = default_vocab()
        lines = []
        for i in range(300):
            n = (i * 37) % 23
            words = [vocab[2 + (i * 131 + j * 71) % (len(vocab) - 2)] for j in range(n)]
            if i % 11 == 3:
                words.insert(n // 2, "zorblax")
            lines.append(" ".join(words))
        lines[5] = ""
        lines[6] = "   "
        lines[40] = " ".join(vocab[2 + j % 400] for j in range(150))  # past max_len 64
        lines[41] = " ".join(vocab[2 + j % 97] for j in range(90))
        stdin = "\n".join(lines) + "\n"
        results = {}
        for batch in ("1", "64", "256"):
            r = run("score", "-f", "json", "--batch", batch, "-q", stdin=stdin)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, "")
            results[batch] = records(r.stdout)
            self.assertEqual([x["text"] for x in results[batch]], lines)
        for a, b, c in zip(results["1"], results["64"], results["256"]):
            for other in (b, c):
                self.assertEqual(a["ids"], other["ids"])
                # A word deep in the ranking may swap with a near-tie (logits
                # equal to float32 rounding); the first hundred do not.
                for x, y in zip(a["words"], other["words"]):
                    if x["rank"] <= 100 or y["rank"] <= 100:
                        self.assertEqual(x["rank"], y["rank"])
                    else:
                        self.assertLessEqual(abs(x["rank"] - y["rank"]), 2)
                # float32 logits: the same to about 1e-6 of the value
                for x, y in zip(a["words"], other["words"]):
                    self.assertAlmostEqual(x["logprob"], y["logprob"],
                                           delta=1e-6 * max(1, abs(x["logprob"])))
                self.assertAlmostEqual(a["logprob"], other["logprob"],
                                       delta=1e-6 * max(1, abs(a["logprob"])))
        # A line on stdin scores as the same line given as the argument.
        for i in (0, 1, 40, 41, 47):
            alone = json.loads(run("score", "-f", "json", lines[i]).stdout)
            self.assertEqual(alone["ids"], results["64"][i]["ids"])
            self.assertAlmostEqual(alone["logprob"], results["64"][i]["logprob"],
                                   delta=1e-6 * max(1, abs(alone["logprob"])))
        long = results["64"][40]
        self.assertEqual(len(long["tokens"]), 151)  # no truncation
        self.assertEqual(len(long["words"]), 150)

    def test_stdin_through_a_pipe_answers_each_line(self):
        # Records come as lines come: nothing waits for a batch to fill.
        p = subprocess.Popen([NEXTWORD, "score", "-m", fruit(), "-f", "json", "--batch", "64"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        try:
            for line in (b"banana apple", b"", b"phone apple store"):
                p.stdin.write(line + b"\n")
                p.stdin.flush()
                ready, _, _ = select.select([p.stdout], [], [], 20)
                self.assertTrue(ready, "no record for %r while stdin stays open" % line)
                record = json.loads(p.stdout.readline())
                self.assertEqual(record["text"], line.decode())
            p.stdin.close()
            self.assertEqual(p.stdout.read(), b"")
            self.assertEqual(p.wait(timeout=20), 0)
            self.assertIn(b"scored 3 lines, 3 words", p.stderr.read())
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stdout.close()
            p.stderr.close()

    def test_empty_and_invalid_lines_still_one_record_each(self):
        stdin = b"banana apple\n\n\xff\xfe apple pie\nkiwi\n\xc3\nphone apple\n"
        r = run_bytes("score", "-m", fruit(), "-f", "json", stdin=stdin)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = records(r.stdout.decode("utf-8"))
        self.assertEqual(len(out), 6)
        empty = out[1]
        self.assertEqual((empty["text"], empty["words"], empty["logprob"], empty["perplexity"],
                          empty["oov"]), ("", [], 0, None, 0))
        bad = out[2]  # the invalid bytes are an unknown first token, context only in fruit
        self.assertEqual(bad["ids"], [0, 1, 4])
        self.assertEqual([w["word"] for w in bad["words"]], ["apple", "pie"])
        self.assertIsNone(out[3]["perplexity"])  # one word, no context: nothing scored
        self.assertEqual(out[4]["ids"], [0])
        self.assertEqual(out[5]["text"], "phone apple")
        # With a bos model the invalid word is scored, as unknown.
        r = run_bytes("score", "-f", "json", "-q", stdin=b"the \xff\xfe dog\n\n")
        bad, empty = records(r.stdout.decode("utf-8"))
        self.assertEqual([w["unknown"] for w in bad["words"]], [False, True, False])
        self.assertEqual(bad["oov"], 1)
        self.assertEqual((empty["tokens"], empty["words"], empty["perplexity"]), (["<bos>"], [], None))
        tsv = run_bytes("score", "-m", fruit(), "-f", "tsv", "-q", stdin=stdin).stdout.decode()
        rows = tsv.splitlines()
        self.assertEqual(len(rows), 6)
        self.assertEqual(rows[1].split("\t")[1:], ["nan", "0", "0"])
        text = run_bytes("score", "-m", fruit(), "-q", stdin=stdin).stdout.decode().splitlines()
        self.assertEqual(len(text), 6)
        self.assertEqual(text[1], "Total: 0.0000 OOV: 0")

    def test_summary_on_stderr_only(self):
        stdin = "banana apple pie\nphone kiwi store\n\n"
        for fmt in ("text", "tsv", "json"):
            r = run("score", "-m", fruit(), "-f", fmt, stdin=stdin)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(r.stdout.splitlines()), 3)
            self.assertNotIn("scored", r.stdout)
            err = r.stderr.splitlines()
            self.assertEqual(len(err), 1, r.stderr)
            self.assertRegex(err[0], r"^nextword: scored 3 lines, 4 words \(1 unknown\): "
                                     r"perplexity [0-9.]+, without unknown words [0-9.]+$")
            q = run("score", "-m", fruit(), "-f", fmt, "-q", stdin=stdin)
            self.assertEqual((q.stdout, q.stderr), (r.stdout, ""))
        # The summary's perplexity is over every word of every line.
        out = records(run("score", "-m", fruit(), "-f", "json", "-q", stdin=stdin).stdout)
        words = [w for x in out for w in x["words"]]
        total = math.exp(-sum(w["logprob"] for w in words) / len(words))
        r = run("score", "-m", fruit(), "-f", "json", stdin=stdin)
        self.assertIn("perplexity %.4f," % total, r.stderr)

    def test_perplexity_filters_print_lines_unchanged(self):
        lines = [b"banana apple pie", b"", b"phone apple store  ", b"\xff\xfe apple",
                 b"kiwi", b"banana\tapple store", b"apple apple apple apple", b"pie banana",
                 b"phone phone phone apple pie"]
        stdin = b"\n".join(lines) + b"\n"
        r = run_bytes("score", "-m", fruit(), "-f", "json", "-q", stdin=stdin)
        perplexities = [x["perplexity"] for x in records(r.stdout.decode("utf-8"))]
        known = sorted(p for p in perplexities if p is not None)
        self.assertGreater(len(set(known)), 3)
        low, high = known[1], known[-2]
        for flags, keep in ((["--min-perplexity", str(low)], lambda p: p >= low),
                            (["--max-perplexity", str(high)], lambda p: p <= high),
                            (["--min-perplexity", str(low), "--max-perplexity", str(high)],
                             lambda p: low <= p <= high),
                            (["--min-perplexity", "0"], lambda p: True)):
            r = run_bytes("score", "-m", fruit(), *flags, stdin=stdin)
            self.assertEqual(r.returncode, 0, r.stderr)
            expected = b"".join(line + b"\n" for line, p in zip(lines, perplexities)
                                if p is not None and keep(p))
            self.assertEqual(r.stdout, expected, flags)
            self.assertIn(b"scored 9 lines", r.stderr)
        r = run_bytes("score", "-m", fruit(), "--max-perplexity", "1", "-q", stdin=stdin)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))

    def test_document_equals_eval(self):
        tmp = tempfile.mkdtemp()
        try:
            path = os.path.join(tmp, "story.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(STORY)
            for model in ([], ["-m", fruit()]):
                e = run("eval", path, *model, "-f", "json")
                self.assertEqual(e.returncode, 0, e.stderr)
                expected = json.loads(e.stdout)
                r = run("score", "--document", path, *model, "-f", "json")
                self.assertEqual(r.returncode, 0, r.stderr)
                record = json.loads(r.stdout)
                self.assertEqual(list(record)[0], "document")
                self.assertEqual(record["document"], path)
                self.assertNotIn("text", record)
                self.assertEqual(len(record["words"]), expected["tokens"])
                self.assertAlmostEqual(record["perplexity"] / expected["perplexity"], 1, delta=1e-9)
                self.assertAlmostEqual(record["oov"] / len(record["words"]),
                                       expected["unknown_rate"], delta=1e-12)
                text = run("eval", path, *model).stdout
                shown = [l.split()[-1] for l in text.splitlines() if l.startswith("perplexity")]
                self.assertEqual(shown, ["%.2f" % record["perplexity"]])
            # bos tokens are in the stream (one per document) but not scored.
            bos = json.loads(run("score", "--document", path, "-f", "json").stdout)
            self.assertEqual(bos["tokens"].count("<bos>"), 9)
            self.assertNotIn("<bos>", [w["word"] for w in bos["words"]])
            self.assertEqual(len(bos["tokens"]), len(bos["words"]) + 9)
            self.assertGreater(len(bos["tokens"]), 64)
        finally:
            shutil.rmtree(tmp)


class Lens(unittest.TestCase):
    def test_json_shape_and_last_step_is_predict(self):
        phrase = "the cat sat on the"
        r = run("lens", "-f", "json", phrase)
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        self.assertEqual(list(record), ["phrase", "tokens", "ids", "unknown", "truncated", "layers"])
        self.assertEqual(record["tokens"], ["<bos>", "the", "cat", "sat", "on", "the"])
        self.assertEqual([(x["position"], x["layer"]) for x in record["layers"]],
                         [(5, "embed"), (5, 1), (5, 2), (5, 3), (5, 4)])
        for step in record["layers"]:
            self.assertEqual(list(step), ["position", "layer", "top", "final_word_rank",
                                          "final_word_probability"])
            self.assertEqual(len(step["top"]), 5)
            self.assertEqual(list(step["top"][0]), ["word", "probability"])
            self.assertNotIn(step["top"][0]["word"], ("<unk>", "<bos>"))
        p = json.loads(run("predict", "-f", "json", phrase).stdout)["predictions"]
        last = record["layers"][-1]
        self.assertEqual(last["top"], [{"word": x["word"], "probability": x["probability"]}
                                       for x in p])
        self.assertEqual((last["final_word_rank"], last["final_word_probability"]),
                         (1, p[0]["probability"]))
        k = json.loads(run("lens", "-f", "json", "-k", "9", phrase).stdout)["layers"][-1]["top"]
        p9 = json.loads(run("predict", "-f", "json", "-k", "9", phrase).stdout)["predictions"]
        self.assertEqual([(x["word"], x["probability"]) for x in k],
                         [(x["word"], x["probability"]) for x in p9])

    def test_mid_and_all_positions(self):
        r = run("lens", "-f", "json", "--mid", "--all-positions", "-k", "3", "the dog ran")
        self.assertEqual(r.returncode, 0, r.stderr)
        layers = json.loads(r.stdout)["layers"]
        steps = ["embed", "1.mid", 1, "2.mid", 2, "3.mid", 3, "4.mid", 4]
        self.assertEqual([(x["position"], x["layer"]) for x in layers],
                         [(p, s) for p in range(4) for s in steps])
        finals = {}
        for x in layers:
            self.assertEqual(len(x["top"]), 3)
            self.assertGreaterEqual(x["final_word_rank"], 1)
            if x["layer"] == 4:
                finals[x["position"]] = x
        for x in layers:  # the final word at a step where it is in the top
            best = finals[x["position"]]["top"][0]["word"]
            for rank, t in enumerate(x["top"], 1):
                if t["word"] == best:
                    self.assertEqual(x["final_word_rank"], rank)
                    self.assertEqual(x["final_word_probability"], t["probability"])
        # Each position's last step is what predict says of that prefix.
        words = ["the", "dog", "ran"]
        for position in (1, 2, 3):
            p = json.loads(run("predict", "-f", "json", "-k", "3",
                               " ".join(words[:position])).stdout)["predictions"]
            top = finals[position]["top"]
            self.assertEqual([t["word"] for t in top], [x["word"] for x in p])
            for t, x in zip(top, p):
                self.assertAlmostEqual(t["probability"], x["probability"], delta=1e-6)

    def test_fruit_by_hand_and_text(self):
        record = json.loads(run("lens", "-m", fruit(), "-f", "json", "--mid", "banana apple").stdout)
        embed, mid, layer = record["layers"]
        self.assertEqual([embed["layer"], mid["layer"], layer["layer"]], ["embed", "1.mid", 1])
        tie = math.exp(2) / (2 * math.exp(2) + 4)  # apple [1,1]: pie and store both 2
        self.assertEqual([t["word"] for t in embed["top"]][:2], ["pie", "store"])
        self.assertAlmostEqual(embed["top"][0]["probability"], tie, places=6)
        self.assertEqual(mid["top"], layer["top"])
        p = math.exp(3) / (math.exp(3) + math.e + 4)
        self.assertAlmostEqual(layer["top"][0]["probability"], p, places=6)
        text = run("lens", "-m", fruit(), "banana apple")
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertEqual(text.stderr, "")
        out = text.stdout
        self.assertIn("embed", out)
        self.assertIn("pie 0.7494", out)
        self.assertIn("0.3935", out)
        self.assertTrue(out.endswith("\n") and not out.endswith("\n\n"))

    def test_truncation_and_unknown(self):
        phrase = "kiwi " + "banana " * 9 + "apple"
        record = json.loads(run("lens", "-m", fruit(), "-f", "json", phrase).stdout)
        self.assertTrue(record["truncated"])
        self.assertEqual(len(record["tokens"]), 8)  # max_len
        self.assertEqual(record["layers"][-1]["position"], 7)
        r = run("lens", "-m", fruit(), "kiwi apple")
        self.assertEqual(r.returncode, 0)
        self.assertIn("not in the vocabulary: kiwi", r.stderr)
        self.assertEqual(run("lens", "-q", "-m", fruit(), "kiwi apple").stderr, "")


# The spec's table, per layer, for a model with every part.
LAYER_HOOKS = ["hook_resid_pre", "ln1.hook_normalized", "attn.hook_q", "attn.hook_k",
               "attn.hook_v", "attn.hook_attn_scores", "attn.hook_pattern", "attn.hook_z",
               "hook_attn_out", "hook_resid_mid", "ln2.hook_normalized", "mlp.hook_pre",
               "mlp.hook_post", "hook_mlp_out", "hook_resid_post"]


class Trace(unittest.TestCase):
    def test_default_model_names_and_shapes(self):
        r = run("trace", "-m", previous_default(), "the cat sat")
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        self.assertEqual(list(record), ["phrase", "tokens", "ids", "unknown", "truncated",
                                        "activations"])
        a = record["activations"]
        names = ["hook_embed", "hook_pos_embed"]
        names += ["blocks.%d.%s" % (l, h) for l in range(4) for h in LAYER_HOOKS]
        names += ["ln_final.hook_normalized", "logits"]
        self.assertEqual(list(a), names)
        T, d, h, dk, ff, V = 4, 128, 4, 32, 512, 4096
        shapes = {"hook_resid_pre": [T, d], "ln1.hook_normalized": [T, d],
                  "attn.hook_q": [T, h, dk], "attn.hook_k": [T, h, dk], "attn.hook_v": [T, h, dk],
                  "attn.hook_attn_scores": [h, T, T], "attn.hook_pattern": [h, T, T],
                  "attn.hook_z": [T, h, dk], "hook_attn_out": [T, d], "hook_resid_mid": [T, d],
                  "ln2.hook_normalized": [T, d], "mlp.hook_pre": [T, ff], "mlp.hook_post": [T, ff],
                  "hook_mlp_out": [T, d], "hook_resid_post": [T, d]}
        expected = {"hook_embed": [T, d], "hook_pos_embed": [T, d],
                    "ln_final.hook_normalized": [T, d], "logits": [V]}
        for l in range(4):
            expected.update({"blocks.%d.%s" % (l, k): v for k, v in shapes.items()})
        for name, value in a.items():
            self.assertEqual(list(value), ["shape", "data"])
            self.assertEqual(value["shape"], expected[name], name)
            self.assertEqual(len(value["data"]), math.prod(value["shape"]), name)
        for l in range(4):
            b = "blocks.%d." % l
            scores, pattern = a[b + "attn.hook_attn_scores"]["data"], a[b + "attn.hook_pattern"]["data"]
            for i in range(h):
                for q in range(T):
                    row = [i * T * T + q * T + k for k in range(T)]
                    self.assertEqual([scores[j] is None for j in row], [k > q for k in range(T)])
                    self.assertEqual([pattern[j] for j in row[q + 1:]], [0.0] * (T - q - 1))
                    self.assertAlmostEqual(sum(pattern[j] for j in row), 1, delta=1e-6)
            nulls = [v for n, x in a.items() if "attn_scores" not in n for v in x["data"] if v is None]
            self.assertEqual(nulls, [])
            # The residual stream adds up.
            pre, mid, post = (a[b + n]["data"] for n in ("hook_resid_pre", "hook_resid_mid",
                                                        "hook_resid_post"))
            for i in range(T * d):
                self.assertAlmostEqual(mid[i], pre[i] + a[b + "hook_attn_out"]["data"][i], delta=1e-4)
                self.assertAlmostEqual(post[i], mid[i] + a[b + "hook_mlp_out"]["data"][i], delta=1e-4)
            if l < 3:
                self.assertEqual(post, a["blocks.%d.hook_resid_pre" % (l + 1)]["data"])
        embed = [x + y for x, y in zip(a["hook_embed"]["data"], a["hook_pos_embed"]["data"])]
        for x, y in zip(embed, a["blocks.0.hook_resid_pre"]["data"]):
            self.assertAlmostEqual(x, y, delta=1e-6)
        # The logits are predict's.
        p = json.loads(run("predict", "-m", previous_default(), "-f", "json",
                           "the cat sat").stdout)["predictions"]
        for x in p:
            self.assertEqual(a["logits"]["data"][x["id"]], x["logit"])

    def test_fruit_by_hand(self):
        record = json.loads(run("trace", "-m", fruit(), "banana apple").stdout)
        a = record["activations"]
        # No positions, no norm, no feed-forward block: their names are absent.
        self.assertEqual(list(a), ["hook_embed", "blocks.0.hook_resid_pre", "blocks.0.attn.hook_q",
                                   "blocks.0.attn.hook_k", "blocks.0.attn.hook_v",
                                   "blocks.0.attn.hook_attn_scores", "blocks.0.attn.hook_pattern",
                                   "blocks.0.attn.hook_z", "blocks.0.hook_attn_out",
                                   "blocks.0.hook_resid_mid", "blocks.0.hook_resid_post", "logits"])
        self.assertEqual(a["hook_embed"], {"shape": [2, 2], "data": [2, 0, 1, 1]})
        self.assertEqual(a["blocks.0.attn.hook_q"], {"shape": [2, 1, 2], "data": [2, 0, 1, 1]})
        self.assertEqual(a["blocks.0.attn.hook_attn_scores"],
                         {"shape": [1, 2, 2], "data": [4, None, 2, 2]})
        self.assertEqual(a["blocks.0.attn.hook_pattern"]["data"], [1, 0, 0.5, 0.5])
        self.assertEqual(a["blocks.0.attn.hook_z"]["data"], [2, 0, 1.5, 0.5])
        self.assertEqual(a["blocks.0.hook_resid_post"]["data"], [2, 0, 1.5, 0.5])
        self.assertEqual(a["logits"], {"shape": [6], "data": [0, 0, 0, 0, 3, 1]})

    def test_only_globs(self):
        r = run("trace", "--only", "blocks.*.attn.hook_pattern", "the cat")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(list(json.loads(r.stdout)["activations"]),
                         ["blocks.%d.attn.hook_pattern" % l for l in range(4)])
        # Several globs keep the union, in pass order.
        r = run("trace", "-m", previous_default(), "--only", "logits", "--only", "hook_*",
                "--only", "blocks.1.attn.hook_[qk]", "the cat")
        self.assertEqual(list(json.loads(r.stdout)["activations"]),
                         ["hook_embed", "hook_pos_embed", "blocks.1.attn.hook_q",
                          "blocks.1.attn.hook_k", "logits"])
        everything = list(json.loads(run("trace", "the cat").stdout)["activations"])
        glob = "*resid_[pm]*"
        r = run("trace", "--only", glob, "the cat")
        self.assertEqual(list(json.loads(r.stdout)["activations"]),
                         [n for n in everything if fnmatch.fnmatchcase(n, glob)])
        # No name matches: a usage error, nothing on stdout.
        for model, glob in (([], "blocks.9.*"), (["-m", fruit()], "hook_pos_embed"),
                            (["-m", fruit()], "*ln*")):
            r = run("trace", *model, "--only", glob, "apple")
            self.assertEqual(r.returncode, USAGE, (glob, r.stderr))
            self.assertEqual(r.stdout, "")
            self.assertEqual(len(r.stderr.splitlines()), 1)
            self.assertIn("--only", r.stderr)
            self.assertIn(glob, r.stderr)

    def test_text_shows_the_article_values(self):
        r = run("trace", "-m", fruit(), "-f", "text", "banana apple")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout
        for name in ("hook_embed", "blocks.0.attn.hook_attn_scores", "blocks.0.attn.hook_pattern",
                     "logits"):
            self.assertIn(name, out)
        scores = out[out.index("hook_attn_scores"):out.index("hook_pattern")]
        self.assertIn("4.0000", scores)
        self.assertIn("-inf", scores)
        self.assertEqual(scores.count("2.0000"), 2)
        pattern = out[out.index("hook_pattern"):out.index("hook_z")]
        self.assertEqual(pattern.count("0.5000"), 2)
        self.assertIn("1.0000", pattern)
        self.assertNotRegex(out, r"\bnan\b")
        self.assertTrue(out.endswith("\n") and not out.endswith("\n\n"))


class Attribute(unittest.TestCase):
    def test_default_model_parts_add_up(self):
        phrase = "the cat sat on the"
        m = ["-m", previous_default()]
        r = run("attribute", *m, "-f", "json", phrase)
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads(r.stdout)
        self.assertEqual(list(record), ["phrase", "tokens", "ids", "unknown", "truncated", "word",
                                        "id", "logit", "parts", "constant"])
        top = json.loads(run("predict", *m, "-f", "json", "-k", "2", phrase).stdout)["predictions"]
        self.assertEqual((record["word"], record["id"], record["logit"]),
                         (top[0]["word"], top[0]["id"], top[0]["logit"]))
        names = ["embed", "pos_embed"]
        for l in range(1, 5):  # the model has no attention biases
            names += ["%d.attn.%d" % (l, h) for h in range(1, 5)] + ["%d.mlp" % l]
        self.assertEqual([p["name"] for p in record["parts"]], names)
        total = sum(p["value"] for p in record["parts"]) + record["constant"]
        self.assertAlmostEqual(total / record["logit"], 1, delta=1e-4)
        second = json.loads(run("attribute", *m, "-f", "json", "--word", top[1]["word"],
                                phrase).stdout)
        self.assertEqual((second["word"], second["id"], second["logit"]),
                         (top[1]["word"], top[1]["id"], top[1]["logit"]))
        total = sum(p["value"] for p in second["parts"]) + second["constant"]
        self.assertAlmostEqual(total / second["logit"], 1, delta=1e-4)

    def test_fruit_by_hand_and_text(self):
        record = json.loads(run("attribute", "-m", fruit(), "-f", "json", "banana apple").stdout)
        self.assertEqual((record["word"], record["id"], record["logit"], record["constant"]),
                         ("pie", 4, 3, 0))
        self.assertEqual(record["parts"], [{"name": "1.attn.1", "value": 3}])
        store = json.loads(run("attribute", "-m", fruit(), "-f", "json", "--word", "store",
                               "banana apple").stdout)
        self.assertEqual((store["word"], store["logit"], store["parts"][0]["value"]), ("store", 1, 1))
        r = run("attribute", "-m", fruit(), "banana apple")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn('"pie"', r.stdout)
        self.assertIn("3.0000", r.stdout)
        self.assertIn("1.attn.1", r.stdout)
        self.assertTrue(r.stdout.endswith("\n") and not r.stdout.endswith("\n\n"))

    def test_word_not_in_the_vocabulary(self):
        for word in ("zorblax", "<bos>", "<unk>"):
            r = run("attribute", "--word", word, "the cat sat")
            self.assertEqual(r.returncode, USAGE, (word, r.stderr))
            self.assertEqual(r.stdout, "")
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn('"%s"' % word, r.stderr)


def shortest_float32(x):
    """The shortest decimal that reads back as x rounded to float32."""
    f = struct.unpack("<f", struct.pack("<f", x))[0]
    for digits in range(1, 10):
        text = "%.*g" % (digits, f)
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == f:
            return float(text)
    raise AssertionError(x)


class Numbers(unittest.TestCase):
    """The spec: every JSON float but score's is the shortest round-trip
    decimal of its float32 value (as predict's probability)."""

    def assert_float32(self, where, values):
        for i, x in enumerate(values):
            if x is not None:
                self.assertEqual(x, shortest_float32(x), "%s[%d]" % (where, i))

    def test_predict_lens_trace(self):
        phrase = "the cat sat on the"
        p = json.loads(run("predict", "-f", "json", phrase).stdout)["predictions"]
        self.assert_float32("predict", [x["probability"] for x in p] + [x["logit"] for x in p])
        for step in json.loads(run("lens", "-f", "json", "--mid", phrase).stdout)["layers"]:
            self.assert_float32("lens %s" % step["layer"],
                                [t["probability"] for t in step["top"]] +
                                [step["final_word_probability"]])
        a = json.loads(run("trace", phrase).stdout)["activations"]
        for name, value in a.items():
            self.assert_float32(name, value["data"])

    def test_attribute(self):
        record = json.loads(run("attribute", "-f", "json", "the cat sat on the").stdout)
        self.assert_float32("logit", [record["logit"]])
        self.assert_float32("constant", [record["constant"]])
        self.assert_float32("parts", [p["value"] for p in record["parts"]])


class Errors(unittest.TestCase):
    def test_a_phrase_of_unknown_words(self):
        for command in ("lens", "trace", "attribute"):
            # Like predict: a phrase given as an argument is an error, not a
            # record (a stdin line gets an error record: the next test).
            for form in ("json", "text"):
                r = run(command, "-m", fruit(), "-f", form, "kiwi mango")
                self.assertEqual((r.returncode, r.stdout), (INPUT, ""), command)
                self.assertEqual(
                    r.stderr.splitlines(),
                    ["nextword: no word of the phrase is in the vocabulary: kiwi mango"])

    def test_streams_keep_going_past_bad_lines(self):
        stdin = "banana apple\nkiwi\n\nphone apple\n"
        for command in ("lens", "trace", "attribute"):
            r = run(command, "-m", fruit(), "-f", "json", stdin=stdin)
            self.assertEqual(r.returncode, INPUT, command)
            out = records(r.stdout)
            self.assertEqual([x.get("exit_code") for x in out], [None, INPUT, INPUT, None])
            self.assertEqual([x["phrase"] for x in out], stdin.splitlines())
            err = r.stderr.splitlines()
            self.assertEqual(len(err), 2, r.stderr)
            self.assertTrue(err[0].startswith("nextword: <stdin>:2: "), err)
            self.assertTrue(err[1].startswith("nextword: <stdin>:3: "), err)
            ok = run(command, "-m", fruit(), "-f", "json", "phone apple").stdout
            self.assertEqual(r.stdout.splitlines()[3], ok.rstrip("\n"))

    def test_score_usage_errors(self):
        path = os.path.join(tempfile.gettempdir(), "nextword-absent-%d.txt" % os.getpid())
        for args, code, message in (
                (["-f", "json", "--min-perplexity", "2"], USAGE, "--min-perplexity"),
                (["--batch", "0"], USAGE, "--batch"),
                (["--document", path, "banana"], USAGE, "--document"),
                (["--document", path], IO, "cannot open")):
            r = run("score", "-m", fruit(), *args, stdin="")
            self.assertEqual(r.returncode, code, (args, r.stderr))
            self.assertEqual(r.stdout, "")
            self.assertIn(message, r.stderr)


if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
