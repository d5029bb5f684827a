#!/usr/bin/env python3
"""Writes fuzz_gguf's seed files with the tests' own GGUF writer
(tests/reference/gguf_writer.py): a tiny llama model in F32, the same with
F16 projections, a wider one with every matrix (the embedding too) in BF16,
one in Q8_0 and one in Q4_0 (its embedding Q5_1), a file of every value
type and of a tensor of each block type, a vocabulary alone, and a tiny
GPT-2 with a byte-level BPE.

    python3 tests/fuzz/make_gguf_seeds.py tests/fuzz/corpus/fuzz_gguf
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import gguf_writer as w  # noqa: E402
from gguf_architectures import BPE_MERGES, BPE_TOKENS  # noqa: E402

D, FF, HEADS, KV, LAYERS, CONTEXT = 8, 16, 2, 1, 1, 32
WORDS = ["\u2581", "\u2581the", "\u2581a", "e", "t", "\u2581Once", "\u2581upon"]


def vocabulary(g):
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + WORDS
    g.add("tokenizer.ggml.model", w.STRING, "llama")
    g.add_array("tokenizer.ggml.tokens", w.STRING, tokens)
    g.add_array("tokenizer.ggml.scores", w.F32,
                [0.0] * 259 + [-float(i) for i in range(len(WORDS))])
    g.add_array("tokenizer.ggml.token_type", w.I32, [2, 3, 3] + [6] * 256 + [1] * len(WORDS))
    g.add("tokenizer.ggml.bos_token_id", w.U32, 1)
    g.add("tokenizer.ggml.eos_token_id", w.U32, 2)
    return len(tokens)


def model(matrices, d=D, ff=FF, embedding="F32"):
    """A 1-layer llama model, its projections in `matrices`, its embedding in
    `embedding` (type names of gguf_writer.TYPES)."""
    rng = random.Random(1)
    g = w.Gguf()
    g.add("general.architecture", w.STRING, "llama")
    g.add("general.name", w.STRING, "seed")
    for key, value in (("context_length", CONTEXT), ("embedding_length", d),
                       ("block_count", LAYERS), ("feed_forward_length", ff),
                       ("attention.head_count", HEADS), ("attention.head_count_kv", KV)):
        g.add("llama." + key, w.U32, value)
    g.add("llama.attention.layer_norm_rms_epsilon", w.F32, 1e-5)
    V = vocabulary(g)

    def floats(n):
        return [rng.uniform(-0.5, 0.5) for _ in range(n)]

    def matrix(name, rows, row_length, type_name=matrices):
        ggml_type, stored, _ = w.TYPES[type_name]
        g.tensor(name, [row_length, rows], ggml_type, stored(floats(rows * row_length)))

    head = d // HEADS
    matrix("token_embd.weight", V, d, embedding)
    for layer in range(LAYERS):
        p = "blk.%d." % layer
        g.tensor(p + "attn_norm.weight", [d], w.F32_TYPE, w.floats_bytes([1.0] * d))
        matrix(p + "attn_q.weight", d, d)
        matrix(p + "attn_k.weight", KV * head, d)
        matrix(p + "attn_v.weight", KV * head, d)
        matrix(p + "attn_output.weight", d, d)
        g.tensor(p + "ffn_norm.weight", [d], w.F32_TYPE, w.floats_bytes([1.0] * d))
        matrix(p + "ffn_gate.weight", ff, d)
        matrix(p + "ffn_up.weight", ff, d)
        matrix(p + "ffn_down.weight", d, ff)
    g.tensor("output_norm.weight", [d], w.F32_TYPE, w.floats_bytes([1.0] * d))
    return g.bytes()


def gpt2():
    """GPT-2: fused attn_qkv, biases, learned positions, a byte-level BPE."""
    rng = random.Random(2)
    g = w.Gguf()
    g.add("general.architecture", w.STRING, "gpt2")
    for key, value in (("context_length", CONTEXT), ("embedding_length", D),
                       ("block_count", LAYERS), ("feed_forward_length", FF),
                       ("attention.head_count", HEADS)):
        g.add("gpt2." + key, w.U32, value)
    g.add("tokenizer.ggml.model", w.STRING, "gpt2")
    g.add("tokenizer.ggml.pre", w.STRING, "gpt-2")
    g.add_array("tokenizer.ggml.tokens", w.STRING, BPE_TOKENS)
    g.add_array("tokenizer.ggml.token_type", w.I32, [1] * (len(BPE_TOKENS) - 1) + [3])
    g.add_array("tokenizer.ggml.merges", w.STRING, BPE_MERGES)
    g.add("tokenizer.ggml.eos_token_id", w.U32, len(BPE_TOKENS) - 1)
    V = len(BPE_TOKENS)

    def tensor(name, dims):
        n = 1
        for dim in dims:
            n *= dim
        g.tensor(name, dims, w.F32_TYPE, w.floats_bytes([rng.uniform(-0.5, 0.5)
                                                         for _ in range(n)]))

    tensor("token_embd.weight", [D, V])
    tensor("position_embd.weight", [D, CONTEXT])
    for layer in range(LAYERS):
        p = "blk.%d." % layer
        for name, dims in (("attn_norm.weight", [D]), ("attn_norm.bias", [D]),
                           ("attn_qkv.weight", [D, 3 * D]), ("attn_qkv.bias", [3 * D]),
                           ("attn_output.weight", [D, D]), ("attn_output.bias", [D]),
                           ("ffn_norm.weight", [D]), ("ffn_norm.bias", [D]),
                           ("ffn_up.weight", [D, FF]), ("ffn_up.bias", [FF]),
                           ("ffn_down.weight", [FF, D]), ("ffn_down.bias", [D])):
            tensor(p + name, dims)
    tensor("output_norm.weight", [D])
    tensor("output_norm.bias", [D])
    tensor("output.weight", [D, V])
    return g.bytes()


def every_type():
    g = w.Gguf(version=2)
    for vtype, value in ((w.U8, 7), (w.I8, -7), (w.U16, 700), (w.I16, -700), (w.U32, 70000),
                         (w.I32, -70000), (w.F32, 0.5), (w.BOOL, True), (w.STRING, "caf\u00e9"),
                         (w.U64, 2 ** 40), (w.I64, -2 ** 40), (w.F64, 0.25)):
        g.add("x.type%d" % vtype, vtype, value)
    g.add_array("x.numbers", w.I32, [1, -2, 3])
    g.add("general.alignment", w.U32, 64)
    g.alignment = 64
    g.tensor("t", [32, 2], w.Q8_0_TYPE, bytes(68))
    # A tensor of each of ggml's other blocks: rows of one block, zero bytes.
    for name in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"):
        ggml_type, values, size = w.ggml_blocks.BLOCKS[name]
        g.tensor("t_" + name.lower(), [values, 2], ggml_type, bytes(2 * size))
    return g.bytes()


def vocabulary_only():
    g = w.Gguf()
    g.add("general.architecture", w.STRING, "llama")
    vocabulary(g)
    return g.bytes()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in (("llama_f32", model("F32")), ("llama_f16", model("F16")),
                       ("llama_bf16", model("BF16", 32, 64, "BF16")),
                       ("llama_q8_0", model("Q8_0", 32, 64, "Q8_0")),
                       ("llama_q4_0", model("Q4_0", 32, 64, "Q5_1")),
                       ("every_type", every_type()), ("vocabulary_only", vocabulary_only()),
                       ("gpt2_bpe", gpt2())):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
