#!/usr/bin/env python3
"""GGUF models of every architecture nextword reads, against a float64
PyTorch forward pass written here from each architecture's math: random
models written by the tests' own GGUF writer (gguf_writer.py), run by
`nextword attention --model FILE.gguf`.

  llama  RMSNorm, rotary positions on adjacent pairs, SwiGLU, grouped-query
         attention; with Llama 3's rope_freqs factors (the angle of pair i
         divided by factor i) in some files;
  qwen2  as llama, with biases on Q, K and V and rotary positions on the two
         halves of each head (pair i is columns i and i + d_k/2);
  gpt2   LayerNorm with biases, GELU (tanh form), learned positions added to
         the embeddings, Q, K and V fused in one attn_qkv tensor (rows Q's,
         K's, V's) with one bias, biases on every projection, an output
         tensor of its own.

Matrices in F32, F16, BF16, Q8_0 or ggml's other blocks (the reference computes with the values
the file holds). Norm-wise relative error <= 1e-4 on every position's attention and the
listed next pieces' logits and probabilities, with float32 activations; the models in blocks
again with the default 8-bit activations, against the forward that rounds them alike
(gguf_parity.py's q8_round and bounds).

    /usr/bin/python3 tests/reference/gguf_architectures.py build/nextword

Exits 0 when everything matches, 1 when not, 77 (skip) when torch is
missing and --require-torch is false.
"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_writer as w  # noqa: E402
from gguf_parity import BLOCK_TYPES, compare_models, parse_arguments  # noqa: E402

PHRASES = ["the cat sat", "a hat on the mat", "the", "at the tea and the cat sat on a mat"]
WORDS = ["\u2581the", "\u2581cat", "\u2581sat", "\u2581a", "\u2581hat", "\u2581on", "\u2581mat",
         "\u2581and", "\u2581tea", "at", "th", "e", "\u2581", "a", "t", "h", "c", "s", "m", "o", "n",
         "d"]


def byte_characters():
    """GPT-2's stand-in character for each byte."""
    kept = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + \
        list(range(0xAE, 0x100))
    out, extra = {}, 0
    for b in range(256):
        if b in kept:
            out[b] = chr(b)
        else:
            out[b] = chr(0x100 + extra)
            extra += 1
    return out


# A byte-level BPE vocabulary: the 256 bytes' stand-ins, the merges that
# make the phrases' words, then GPT-2's <|endoftext|> (a control token).
BYTES = byte_characters()
BPE_MERGES = ["\u0120 t", "h e", "\u0120t he", "\u0120 c", "a t", "\u0120c at", "\u0120 s",
              "\u0120s at", "\u0120 m", "\u0120m at", "\u0120 a", "\u0120 h", "\u0120h at",
              "\u0120 o", "\u0120o n"]
BPE_TOKENS = [BYTES[b] for b in range(256)] + [m.replace(" ", "") for m in BPE_MERGES] + \
    ["<|endoftext|>"]
# (architecture, d, layers, heads, kv heads, ffn, tied, rope_freqs, the matrices' type:
# gguf_writer.TYPES, where a row is whole blocks of it, else F32)
MODELS = [("qwen2", 16, 2, 4, 2, 24, True, False, "F32"),
          ("qwen2", 24, 1, 2, 1, 32, False, False, "F16"),
          ("gpt2", 16, 2, 4, 4, 64, False, False, "F32"),
          ("gpt2", 24, 3, 3, 3, 40, False, False, "BF16"),
          ("llama", 16, 2, 2, 1, 24, False, True, "F32"),
          ("qwen2", 32, 2, 4, 4, 48, False, True, "F32"),
          ("gpt2", 32, 2, 4, 4, 64, False, False, "Q8_0"),
          ("qwen2", 64, 2, 4, 2, 96, True, False, "Q8_0"),
          ("gpt2", 32, 2, 4, 4, 64, False, False, "Q5_1"),
          ("qwen2", 64, 2, 4, 2, 96, False, True, "Q4_0"),
          ("qwen2", 256, 1, 4, 2, 256, True, False, "Q6_K"),
          ("llama", 256, 1, 8, 2, 512, False, False, "Q4_K")]


def model_file(path, seed, model, torch):
    """Writes a random GGUF file of the architecture; gives (cfg, float64 weights)."""
    arch, d, L, heads, kv_heads, ff, tied, factors, matrices = model
    rng = random.Random(seed)
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + WORDS
    V, hs = len(tokens), d // heads
    context = 32
    g = w.Gguf()
    g.add("general.architecture", w.STRING, arch)
    for key, value in (("context_length", context), ("embedding_length", d), ("block_count", L),
                       ("feed_forward_length", ff), ("attention.head_count", heads),
                       ("attention.head_count_kv", kv_heads)):
        g.add(arch + "." + key, w.U32, value)
    theta = rng.choice([10000.0, 1000000.0, 500.0])
    eps = rng.choice([1e-5, 1e-6])
    if arch == "gpt2":
        g.add("gpt2.attention.layer_norm_epsilon", w.F32, eps)
    else:
        g.add(arch + ".rope.freq_base", w.F32, theta)
        g.add(arch + ".attention.layer_norm_rms_epsilon", w.F32, eps)
    if arch == "gpt2":  # GPT-2's own tokenizer: byte-level BPE
        tokens = BPE_TOKENS
        g.add("tokenizer.ggml.model", w.STRING, "gpt2")
        g.add("tokenizer.ggml.pre", w.STRING, "gpt-2")
        g.add_array("tokenizer.ggml.tokens", w.STRING, tokens)
        g.add_array("tokenizer.ggml.token_type", w.I32, [1] * (len(tokens) - 1) + [3])
        g.add_array("tokenizer.ggml.merges", w.STRING, BPE_MERGES)
        g.add("tokenizer.ggml.bos_token_id", w.U32, len(tokens) - 1)
        g.add("tokenizer.ggml.eos_token_id", w.U32, len(tokens) - 1)
        V = len(tokens)
    else:
        g.add("tokenizer.ggml.model", w.STRING, "llama")
        g.add_array("tokenizer.ggml.tokens", w.STRING, tokens)
        g.add_array("tokenizer.ggml.scores", w.F32,
                    [0.0] * 259 + [-float(i) for i in range(len(WORDS))])
    weights, blocks = {}, set()

    def tensor(name, rows, row_length, scale=0.3, gain=False, positive=False):
        if gain:
            values = [1.0 + rng.uniform(-0.2, 0.2) for _ in range(rows * row_length)]
        elif positive:
            values = [rng.choice([1.0, 0.5, 4.0]) * rng.uniform(0.8, 1.25)
                      for _ in range(rows * row_length)]
        else:
            values = [rng.gauss(0, scale) for _ in range(rows * row_length)]
        whole = row_length % w.BLOCK_VALUES[matrices] == 0
        kind = matrices if rows > 1 and whole else "F32"
        if kind in BLOCK_TYPES:
            blocks.add(name)
        ggml_type, stored, held = w.TYPES[kind]
        data = stored(values)
        values = held(data)  # what the file holds, as the reader widens it
        g.tensor(name, [row_length] if rows == 1 else [row_length, rows], ggml_type, data)
        t = torch.tensor(values, dtype=torch.float64)
        weights[name] = t.reshape(rows, row_length) if rows > 1 else t

    q, kv = heads * hs, kv_heads * hs
    tensor("token_embd.weight", V, d)
    if arch == "gpt2":
        tensor("position_embd.weight", context, d, scale=0.1)
    if factors:
        tensor("rope_freqs.weight", 1, hs // 2, positive=True)
    for l in range(L):
        p = "blk.%d." % l
        tensor(p + "attn_norm.weight", 1, d, gain=True)
        if arch == "gpt2":
            tensor(p + "attn_norm.bias", 1, d, scale=0.1)
            tensor(p + "attn_qkv.weight", q + 2 * kv, d)
            tensor(p + "attn_qkv.bias", 1, q + 2 * kv, scale=0.1)
        else:
            tensor(p + "attn_q.weight", q, d)
            tensor(p + "attn_k.weight", kv, d)
            tensor(p + "attn_v.weight", kv, d)
            if arch == "qwen2" or factors:  # llama.cpp reads a llama file's biases too
                for part, width in (("q", q), ("k", kv), ("v", kv)):
                    tensor(p + "attn_%s.bias" % part, 1, width, scale=0.2)
        tensor(p + "attn_output.weight", d, q)
        tensor(p + "ffn_norm.weight", 1, d, gain=True)
        if arch == "gpt2":
            tensor(p + "attn_output.bias", 1, d, scale=0.1)
            tensor(p + "ffn_norm.bias", 1, d, scale=0.1)
            tensor(p + "ffn_up.bias", 1, ff, scale=0.1)
            tensor(p + "ffn_down.bias", 1, d, scale=0.1)
        else:
            tensor(p + "ffn_gate.weight", ff, d)
        tensor(p + "ffn_up.weight", ff, d)
        tensor(p + "ffn_down.weight", d, ff)
    tensor("output_norm.weight", 1, d, gain=True)
    if arch == "gpt2":
        tensor("output_norm.bias", 1, d, scale=0.1)
    if not tied:
        tensor("output.weight", V, d)
    with open(path, "wb") as f:
        f.write(g.bytes())
    cfg = {"arch": arch, "L": L, "heads": heads, "kv_heads": kv_heads, "hs": hs, "theta": theta,
           "eps": eps, "tied": tied, "blocks": blocks}
    return cfg, weights


def forward(cfg, w, ids, torch):
    """Every position's (logits [T, V], attention [L][h][T][T]), in float64."""
    arch, T, hs, heads = cfg["arch"], len(ids), cfg["hs"], cfg["heads"]
    group, eps = heads // cfg["kv_heads"], cfg["eps"]
    F = torch.nn.functional

    def norm(x, prefix):
        if arch == "gpt2":
            return F.layer_norm(x, x.shape[-1:], w[prefix + ".weight"], w[prefix + ".bias"],
                                eps=eps)
        return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w[prefix + ".weight"]

    def linear(x, name, bias=None):
        y = x @ w[name].T
        return y + w[bias] if bias is not None and bias in w else y

    def rope(x):  # x [T, n * hs]
        if arch == "gpt2":
            return x
        i = torch.arange(hs // 2, dtype=torch.float64)
        frequency = cfg["theta"] ** (-2.0 * i / hs)
        if "rope_freqs.weight" in w:
            frequency = frequency / w["rope_freqs.weight"]
        angle = torch.arange(T, dtype=torch.float64)[:, None] * frequency[None, :]
        c, s = torch.cos(angle), torch.sin(angle)
        out = x.clone()
        for h in range(x.shape[1] // hs):
            for j in range(hs // 2):
                a, b = (j, j + hs // 2) if arch == "qwen2" else (2 * j, 2 * j + 1)
                a, b = h * hs + a, h * hs + b
                out[:, a] = x[:, a] * c[:, j] - x[:, b] * s[:, j]
                out[:, b] = x[:, a] * s[:, j] + x[:, b] * c[:, j]
        return out

    x = w["token_embd.weight"][torch.tensor(ids)]
    if arch == "gpt2":
        x = x + w["position_embd.weight"][:T]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    attention = []
    for l in range(cfg["L"]):
        p = "blk.%d." % l
        xb = norm(x, p + "attn_norm")
        if arch == "gpt2":
            qkv = linear(xb, p + "attn_qkv.weight", p + "attn_qkv.bias")
            q, k, v = qkv[:, :heads * hs], qkv[:, heads * hs:-cfg["kv_heads"] * hs], \
                qkv[:, -cfg["kv_heads"] * hs:]
        else:
            q = linear(xb, p + "attn_q.weight", p + "attn_q.bias")
            k = linear(xb, p + "attn_k.weight", p + "attn_k.bias")
            v = linear(xb, p + "attn_v.weight", p + "attn_v.bias")
        q, k = rope(q), rope(k)
        heads_out, layer = [], []
        for h in range(heads):
            g = h // group
            s = q[:, h * hs:(h + 1) * hs] @ k[:, g * hs:(g + 1) * hs].T / math.sqrt(hs)
            a = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
            layer.append(a)
            heads_out.append(a @ v[:, g * hs:(g + 1) * hs])
        attention.append(layer)
        x = x + linear(torch.cat(heads_out, dim=1), p + "attn_output.weight",
                       p + "attn_output.bias")
        xb = norm(x, p + "ffn_norm")
        if arch == "gpt2":
            hb = F.gelu(linear(xb, p + "ffn_up.weight", p + "ffn_up.bias"), approximate="tanh")
        else:
            hb = F.silu(linear(xb, p + "ffn_gate.weight")) * linear(xb, p + "ffn_up.weight")
        x = x + linear(hb, p + "ffn_down.weight", p + "ffn_down.bias")
    classifier = w["token_embd.weight"] if cfg["tied"] else w["output.weight"]
    return norm(x, "output_norm") @ classifier.T, attention


def bpe_pieces(cfg, phrase, got):
    """The byte-level BPE's merges, worked by hand: "the" at the start has no
    space before it, so no merge makes it whole."""
    want = {"the cat sat": ["t", "he", "\u0120cat", "\u0120sat"]}.get(phrase)
    if cfg["arch"] != "gpt2" or want is None or got["tokens"] == want:
        return []
    return ["%r is %r, not %r" % (phrase, got["tokens"], want)]


def main():
    args, torch = parse_arguments("gguf architectures")
    if args is None:
        return torch
    failures, worst = compare_models(args.nextword, MODELS, model_file, forward, torch,
                                     lambda model: "all", PHRASES, bpe_pieces)
    print("gguf architectures: %d models (%s) x %d phrases against float64 PyTorch; largest "
          "relative error: %s" % (len(MODELS), ", ".join(sorted({m[0] for m in MODELS})),
                                  len(PHRASES), ", ".join(
                                      "%s %.2g" % kv for kv in sorted(worst["all"].items()))))
    # The default 8-bit activations of the models in blocks, against the
    # forward with the same rounding (gguf_parity.q8_round).
    blocks = [model for model in MODELS if model[-1] in BLOCK_TYPES]
    more, rounded = compare_models(args.nextword, blocks, model_file, forward, torch,
                                   lambda model: "all", PHRASES, bpe_pieces, activations="q8")
    failures += more
    print("gguf architectures: %d models in blocks with 8-bit activations, against that forward "
          "with them rounded alike; largest relative error: %s" % (len(blocks), ", ".join(
              "%s %.2g" % kv for kv in sorted(rounded["all"].items()))))
    # A byte-level BPE file without a BOS or an unknown piece (gpt2's):
    # `complete` of an empty line offers nothing (there is nothing to read)
    # and goes on with the stream; `bench` types a text the model writes.
    with tempfile.TemporaryDirectory(prefix="nextword-gguf-bench-") as tmp:
        path = os.path.join(tmp, "gpt2.gguf")
        model_file(path, 7, next(m for m in MODELS if m[0] == "gpt2"), torch)
        r = subprocess.run([args.nextword, "complete", "-f", "json", "-m", path],
                           input="\nthe ca\n", capture_output=True, text=True)
        records = [json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else []
        if len(records) != 2 or records[0]["suggestions"] or not records[1]["suggestions"]:
            failures.append("complete of an empty line, then 'the ca': exit %d, %r %s" % (
                r.returncode, r.stdout, r.stderr.strip()))
            print("FAIL " + failures[-1])
        r = subprocess.run([args.nextword, "bench", "--no-json-loader", "-b", "1", "-l", "4",
                            "--seconds", "0.01", "-m", path], capture_output=True, text=True)
        if r.returncode != 0 or "\ncomplete " not in r.stdout:
            failures.append("bench on %s: exit %d, %s" % (path, r.returncode, r.stderr.strip()))
            print("FAIL " + failures[-1])
        # The word-level WikiText measure feeds words as tokens: a model of
        # pieces (here without an unknown word) is refused in one line.
        text = os.path.join(tmp, "wiki.tokens")
        with open(text, "w") as f:
            f.write(" = Title = \n the cat sat on the <unk> mat . \n")
        r = subprocess.run([args.nextword, "eval", "--wikitext", text, "-m", path],
                           capture_output=True, text=True)
        if r.returncode != 2 or r.stdout or "word pieces" not in r.stderr or \
                len(r.stderr.splitlines()) != 1:
            failures.append("eval --wikitext on %s: exit %d, %r %r" % (
                path, r.returncode, r.stdout, r.stderr.strip()))
            print("FAIL " + failures[-1])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
