#!/usr/bin/env python3
"""llama2.c's stories260K through nextword against two PyTorch
computations: the format-v1 reference (nextword_ref.py) on the converted
model directory, and llama2.c's own forward pass written out here from
run.c's math, on the raw legacy checkpoint (y = W x, each rotary pair at
i % head_size, query head h reading key/value head h // (n_heads /
n_kv_heads)): what checks the conversion itself, transposes and all.
Compared on every position's attention and the listed logits and
probabilities of a few phrases, norm-wise relative error <= 1e-4.

    /usr/bin/python3 tests/reference/llama2c_parity.py build/nextword ../shared/models

Exits 0 when everything matches, 1 when not, 77 (skip) when torch is
missing and --require-torch is false.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

TOLERANCE = 1e-4
PHRASES = ["Once upon a time", "Lily and Ben went to the park. They saw a big",
           "The cat said, \"I", "one", "Tom's mom gave him a red ball and"]


def relative_error(got, want):
    largest = max(abs(w) for w in want)
    worst = max(abs(g - w) for g, w in zip(got, want))
    return worst / largest if largest else worst


def attention_errors(got, listed, logits, attention, torch):
    """The relative errors of an `attention -f json` record against logits
    [T, V] and attention [L][h][T][T] computed for its ids: of the listed
    next pieces' logits and probabilities, and of every attention weight."""
    last = logits[-1]
    probabilities = torch.softmax(last, dim=-1)
    return {
        "logits": relative_error([p["logit"] for p in listed],
                                 [last[p["id"]].item() for p in listed]),
        "probabilities": relative_error([p["probability"] for p in listed],
                                        [probabilities[p["id"]].item() for p in listed]),
        "attention": relative_error(
            [x for layer in got["attention"] for head in layer for row in head for x in row],
            [x for layer in attention for head in layer for x in head.flatten().tolist()]),
    }


def read_legacy(path, torch):
    """llama2.c's version-0 checkpoint as (config dict, tensors in run.c's shapes)."""
    with open(path, "rb") as f:
        data = f.read()
    dim, hidden, L, heads, kv_heads, vocab, seq = struct.unpack("<7i", data[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    hs = dim // heads
    kv = kv_heads * hs
    floats = torch.frombuffer(bytearray(data[28:]), dtype=torch.float32).to(torch.float64)
    at = 0

    def take(*shape):
        nonlocal at
        n = math.prod(shape)
        out = floats[at:at + n].reshape(shape)
        at += n
        return out

    w = {"emb": take(vocab, dim), "rms_att": take(L, dim), "wq": take(L, dim, dim),
         "wk": take(L, kv, dim), "wv": take(L, kv, dim), "wo": take(L, dim, dim),
         "rms_ffn": take(L, dim), "w1": take(L, hidden, dim), "w2": take(L, dim, hidden),
         "w3": take(L, hidden, dim), "rms_final": take(dim)}
    take(seq * hs)  # the two RoPE tables
    w["wcls"] = w["emb"] if shared else take(vocab, dim)
    assert at == floats.numel()
    return {"dim": dim, "L": L, "heads": heads, "kv_heads": kv_heads, "hs": hs}, w


def llama_forward(cfg, w, ids, torch):
    """run.c's forward for every position: (logits [T, V], attention [L][h][T][T]);
    cfg's "theta" (default 10000) and "eps" (default 1e-5) as a GGUF file gives them."""
    T, hs, heads = len(ids), cfg["hs"], cfg["heads"]
    group = heads // cfg["kv_heads"]
    theta, eps = cfg.get("theta", 10000.0), cfg.get("eps", 1e-5)

    def rmsnorm(x, g):
        return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * g

    def rope(x):  # x [T, n * hs]: pair (i, i+1) turns by pos / theta^((i % hs) / hs)
        out = x.clone()
        for i in range(0, x.shape[1], 2):
            freq = 1.0 / theta ** ((i % hs) / hs)
            angle = torch.arange(T, dtype=torch.float64) * freq
            c, s = torch.cos(angle), torch.sin(angle)
            out[:, i] = x[:, i] * c - x[:, i + 1] * s
            out[:, i + 1] = x[:, i] * s + x[:, i + 1] * c
        return out

    x = w["emb"][torch.tensor(ids)]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    attention = []
    for l in range(cfg["L"]):
        xb = rmsnorm(x, w["rms_att"][l])
        q, k, v = rope(xb @ w["wq"][l].T), rope(xb @ w["wk"][l].T), xb @ w["wv"][l].T
        heads_out, layer = [], []
        for h in range(heads):
            g = h // group
            s = q[:, h * hs:(h + 1) * hs] @ k[:, g * hs:(g + 1) * hs].T / math.sqrt(hs)
            a = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
            layer.append(a)
            heads_out.append(a @ v[:, g * hs:(g + 1) * hs])
        attention.append(layer)
        x = x + torch.cat(heads_out, dim=1) @ w["wo"][l].T
        xb = rmsnorm(x, w["rms_ffn"][l])
        hb = torch.nn.functional.silu(xb @ w["w1"][l].T) * (xb @ w["w3"][l].T)
        x = x + hb @ w["w2"][l].T
    return rmsnorm(x, w["rms_final"]) @ w["wcls"].T, attention


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("shared_models")
    parser.add_argument("--require-torch", default="0")
    args = parser.parse_args()
    try:
        import torch
        from nextword_ref import Model
    except ImportError as e:
        print("llama2c parity: cannot import torch (%s); install python3-torch" % e)
        return 1 if args.require_torch in ("1", "ON", "true") else 77
    stories = os.path.join(args.shared_models, "stories260K")
    checkpoint = os.path.join(stories, "stories260K.bin")
    cfg, w = read_legacy(checkpoint, torch)
    failures, worst = [], {}
    with tempfile.TemporaryDirectory(prefix="nextword-llama2c-") as tmp:
        model = os.path.join(tmp, "m")
        subprocess.run([args.nextword, "convert", checkpoint, "--tokenizer",
                        os.path.join(stories, "tok512.bin"), model], check=True)
        ref = Model(os.path.join(model, "vocab.json"), os.path.join(model, "weights.safetensors"))

        def records(*command):
            """(phrase, record) of `nextword COMMAND --model M -q` over PHRASES."""
            run = subprocess.run([args.nextword, *command, "--model", model, "-q"],
                                 input="\n".join(PHRASES) + "\n", capture_output=True,
                                 text=True, check=True)
            return [(p, json.loads(line)) for p, line in zip(PHRASES, run.stdout.splitlines())]

        for phrase, got in records("attention", "-k", "40"):
            ids = got["ids"]
            listed = got["pieces"]  # the next pieces, with ids ("predictions" are words)
            for name, (logits, attention) in (
                    ("nextword_ref", ref.forward_all(ids)),
                    ("llama2.c math", llama_forward(cfg, w, ids, torch))):
                errors = attention_errors(got, listed, logits, attention, torch)
                for key, error in errors.items():
                    worst[key] = max(worst.get(key, 0.0), error)
                    if error > TOLERANCE:
                        failures.append("%r against %s: %s relative error %.3g" % (
                            phrase, name, key, error))
        # score: each word's log-probability is the sum of its pieces' under
        # llama2.c's math, and the words' pieces are the text's, in order.
        for phrase, got in records("score", "-f", "json"):
            ids = got["ids"]
            pieces = [i for word in got["words"] for i in word["ids"]]
            if pieces != ids[1:]:
                failures.append("%r: score's words hold pieces %r, not %r" % (
                    phrase, pieces, ids[1:]))
                continue
            logits, _ = llama_forward(cfg, w, ids, torch)
            logprobs = torch.log_softmax(logits.double(), dim=-1)
            at, got_sums, want_sums = 1, [], []
            for word in got["words"]:
                want_sums.append(sum(logprobs[at + j - 1][i].item()
                                     for j, i in enumerate(word["ids"])))
                got_sums.append(word["logprob"])
                at += len(word["ids"])
            error = relative_error(got_sums, want_sums)
            worst["score"] = max(worst.get("score", 0.0), error)
            if error > TOLERANCE:
                failures.append("%r: score's word logprobs, relative error %.3g" % (phrase, error))
    for failure in failures:
        print("FAIL " + failure)
    print("llama2c parity: %d phrases against nextword_ref and llama2.c's math; largest "
          "relative error: %s" % (len(PHRASES), ", ".join(
              "%s %.3g" % item for item in sorted(worst.items()))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
