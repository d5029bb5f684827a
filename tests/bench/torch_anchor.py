#!/usr/bin/env python3
"""The PyTorch anchor, reproduced on our own split: trains the same transformer
as train_speed.py (d_model 128, 4 layers, 4 heads, d_ff 512, context 64,
batch 32, dropout 0.1, tied classifier) with PyTorch for a fixed wall-clock
budget, then writes it as a format-v1 model so that `nextword eval` scores it
on exactly the tokens and positions it scores our own models on.

    /usr/bin/python3 tests/bench/torch_anchor.py VOCAB_JSON OUT_DIR TEXT... [--minutes 20]

VOCAB_JSON is the vocabulary to train with (e.g. the one `nextword train`
built from the same TEXT), so both models see the same token stream. The
schedule is the trainer's (linear warmup, cosine decay to min_lr), stretched
over the number of steps the budget allows at the rate of the first steps.
"""
import argparse
import base64
import json
import math
import os
import re
import struct
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "reference"))
from nextword_ref import tokenize  # noqa: E402
from train_speed import SHAPE, Model, train_step  # noqa: E402


def token_stream(paths, ids, unk, bos):
    """Documents (split at blank lines and <|endoftext|>), each after a bos."""
    stream = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for document in re.split(r"\n(?:[ \t\r\v\f]*|<\|endoftext\|>)\n", text):
            words = tokenize(document)
            if words:
                stream.append(bos)
                stream.extend(ids.get(w, unk) for w in words)
    return torch.tensor(stream, dtype=torch.long)


def f32_tensor(t):
    t = t.detach().to(torch.float32).contiguous()
    raw = struct.pack("<%df" % t.numel(), *t.flatten().tolist())
    return {"shape": list(t.shape), "dtype": "f32", "b64": base64.b64encode(raw).decode()}


def save(model, words, out):
    """The torch model as format v1 (the layout of data/FORMAT.md)."""
    s, d = SHAPE, SHAPE["d"]
    tensors = {"embedding": model.embedding.weight, "position": model.position,
               "final_norm.weight": model.norm.weight, "final_norm.bias": model.norm.bias}
    for l, block in enumerate(model.blocks):
        p = "layers.%d." % l
        w_q, w_k, w_v = block.qkv.weight.split(d, dim=0)
        tensors.update({
            p + "norm1.weight": block.norm1.weight, p + "norm1.bias": block.norm1.bias,
            p + "attn.w_q": w_q.T, p + "attn.w_k": w_k.T, p + "attn.w_v": w_v.T,
            p + "attn.w_o": block.out.weight.T,
            p + "norm2.weight": block.norm2.weight, p + "norm2.bias": block.norm2.bias,
            p + "ffn.w_in": block.ff_in.weight.T, p + "ffn.b_in": block.ff_in.bias,
            p + "ffn.w_out": block.ff_out.weight.T, p + "ffn.b_out": block.ff_out.bias})
    config = {"vocab_size": s["vocab"], "d_model": d, "n_layers": s["layers"],
              "n_heads": s["heads"], "d_k": d // s["heads"], "d_v": d // s["heads"],
              "d_ff": s["d_ff"], "activation": "gelu", "max_len": s["context"],
              "positional": "learned", "norm": "layernorm", "norm_eps": 1e-5,
              "residual": True, "causal": True, "scale": "sqrt_dk", "tied_classifier": True,
              "unk_token": "<unk>", "bos_token": "<bos>"}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(words, f, ensure_ascii=False)
    with open(os.path.join(out, "weights.json"), "w", encoding="utf-8") as f:
        json.dump({"format": "nextword", "version": 1, "config": config,
                   "tensors": {k: f32_tensor(v) for k, v in tensors.items()}}, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vocab")
    parser.add_argument("out")
    parser.add_argument("text", nargs="+")
    parser.add_argument("--minutes", type=float, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--min-lr", type=float, default=1e-4)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    with open(args.vocab, encoding="utf-8") as f:
        words = json.load(f)
    assert isinstance(words, list) and len(words) == SHAPE["vocab"], "a 4096-word array"
    ids = {w: i for i, w in enumerate(words)}
    stream = token_stream(args.text, ids, ids["<unk>"], ids["<bos>"])
    B, T = SHAPE["batch"], SHAPE["context"]

    model = Model(SHAPE)
    nn_init = torch.nn.init
    for name, p in model.named_parameters():  # GPT-2 style, as nextword train
        if p.dim() == 2:
            nn_init.normal_(p, std=0.02)
    decayed = [p for p in model.parameters() if p.dim() == 2 and p is not model.position]
    others = [p for p in model.parameters() if not any(p is q for q in decayed)]
    optimizer = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1},
                                   {"params": others, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.95))
    budget = args.minutes * 60
    start = time.perf_counter()
    steps, step, loss_sum = None, 0, 0.0
    while steps is None or step < steps:
        elapsed = time.perf_counter() - start
        if step == 50:  # the budget in steps, at the rate measured so far
            steps = max(51, int(budget / (elapsed / 50)))
        total = steps or 10 ** 9
        if step < args.warmup:
            lr = args.lr * (step + 1) / args.warmup
        else:
            progress = min(1.0, (step - args.warmup) / max(total - args.warmup, 1))
            lr = args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * progress))
        for group in optimizer.param_groups:
            group["lr"] = lr
        offsets = torch.randint(0, len(stream) - T - 1, (B,))
        batch = torch.stack([stream[o:o + T + 1] for o in offsets.tolist()])
        loss_sum += train_step(model, optimizer, batch)
        step += 1
        if step % 200 == 0:
            print(json.dumps({"step": step, "steps": steps, "loss": round(loss_sum / 200, 4),
                              "elapsed_s": round(time.perf_counter() - start, 1)}),
                  file=sys.stderr, flush=True)
            loss_sum = 0.0
    model.eval()
    save(model, words, args.out)
    print(json.dumps({"steps": steps, "seconds": round(time.perf_counter() - start, 1),
                      "tokens_per_s": round(steps * B * T / (time.perf_counter() - start))}))


if __name__ == "__main__":
    main()
