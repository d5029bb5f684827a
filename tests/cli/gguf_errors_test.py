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
          arch="llama", alignment=32, name="", d=D, ff=FF, matrices=w.F32_TYPE, raw=None):
    """A 1-layer llama GGUF file, its matrices in `matrices`; keys/dims/types
    override by name, and raw gives a tensor's bytes."""
    g = w.Gguf(alignment=alignment)
    if alignment != 32:
        g.add("general.alignment", w.U32, alignment)
    g.add("general.name", w.STRING, name)
    g.add("general.architecture", w.STRING, arch)
    values = {"llama.context_length": 16, "llama.embedding_length": d, "llama.block_count": 1,
              "llama.feed_forward_length": ff, "llama.attention.head_count": HEADS,
              "llama.attention.head_count_kv": KV}
    values.update(keys or {})
    for key, value in values.items():
        if key != drop_key:
            g.add(key, w.U32, value)
    g.add("tokenizer.ggml.model", w.STRING, "llama")
    g.add_array("tokenizer.ggml.tokens", w.STRING, tokens)
    g.add_array("tokenizer.ggml.scores", w.F32, [0.0] * len(tokens))
    V, head = len(TOKENS), d // HEADS
    shapes = {"token_embd.weight": [d, V], "blk.0.attn_norm.weight": [d],
              "blk.0.attn_q.weight": [d, d], "blk.0.attn_k.weight": [d, KV * head],
              "blk.0.attn_v.weight": [d, KV * head], "blk.0.attn_output.weight": [d, d],
              "blk.0.ffn_norm.weight": [d], "blk.0.ffn_gate.weight": [d, ff],
              "blk.0.ffn_up.weight": [d, ff], "blk.0.ffn_down.weight": [ff, d],
              "output_norm.weight": [d]}
    shapes.update(dims or {})
    names = {ggml_type: name for name, (ggml_type, _, _) in w.TYPES.items()}
    for name, shape in shapes.items():
        if name == drop_tensor:
            continue
        n = 1
        for x in shape:
            n *= x
        ggml_type = (types or {}).get(name, matrices if len(shape) == 2 else w.F32_TYPE)
        if name in (raw or {}):
            data = raw[name]
        elif ggml_type in names and shape[0] % w.BLOCK_VALUES[names[ggml_type]] == 0:
            data = w.TYPES[names[ggml_type]][1]([0.01] * n)
        else:  # bytes of a type not written here, or rows the reader refuses
            data = bytes(n * 8)
        g.tensor(name, shape, ggml_type, data)
    data = g.bytes()
    return data if alignment == 32 else (data, g.data_start)


def infinite_scale(name, n, block, at):
    """n values of blocks of `name` whose block `block` has an infinite F16
    at byte `at` (a scale or a minimum)."""
    data = bytearray(w.TYPES[name][1]([0.01] * n))
    size = len(data) // (n // w.BLOCK_VALUES[name])
    data[block * size + at:block * size + at + 2] = b"\x00\x7c"
    return bytes(data)


def misaligned(alignment=2, matrices=w.F32_TYPE, d=D):
    """A file of general.alignment 2 (or 1) whose tensors' data starts 2 (1)
    bytes past a multiple of 4 (its name's length chosen so): every float (or
    Q8_0 block's scale) at an odd place."""
    for n in range(4):
        data, start = llama(alignment=alignment, name="x" * n, matrices=matrices, d=d, ff=d)
        if start % 4 == alignment:
            return data
    raise AssertionError("no name length puts the data %d bytes past a multiple of 4" % alignment)


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

    def test_the_good_files_run(self):
        # Every matrix in each type read, and a key as long as llama-quantize's
        # general.quantization_version, which info's text lines up.
        for name, (matrices, _, _) in w.TYPES.items():
            with self.subTest(matrices=name):
                path = os.path.join(self.tmp.name, "good.gguf")
                d = 256 if name.endswith("_K") else 32  # rows of whole blocks
                with open(path, "wb") as f:
                    f.write(llama(matrices=matrices, d=d, ff=2 * d,
                                  keys={"general.quantization_version": 2}))
                r = run("predict", "--model", path, "-k", "2", "a")
                self.assertEqual(r.returncode, 0, r.stderr)
                r = run("info", "--model", path)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("\ngeneral.quantization_version  2\n", r.stdout)
                self.assertIn("F32 3 tensors" if name != "F32" else "F32 11 tensors", r.stdout)
                if name != "F32":
                    self.assertIn(" %s 8 tensors (" % name, r.stdout)

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
            (llama(types={"token_embd.weight": 28}),
             "tensors.token_embd.weight: type F64 is not read here (F32, F16, BF16, Q8_0, Q4_0, "
             "Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K tensors)"),
            (llama(d=256, ff=512, types={"blk.0.ffn_up.weight": 10}),
             "tensors.blk.0.ffn_up.weight: type Q2_K is not read here (F32, F16, BF16, Q8_0, "
             "Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K tensors)"),
            (llama(d=32, ff=64, types={"blk.0.attn_q.weight": w.TYPES["Q4_K"][0]}),
             "tensors.blk.0.attn_q.weight: rows of 32 elements are not whole Q4_K blocks of 256"),
            (llama(d=32, ff=64, matrices=w.TYPES["Q4_1"][0],
                   raw={"blk.0.ffn_gate.weight": infinite_scale("Q4_1", 32 * 64, 5, 2)}),
             "tensors.blk.0.ffn_gate.weight: block 5 (of 64) has a scale that is not finite"),
            (llama(d=256, ff=512, matrices=w.TYPES["Q6_K"][0],
                   raw={"blk.0.ffn_down.weight": infinite_scale("Q6_K", 512 * 256, 0, 208)}),
             "tensors.blk.0.ffn_down.weight: block 0 (of 512) has a scale that is not finite"),
            (llama(types={"blk.0.ffn_down.weight": w.Q8_0_TYPE}),
             "tensors.blk.0.ffn_down.weight: rows of 16 elements are not whole Q8_0 blocks of "
             "32"),
            (misaligned(),
             "tensors.token_embd.weight: its data is not aligned to 4 bytes "
             "(general.alignment 2)"),
            (misaligned(alignment=1, matrices=w.Q8_0_TYPE, d=32),
             "tensors.token_embd.weight: its data is not aligned to 2 bytes "
             "(general.alignment 1)"),
            (llama(arch="mamba"),
             'metadata.general.architecture: "mamba" is not read (nextword reads llama, qwen2, '
             'gpt2)'),
        ]
        for data, message in cases:
            with self.subTest(message=message):
                self.refused(data, message)


if __name__ == "__main__":
    cli_common.main(sys.modules[__name__])
