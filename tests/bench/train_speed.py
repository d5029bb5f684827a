#!/usr/bin/env python3
"""Training speed: nextword's trainer against PyTorch on the same model,
batch, context and thread count, side by side in one run.

    /usr/bin/python3 tests/bench/train_speed.py build/nextword TEXT [--threads 2] [--steps 40]

The PyTorch side is the same architecture written the usual way (float32,
nn.Linear/nn.Embedding, pre-norm blocks, tanh GELU, dropout, tied classifier,
torch.optim.AdamW). Rounds alternate between the two so that load on a shared
machine hits both alike; the median of each is reported, and their ratio.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = {"vocab": 4096, "d": 128, "layers": 4, "heads": 4, "d_ff": 512, "context": 64,
         "batch": 32, "dropout": 0.1}


class Block(nn.Module):
    def __init__(self, d, heads, d_ff, dropout):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.ff_in, self.ff_out = nn.Linear(d, d_ff), nn.Linear(d_ff, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):
        B, T, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=2)
        q, k, v = (t.view(B, T, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        a = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        a = self.drop(torch.softmax(a.masked_fill(mask, float("-inf")), dim=-1))
        h = (a @ v).transpose(1, 2).reshape(B, T, d)
        x = x + self.drop(self.out(h))
        return x + self.drop(self.ff_out(F.gelu(self.ff_in(self.norm2(x)), approximate="tanh")))


class Model(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.embedding = nn.Embedding(s["vocab"], s["d"])
        self.position = nn.Parameter(torch.zeros(s["context"], s["d"]))
        self.blocks = nn.ModuleList(Block(s["d"], s["heads"], s["d_ff"], s["dropout"])
                                    for _ in range(s["layers"]))
        self.norm = nn.LayerNorm(s["d"])

    def forward(self, ids):
        T = ids.shape[1]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        x = self.embedding(ids) + self.position[:T]
        for block in self.blocks:
            x = block(x, mask)
        return self.norm(x) @ self.embedding.weight.T  # tied classifier


def train_step(model, optimizer, windows):
    """One AdamW step on windows [B, T+1]: predict each next token, clip at 1."""
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, SHAPE["vocab"]), windows[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def torch_tokens_per_second(steps, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    s = SHAPE
    model = Model(s)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.1)
    ids = torch.randint(0, s["vocab"], (s["batch"], s["context"] + 1))
    def step():
        train_step(model, optimizer, ids)
    for _ in range(3):  # warm up
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * s["batch"] * s["context"] / (time.perf_counter() - start)


def nextword_tokens_per_second(binary, text, steps, threads):
    s = SHAPE
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run(
            [binary, "train", text, "-o", out, "--vocab-size", str(s["vocab"]),
             "--d-model", str(s["d"]), "--layers", str(s["layers"]), "--heads", str(s["heads"]),
             "--d-ff", str(s["d_ff"]), "--context", str(s["context"]), "--batch", str(s["batch"]),
             "--dropout", str(s["dropout"]), "--steps", str(steps), "--threads", str(threads),
             "--log-every", str(steps), "--eval-every", "0", "--checkpoint-every", "0",
             "--val-fraction", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
    # The last progress line: the training loop's own rate (no file writing).
    return json.loads(r.stderr.strip().split("\n")[-1])["tokens_per_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nextword")
    parser.add_argument("text", help="training text for nextword (any text: speed only)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(nextword_tokens_per_second(os.path.abspath(args.nextword), args.text,
                                               args.steps, args.threads))
        theirs.append(torch_tokens_per_second(args.steps, args.threads))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(json.dumps({"model": SHAPE, "threads": args.threads, "steps": args.steps,
                      "torch_version": torch.__version__,
                      "nextword_tokens_per_s": [round(x) for x in ours],
                      "torch_tokens_per_s": [round(x) for x in theirs],
                      "ratio": round(a / b, 2)}))


if __name__ == "__main__":
    main()
