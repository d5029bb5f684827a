#!/usr/bin/env python3
"""GGUF models read in place against PyTorch: random llama models of several
shapes (grouped-query attention, a classifier of their own or tied, rope
bases, epsilons; tensors in F32, F16 projections, everything but the norms
in BF16 as BF16 files hold it (one file with BF16 norms too), in Q8_0 as
llama-quantize writes it, or in ggml's other blocks, Q4_0 to Q6_K), written
by the tests' own GGUF writer (gguf_writer.py, its own quantizers), run by `nextword attention
--model FILE.gguf`, and compared with llama2.c's math written out in
float64 (llama2c_parity.py's llama_forward: y = W x on the file's [out, in]
rows, as GGUF holds them), on the weights the file holds (F16 and BF16
values widened, blocks read by ggml_blocks.py, exactly). Norm-wise relative
error <= 1e-4 on every position's attention and the listed next pieces'
logits and probabilities. Models whose matrices are blocks run twice: with
float32 activations (NEXTWORD_ACTIVATIONS=f32) against that forward, and
with the default 8-bit activations against the same forward whose products
with those matrices first round the activations as nextword's q8 does
(q8_round below: blocks of 32, the scale an F16 of max |x| / 127, values
rounded half to even), in float64 after that: the same bound, but 0.1 on
attention (ROUNDED_ATTENTION_TOLERANCE says why).

    /usr/bin/python3 tests/reference/gguf_parity.py build/nextword

Exits 0 when everything matches, 1 when not, 77 (skip) when torch is
missing and --require-torch is false.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_writer as w  # noqa: E402
from llama2c_parity import attention_errors, llama_forward  # noqa: E402

TOLERANCE = 1e-4
# Attention with 8-bit activations: an activation within a few float32
# steps of a rounding tie may round the other way in float64, and a random
# model's peaked attention magnifies that one step (2 of 24 phrases in
# gguf_architectures: 0.051 and 3.2e-4); its logits and probabilities
# still agree within TOLERANCE.
ROUNDED_ATTENTION_TOLERANCE = 0.1
BLOCK_TYPES = {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"}
PHRASES = ["the cat sat", "a hat on the mat", "the", "at the tea and the cat"]
WORDS = ["\u2581the", "\u2581cat", "\u2581sat", "\u2581a", "\u2581hat", "\u2581on", "\u2581mat",
         "\u2581and", "\u2581tea", "at", "th", "e", "\u2581", "a", "t", "h", "c", "s", "m", "o", "n",
         "d"]
# (d, layers, heads, kv heads, ffn, tied, theta, eps, types): the types of the
# projections, the embedding and classifier, and the norms.
F32, F16, PROJECTIONS_F16 = ("F32",) * 3, ("F16", "F16", "F32"), ("F16", "F32", "F32")
BF16, Q8_0 = ("BF16", "BF16", "F32"), ("Q8_0", "Q8_0", "F32")
SHAPES = [(16, 2, 4, 2, 24, True, 10000.0, 1e-5, F32),
          (16, 1, 2, 2, 16, False, 500000.0, 1e-6, F32),
          (24, 2, 3, 1, 40, False, 10000.0, 1e-5, PROJECTIONS_F16),
          (32, 3, 4, 4, 48, True, 1000.0, 1e-5, PROJECTIONS_F16),
          (24, 2, 3, 1, 40, False, 10000.0, 1e-5, F16),
          (16, 2, 4, 2, 24, True, 10000.0, 1e-5, BF16),
          (24, 2, 3, 1, 40, False, 500000.0, 1e-6, ("BF16", "BF16", "BF16")),
          (32, 2, 4, 2, 64, True, 10000.0, 1e-5, Q8_0),
          (64, 2, 4, 1, 96, False, 1000.0, 1e-5, Q8_0),
          (32, 2, 4, 2, 64, True, 10000.0, 1e-5, ("Q4_0", "Q5_1", "F32")),
          (64, 2, 4, 1, 96, False, 1000.0, 1e-5, ("Q5_0", "Q4_1", "F32")),
          (256, 1, 4, 2, 512, False, 10000.0, 1e-5, ("Q4_K", "Q6_K", "F32")),
          (256, 1, 8, 4, 256, True, 10000.0, 1e-5, ("Q5_K", "Q5_K", "F32"))]


def model_file(path, seed, shape, torch):
    """Writes a random llama GGUF file; gives (cfg, weights in run.c's names as float64)."""
    d, L, heads, kv_heads, ff, tied, theta, eps, types = shape
    kinds = dict(zip(("projection", "words", "norm"), types))
    rng = random.Random(seed)
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + WORDS
    V, hs = len(tokens), d // heads
    g = w.Gguf()
    g.add("general.architecture", w.STRING, "llama")
    for key, value in (("context_length", 64), ("embedding_length", d), ("block_count", L),
                       ("feed_forward_length", ff), ("attention.head_count", heads),
                       ("attention.head_count_kv", kv_heads)):
        g.add("llama." + key, w.U32, value)
    g.add("llama.rope.freq_base", w.F32, theta)
    g.add("llama.attention.layer_norm_rms_epsilon", w.F32, eps)
    g.add("tokenizer.ggml.model", w.STRING, "llama")
    g.add_array("tokenizer.ggml.tokens", w.STRING, tokens)
    g.add_array("tokenizer.ggml.scores", w.F32,
                [0.0] * 259 + [-float(i) for i in range(len(WORDS))])
    weights = {}

    def tensor(name, ours, rows, row_length, kind, scale=0.3):
        values = [1.0 + rng.uniform(-0.2, 0.2) if kind == "norm" else rng.gauss(0, scale)
                  for _ in range(rows * row_length)]
        dims = [row_length] if rows == 1 else [row_length, rows]
        ggml_type, stored, held = w.TYPES[kinds[kind]]
        data = stored(values)
        g.tensor(name, dims, ggml_type, data)
        t = torch.tensor(held(data), dtype=torch.float64)
        weights.setdefault(ours, []).append(t.reshape(rows, row_length) if rows > 1 else t)

    tensor("token_embd.weight", "emb", V, d, "words")
    for l in range(L):
        p = "blk.%d." % l
        tensor(p + "attn_norm.weight", "rms_att", 1, d, "norm")
        tensor(p + "attn_q.weight", "wq", d, d, "projection")
        tensor(p + "attn_k.weight", "wk", kv_heads * hs, d, "projection")
        tensor(p + "attn_v.weight", "wv", kv_heads * hs, d, "projection")
        tensor(p + "attn_output.weight", "wo", d, d, "projection")
        tensor(p + "ffn_norm.weight", "rms_ffn", 1, d, "norm")
        tensor(p + "ffn_gate.weight", "w1", ff, d, "projection")
        tensor(p + "ffn_down.weight", "w2", d, ff, "projection")
        tensor(p + "ffn_up.weight", "w3", ff, d, "projection")
    tensor("output_norm.weight", "rms_final", 1, d, "norm")
    if not tied:
        tensor("output.weight", "wcls", V, d, "words")
    with open(path, "wb") as f:
        f.write(g.bytes())
    out = {k: v[0] for k, v in weights.items() if k in ("emb", "rms_final", "wcls")}
    for k, v in weights.items():
        if k not in out:
            out[k] = torch.stack(v)
    if tied:
        out["wcls"] = out["emb"]
    cfg = {"dim": d, "L": L, "heads": heads, "kv_heads": kv_heads, "hs": hs, "theta": theta,
           "eps": eps, "blocks": set()}
    if kinds["projection"] in BLOCK_TYPES:
        cfg["blocks"] |= {"wq", "wk", "wv", "wo", "w1", "w2", "w3"}
    if kinds["words"] in BLOCK_TYPES:
        cfg["blocks"].add("wcls")
    return cfg, out


def q8_round(x, torch):
    """Rows of x rounded as nextword's 8-bit activations (math/q8_activations.h):
    the row in float32, per block of 32: scale max |x| / 127 and its inverse in
    float32, values x times the inverse rounded half to even, the scale kept
    as an F16; gives the values they stand for, q times that F16, in float64."""
    T, K = x.shape
    b = x.to(torch.float32).reshape(T, K // 32, 32)
    scale = b.abs().amax(dim=-1) / 127
    inverse = torch.where(scale != 0, 1 / scale, torch.zeros_like(scale))
    q = torch.round(b * inverse[..., None])
    return (q.double() * scale.to(torch.float16).double()[..., None]).reshape(T, K)


class Q8Matrix:
    """A matrix in blocks as the forward passes read it: W[i] its rows, and
    x @ W.T the product of x rounded by q8_round with W, in float64."""

    def __init__(self, t, torch):
        self.t, self.torch = t, torch

    def __getitem__(self, index):
        return self.t[index]

    @property
    def T(self):
        return self

    def __rmatmul__(self, x):
        return q8_round(x, self.torch) @ self.t.T


def with_q8_matrices(weights, names, torch):
    """weights with each of names (a matrix, or a stack of one a layer)
    read as a Q8Matrix."""
    def wrap(t):
        return [Q8Matrix(m, torch) for m in t] if t.dim() == 3 else Q8Matrix(t, torch)
    return {k: wrap(v) if k in names else v for k, v in weights.items()}


def parse_arguments(name):
    """(the arguments, torch) or (None, the exit code: torch is missing)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("--require-torch", default="0")
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        print("%s: cannot import torch (%s); install python3-torch" % (name, e))
        return None, 1 if args.require_torch in ("1", "ON", "true") else 77
    return args, torch


def compare_models(nextword, models, write, forward, torch, group, phrases=PHRASES, check=None,
                   activations="f32"):
    """Writes each model (write(path, seed, model, torch) -> cfg, weights), runs
    `nextword attention` on the phrases with NEXTWORD_ACTIVATIONS=activations
    and compares every record with forward(cfg, weights, ids, torch), the
    matrices cfg["blocks"] names read as Q8Matrix when activations is q8;
    check(cfg, phrase, record) may add failures of its own. Gives (failures,
    {group(model): {measure: worst}})."""
    failures, worst = [], {}
    env = dict(os.environ, NEXTWORD_ACTIVATIONS=activations)
    with tempfile.TemporaryDirectory(prefix="nextword-gguf-parity-") as tmp:
        for seed, model in enumerate(models):
            path = os.path.join(tmp, "m%d.gguf" % seed)
            cfg, weights = write(path, seed, model, torch)
            if activations == "q8":
                weights = with_q8_matrices(weights, cfg["blocks"], torch)
            run = subprocess.run([nextword, "attention", "-k", "40", "--model", path, "-q"],
                                 input="\n".join(phrases) + "\n", capture_output=True, text=True,
                                 check=False, env=env)
            if run.returncode != 0:
                failures.append("model %d %r: exit %d: %s" % (seed, model, run.returncode,
                                                               run.stderr.strip()))
                continue
            for phrase, line in zip(phrases, run.stdout.splitlines()):
                got = json.loads(line)
                if check is not None:
                    failures += ["model %d %r: %s" % (seed, model, f)
                                 for f in check(cfg, phrase, got)]
                logits, attention = forward(cfg, weights, got["ids"], torch)
                errors = attention_errors(got, got["pieces"], logits, attention, torch)
                for key, error in errors.items():
                    of_group = worst.setdefault(group(model), {})
                    of_group[key] = max(of_group.get(key, 0.0), error)
                    bound = ROUNDED_ATTENTION_TOLERANCE if activations == "q8" and \
                        key == "attention" else TOLERANCE
                    if error > bound:
                        failures.append("model %d %r, %r, %s activations: %s relative error "
                                        "%.3g" % (seed, model, phrase, activations, key, error))
    for failure in failures:
        print("FAIL " + failure)
    return failures, worst


def main():
    args, torch = parse_arguments("gguf parity")
    if args is None:
        return torch
    failures, worst = compare_models(args.nextword, SHAPES, model_file, llama_forward, torch,
                                     lambda shape: shape[-1])
    blocks = [shape for shape in SHAPES if BLOCK_TYPES & set(shape[-1])]
    rounded_failures, rounded = compare_models(args.nextword, blocks, model_file, llama_forward,
                                               torch, lambda shape: shape[-1], activations="q8")
    for types in sorted(worst):
        print("gguf parity: %s models x %d phrases against llama2.c's math in float64; largest "
              "relative error: %s" % ("/".join(types), len(PHRASES), ", ".join(
                  "%s %.3g" % item for item in sorted(worst[types].items()))))
        if types in rounded:
            print("  8-bit activations, against it with them rounded alike: %s" % ", ".join(
                "%s %.3g" % item for item in sorted(rounded[types].items())))
    return 1 if failures or rounded_failures else 0


if __name__ == "__main__":
    sys.exit(main())
