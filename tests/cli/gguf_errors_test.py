#!/usr/bin/env python3
"""GGUF models that cannot be run, each one line on stderr naming the file
and the key or tensor at fault, exit 3, nothing on stdout: files written by
the tests' own GGUF writer (tests/reference/gguf_writer.py), a small llama
model with one thing wrong in each.

    python3 tests/cli/gguf_errors_test.py build/nextword data
"""
import os
import sys
import tempfile
import unittest

import cli_common
from cli_common import MODEL, run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import gguf_writer as w  # noqa: E402

D, FF, HEADS, KV = 8, 16, 2, 1
TOKENS = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + ["\u2581", "\u2581a"]


def llama(drop_key=None, keys=None, drop_tensor=None, dims=None, types=None, tokens=TOKENS,
          arch="llama", alignment=32, name=""):
    """A 1-layer llama GGUF file; keys/dims/types override by name."""
    g = w.Gguf(alignment=alignment)
    if alignment != 32:
        g.add("general.alignment", w.U32, alignment)
    g.add("general.name", w.STRING, name)
    g.add("general.architecture", w.STRING, arch)
    values = {"llama.context_length": 16, "llama.embedding_length": D, "llama.block_count": 1,
              "llama.feed_forward_length": FF, "llama.attention.head_count": HEADS,
              "llama.attention.head_count_kv": KV}
    values.update(keys or {})
    for key, value in values.items():
        if key != drop_key:
            g.add(key, w.U32, value)
    g.add("tokenizer.ggml.model", w.STRING, "llama")
    g.add_array("tokenizer.ggml.tokens", w.STRING, tokens)
    g.add_array("tokenizer.ggml.scores", w.F32, [0.0] * len(tokens))
    V, head = len(TOKENS), D // HEADS
    shapes = {"token_embd.weight": [D, V], "blk.0.attn_norm.weight": [D],
              "blk.0.attn_q.weight": [D, D], "blk.0.attn_k.weight": [D, KV * head],
              "blk.0.attn_v.weight": [D, KV * head], "blk.0.attn_output.weight": [D, D],
              "blk.0.ffn_norm.weight": [D], "blk.0.ffn_gate.weight": [D, FF],
              "blk.0.ffn_up.weight": [D, FF], "blk.0.ffn_down.weight": [FF, D],
              "output_norm.weight": [D]}
    shapes.update(dims or {})
    for name, shape in shapes.items():
        if name == drop_tensor:
            continue
        n = 1
        for x in shape:
            n *= x
        ggml_type = (types or {}).get(name, w.F32_TYPE)
        data = w.halves_bytes([0.01] * n) if ggml_type == w.F16_TYPE else (
            w.floats_bytes([0.01] * n) if ggml_type == w.F32_TYPE else bytes(n // 32 * 34))
        g.tensor(name, shape, ggml_type, data)
    data = g.bytes()
    return data if alignment == 32 else (data, g.data_start)


def misaligned():
    """A file of general.alignment 2 whose tensors' data starts 2 bytes past a
    multiple of 4 (its name's length chosen so): every float at an odd place."""
    for n in range(4):
        data, start = llama(alignment=2, name="x" * n)
        if start % 4 == 2:
            return data
    raise AssertionError("no name length puts the data 2 bytes past a multiple of 4")


class GgufErrors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="nextword-gguf-errors-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def refused(self, data, message):
        path = os.path.join(self.tmp.name, "m.gguf")
        with open(path, "wb") as f:
            f.write(data)
        r = run("predict", "--model", path, "a")
        self.assertEqual(r.returncode, MODEL, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, "nextword: %s: %s\n" % (path, message))

    def test_the_good_file_runs(self):
        path = os.path.join(self.tmp.name, "good.gguf")
        with open(path, "wb") as f:
            f.write(llama())
        r = run("predict", "--model", path, "-k", "2", "a")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_each_fault_is_named(self):
        cases = [
            (llama(drop_key="llama.block_count"), "metadata.llama.block_count: missing"),
            (llama(keys={"llama.attention.head_count_kv": 3}),
             "metadata.llama.attention.head_count_kv: must divide n_heads = 2, got 3"),
            (llama(keys={"llama.embedding_length": 0}),
             "metadata.llama.embedding_length: must be between 1 and 1048576, got 0"),
            (llama(drop_tensor="blk.0.ffn_up.weight"),
             "tensors.blk.0.ffn_up.weight: missing (the hyperparameters need shape [8,16])"),
            (llama(dims={"blk.0.attn_q.weight": [D, D // 2]}),
             "tensors.blk.0.attn_q.weight: shape [8,4], the hyperparameters give [8,8]"),
            (llama(dims={"token_embd.weight": [D, len(TOKENS) - 1]}),
             "tensors.token_embd.weight: shape [8,260], the hyperparameters give [8,261]"),
            (llama(dims={"blk.0.attn_q.weight": [32, D], "token_embd.weight": [D, 261]},
                   types={"blk.0.attn_q.weight": w.Q8_0_TYPE}),
             "tensors.blk.0.attn_q.weight: shape [32,8], the hyperparameters give [8,8]"),
            (llama(types={"token_embd.weight": w.F16_TYPE}),
             "tensors.token_embd.weight: type F16 is not read here (F32 tensors, and F16 "
             "projections)"),
            (misaligned(),
             "tensors.token_embd.weight: its data is not aligned to 4 bytes "
             "(general.alignment 2)"),
            (llama(arch="mamba"),
             'metadata.general.architecture: "mamba" is not read (nextword reads llama, qwen2, '
             'gpt2)'),
        ]
        for data, message in cases:
            with self.subTest(message=message):
                self.refused(data, message)


if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
