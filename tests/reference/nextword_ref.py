#!/usr/bin/env python3
"""Independent PyTorch reference for nextword's format v1 (data/FORMAT.md).

It shares no code with the C++ engine: it reads the same vocab.json and
weights.json, tokenizes with its own implementation of the documented rules,
and computes logits and attention in float64 with torch's own softmax,
layer_norm and gelu.

    /usr/bin/python3 tests/reference/nextword_ref.py --model DIR "once upon a"

prints one JSON record per phrase: tokens, ids, attention [l][h][q][k],
logits (one per vocabulary word) and probabilities. For speed comparisons
(tests/bench/compare_torch.py) it can also read weights.safetensors, compute
in float32, print only the top k like `nextword predict -f tsv`, and run
phrases from stdin in padded batches (--batch) through a batched forward pass.
"""
import argparse
import base64
import json
import math
import os
import string
import struct
import sys
import time

import torch
import torch.nn.functional as F

CONFIG_DEFAULTS = {
    "n_heads": 0, "n_kv_heads": None, "d_k": 0, "d_v": 0, "d_ff": 0, "activation": "gelu",
    "positional": "none", "rope_theta": 10000.0, "rope_pairs": "adjacent", "norm": "none",
    "norm_eps": 1e-5, "qk_norm": False,
    "residual": True, "causal": True, "scale": "sqrt_dk", "tied_classifier": False,
    "tokenizer": {}, "unk_token": "<unk>", "bos_token": None,
    "adaptive_cutoffs": None, "adaptive_div": 4.0,
}

# Curly quotes read as straight ones; dashes and the ellipsis are marks too.
MARKS = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
         "\u2013": "\u2013", "\u2014": "\u2014", "\u2026": "\u2026"}
SPACES = " \t\n\r\v\f"


def tokenize(text, lowercase=True, split_punctuation=True):
    units = []  # (text, is_punctuation, is_space)
    for ch in text:
        if ch in MARKS:
            units.append((MARKS[ch], True, False))
            continue
        if lowercase and ("A" <= ch <= "Z" or ("\u00c0" <= ch <= "\u00de" and ch != "\u00d7")):
            ch = chr(ord(ch) + 32)
        units.append((ch, ch in string.punctuation, ch in SPACES))

    def wordish(unit):
        ch = unit[0]
        return not unit[1] and not unit[2] and (ord(ch) >= 0x80 or (ch.isascii() and ch.isalnum()))

    tokens, word = [], ""
    for i, (ch, punct, space) in enumerate(units):
        joins = (ch in ("'", "-") and 0 < i < len(units) - 1
                 and wordish(units[i - 1]) and wordish(units[i + 1]))
        if space:
            if word:
                tokens.append(word)
            word = ""
        elif split_punctuation and punct and not joins:
            if word:
                tokens.append(word)
            word = ""
            tokens.append(ch)
        else:
            word += ch
    if word:
        tokens.append(word)
    return tokens


DTYPE = torch.float64  # the parity tests' precision; --dtype float32 for speed


def read_safetensors(path):
    """The format-v1 weights of a weights.safetensors file: (root, tensors)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__")
    assert meta["format"] == "nextword" and meta["version"] == "1"
    data = raw[8 + n:]
    tensors = {}
    for name, t in header.items():
        assert t["dtype"] == "F32"
        begin, end = t["data_offsets"]
        values = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32)
        tensors[name] = values.to(DTYPE).reshape(t["shape"])
    return {"format": "nextword", "version": 1, "config": json.loads(meta["config"])}, tensors


def read_tensor(t):
    shape = t["shape"]
    if "b64" in t:
        raw = base64.b64decode(t["b64"], validate=True)
        values = struct.unpack("<%df" % (len(raw) // 4), raw)
    else:
        values = []

        def flatten(x):
            if isinstance(x, list):
                for y in x:
                    flatten(y)
            else:
                values.append(float(x))
        flatten(t["data"])
    # The file holds float32 values; compute with exactly those, in float64.
    return torch.tensor(values, dtype=torch.float32).to(DTYPE).reshape(shape)


class Model:
    def __init__(self, vocab_path, weights_path):
        self.vocab_path = vocab_path
        if weights_path.endswith(".safetensors"):
            root, tensors = read_safetensors(weights_path)
        else:
            with open(weights_path, encoding="utf-8") as f:
                root = json.load(f)
            tensors = None
        assert root["format"] == "nextword" and root["version"] == 1
        self.config = dict(CONFIG_DEFAULTS)
        self.config.update(root["config"])
        tok = {"lowercase": True, "split_punctuation": True}
        tok.update(self.config["tokenizer"])
        self.config["tokenizer"] = tok
        self.tensors = tensors or {name: read_tensor(t) for name, t in root["tensors"].items()}
        with open(vocab_path, encoding="utf-8") as f:
            vocab = json.load(f)
        if isinstance(vocab, dict):
            words = [None] * len(vocab)
            for word, i in vocab.items():
                words[i] = word
            vocab = words
        self.words = vocab
        self.ids = {w: i for i, w in enumerate(vocab)}

    def encode(self, phrase):
        c = self.config
        tokens = tokenize(phrase, c["tokenizer"]["lowercase"], c["tokenizer"]["split_punctuation"])
        bos = c["bos_token"]
        if bos:
            tokens = [bos] + tokens
        truncated = len(tokens) > c["max_len"]
        if truncated:
            tokens = tokens[-c["max_len"]:]
        unk = self.ids[c["unk_token"]]
        ids, unknown = [], []
        for i, t in enumerate(tokens):
            if bos and i == 0 and not truncated:
                ids.append(self.ids[bos])
            elif t in self.ids and t not in (c["unk_token"], bos):
                ids.append(self.ids[t])
            else:
                ids.append(unk)
                unknown.append(t)
        return tokens, ids, unknown, truncated

    def norm(self, x, prefix):
        c = self.config
        if c["norm"] == "none":
            return x
        if c["norm"] == "rmsnorm":  # x / sqrt(mean(x^2) + eps) * weight
            rms = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + c["norm_eps"])
            return x / rms * self.tensors[prefix + ".weight"]
        return F.layer_norm(x, (c["d_model"],), self.tensors[prefix + ".weight"],
                            self.tensors[prefix + ".bias"], eps=c["norm_eps"])

    def rope(self, x):
        """Rotary positions on Q or K [..., T, h*d_k]: in each head, pair i
        (columns (2i, 2i+1), or (i, i + d_k/2) with "rope_pairs": "halves") at
        position p turns by p * theta^(-2i/d_k) / rope_factors[i]."""
        c = self.config
        if c["positional"] != "rope":
            return x
        T, dk = x.shape[-2], c["d_k"]
        h = x.shape[-1] // dk  # n_heads for Q, the kv heads for K
        i = torch.arange(dk // 2, dtype=DTYPE)
        frequency = torch.pow(torch.tensor(float(c["rope_theta"]), dtype=DTYPE), -2.0 * i / dk)
        if c.get("rope_factors"):
            frequency = frequency / torch.tensor(c["rope_factors"], dtype=DTYPE)
        angle = torch.arange(T, dtype=DTYPE)[:, None] * frequency[None, :]
        cos, sin = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]  # [T, 1, dk/2]
        if c.get("rope_pairs") == "halves":
            heads = x.reshape(*x.shape[:-1], h, 2, dk // 2)
            x0, x1 = heads[..., 0, :], heads[..., 1, :]
            turned = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-2)
            return turned.reshape(x.shape)
        pairs = x.reshape(*x.shape[:-1], h, dk // 2, 2)
        x0, x1 = pairs[..., 0], pairs[..., 1]
        turned = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        return turned.reshape(x.shape)

    def positioned(self, x):
        """Q or K [..., T, h*d_k] as the scores read them: QK-norm (each head
        divided by its root mean square), then the rotary positions
        (C++ turns first and normalizes after: a rotation keeps the root)."""
        c = self.config
        if c.get("qk_norm"):
            dk = c["d_k"]
            heads = x.reshape(*x.shape[:-1], x.shape[-1] // dk, dk)
            heads = heads / torch.sqrt(heads.pow(2).mean(dim=-1, keepdim=True) + c["norm_eps"])
            x = heads.reshape(x.shape)
        return self.rope(x)

    def linear(self, x, w, b):
        y = x @ self.tensors[w]
        return y + self.tensors[b] if b in self.tensors else y

    def feedforward(self, X, p):
        """X + act(norm2(X) W_in + b_in) W_out + b_out (no residual: without X)."""
        c = self.config
        if c["d_ff"] == 0:
            return X
        U = self.norm(X, p + "norm2")
        H = self.linear(U, p + "ffn.w_in", p + "ffn.b_in")
        if c["activation"] == "swiglu":  # silu(U W_gate + b_gate) * (U W_in + b_in)
            H = F.silu(self.linear(U, p + "ffn.w_gate", p + "ffn.b_gate")) * H
        elif c["activation"] == "gelu":
            H = F.gelu(H, approximate="tanh")
        elif c["activation"] == "relu2":  # squared relu
            H = F.relu(H) ** 2
        else:
            H = F.relu(H)
        Fo = self.linear(H, p + "ffn.w_out", p + "ffn.b_out")
        return X + Fo if c["residual"] else Fo

    def forward(self, ids):
        """Returns (logits [V], attention [L][h][T][T]) for the last position."""
        logits, attention = self.forward_all(ids)
        return logits[-1], attention

    def positions(self, T):
        """What the positional encoding adds to X [T, d], or None."""
        c, d = self.config, self.config["d_model"]
        if c["positional"] == "learned":
            return self.tensors["position"][:T]
        if c["positional"] == "sinusoidal":
            pos = torch.arange(T, dtype=DTYPE)[:, None]
            even = (torch.arange(d) // 2 * 2).to(DTYPE)[None, :]
            angle = pos / torch.pow(torch.tensor(10000.0, dtype=DTYPE), even / d)
            return torch.where(torch.arange(d)[None, :] % 2 == 0, torch.sin(angle), torch.cos(angle))
        return None

    def forward_all(self, ids):
        """Returns (logits [T, V], attention [L][h][T][T]) for every position."""
        c, W = self.config, self.tensors
        T, d, h, dk, dv = len(ids), c["d_model"], c["n_heads"], c["d_k"], c["d_v"]
        X = W["embedding"][torch.tensor(ids)]
        P = self.positions(T)
        if P is not None:
            X = X + P
        s = 1.0 / math.sqrt(dk) if c["scale"] == "sqrt_dk" else 1.0
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        attention = []
        for l in range(c["n_layers"]):
            p = "layers.%d." % l
            U = self.norm(X, p + "norm1")
            Q = self.positioned(self.linear(U, p + "attn.w_q", p + "attn.b_q"))
            K = self.positioned(self.linear(U, p + "attn.w_k", p + "attn.b_k"))
            V = self.linear(U, p + "attn.w_v", p + "attn.b_v")
            heads, layer = [], []
            group = h // (c["n_kv_heads"] or h)  # query heads per key/value head
            for i in range(h):
                g = i // group
                S = Q[:, i * dk:(i + 1) * dk] @ K[:, g * dk:(g + 1) * dk].T * s
                if c["causal"]:
                    S = S.masked_fill(mask, float("-inf"))
                A = torch.softmax(S, dim=-1)
                layer.append(A)
                heads.append(A @ V[:, g * dv:(g + 1) * dv])
            attention.append(layer)
            O = self.linear(torch.cat(heads, dim=1), p + "attn.w_o", p + "attn.b_o")
            X = self.feedforward(X + O if c["residual"] else O, p)
        return self.classify(self.norm(X, "final_norm")), attention

    def classify(self, Z):
        """Next-word logits [..., V] of context vectors Z [..., d] (after the
        final norm): Z C^T + c, or with an adaptive softmax every word's
        log-probability, from torch's own nn.AdaptiveLogSoftmaxWithLoss."""
        c, W = self.config, self.tensors
        C = W["embedding"] if c["tied_classifier"] else W["classifier"]
        if c["adaptive_cutoffs"]:
            return self.adaptive_softmax().log_prob(Z.reshape(-1, Z.shape[-1])).reshape(
                *Z.shape[:-1], c["vocab_size"])
        logits = Z @ C.T
        return logits + W["classifier_bias"] if "classifier_bias" in W else logits

    def adaptive_parameters(self):
        """Our tensors under the names of nn.AdaptiveLogSoftmaxWithLoss's
        parameters: head.weight is [C_head ; clusters], tail.i.0 the
        projection, tail.i.1 the cluster's words."""
        c, W = self.config, self.tensors
        C = W["embedding"] if c["tied_classifier"] else W["classifier"]
        params = {"head.weight": torch.cat([C[:c["adaptive_cutoffs"][0]], W["clusters"]])}
        if "classifier_bias" in W:
            params["head.bias"] = W["classifier_bias"]
        for i in range(len(c["adaptive_cutoffs"])):
            params["tail.%d.0.weight" % i] = W["cluster.%d.proj" % i]
            params["tail.%d.1.weight" % i] = W["cluster.%d.words" % i]
        return params

    def adaptive_module(self):
        c = self.config
        return torch.nn.AdaptiveLogSoftmaxWithLoss(
            c["d_model"], c["vocab_size"], c["adaptive_cutoffs"], div_value=c["adaptive_div"],
            head_bias="classifier_bias" in self.tensors).to(DTYPE)

    def adaptive_softmax(self):
        """The module with our tensors as its parameters (autograd flows to them)."""
        module, params = self.adaptive_module(), self.adaptive_parameters()
        for name, value in params.items():
            owner = module
            *path, leaf = name.split(".")
            for part in path:
                owner = getattr(owner, part)
            assert getattr(owner, leaf).shape == value.shape, name
            delattr(owner, leaf)
            setattr(owner, leaf, value)
        return module

    def residual_batch(self, ids):
        """The residual stream after the last layer, [B, T, d], of right-padded
        ids [B, T] (a long tensor) in one batched pass: with the causal mask no
        real token sees a pad."""
        c, W = self.config, self.tensors
        B, T = ids.shape
        h, dk, dv = c["n_heads"], c["d_k"], c["d_v"]
        assert c["causal"], "batched pass: causal models only"
        X = W["embedding"][ids]
        P = self.positions(T)
        if P is not None:
            X = X + P
        s = 1.0 / math.sqrt(dk) if c["scale"] == "sqrt_dk" else 1.0
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        for l in range(c["n_layers"]):
            p = "layers.%d." % l
            U = self.norm(X, p + "norm1")
            Q = self.positioned(self.linear(U, p + "attn.w_q", p + "attn.b_q"))
            K = self.positioned(self.linear(U, p + "attn.w_k", p + "attn.b_k"))
            Q = Q.view(B, T, h, dk).transpose(1, 2)
            kv = c["n_kv_heads"] or h
            K = K.view(B, T, kv, dk).transpose(1, 2).repeat_interleave(h // kv, dim=1)
            V = self.linear(U, p + "attn.w_v", p + "attn.b_v").view(B, T, kv, dv).transpose(1, 2)
            V = V.repeat_interleave(h // kv, dim=1)
            A = torch.softmax((Q @ K.transpose(2, 3) * s).masked_fill(mask, float("-inf")), dim=-1)
            heads = (A @ V).transpose(1, 2).reshape(B, T, h * dv)
            O = self.linear(heads, p + "attn.w_o", p + "attn.b_o")
            X = self.feedforward(X + O if c["residual"] else O, p)
        return X

    def forward_batch(self, batch):
        """Next-word logits [B, V] for lists of ids of any lengths, in one
        batched pass (residual_batch); each row's logits come from its last token."""
        c, W = self.config, self.tensors
        B, T = len(batch), max(len(ids) for ids in batch)
        ids = torch.zeros(B, T, dtype=torch.long)
        for b, row in enumerate(batch):
            ids[b, :len(row)] = torch.tensor(row)
        X = self.residual_batch(ids)
        last = X[torch.arange(B), torch.tensor([len(row) - 1 for row in batch])]
        return self.classify(self.norm(last, "final_norm"))

    def top_k_line(self, logits, k):
        """`nextword predict -f tsv`: word, probability, ... (specials excluded)."""
        c = self.config
        probabilities = torch.softmax(logits, dim=-1)
        for token in (c["unk_token"], c["bos_token"]):
            if token:
                probabilities[self.ids[token]] = -1
        values, ids = torch.topk(probabilities, k)
        return "\t".join("%s\t%.6f" % (self.words[i], v) for v, i in zip(values.tolist(), ids.tolist()))

    def record(self, phrase):
        tokens, ids, unknown, truncated = self.encode(phrase)
        logits, attention = self.forward(ids)
        return {
            "phrase": phrase, "tokens": tokens, "ids": ids, "unknown": unknown,
            "truncated": truncated,
            "attention": [[a.tolist() for a in layer] for layer in attention],
            "logits": logits.tolist(),
            "probabilities": torch.softmax(logits, dim=0).tolist(),
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="directory with vocab.json and weights.json")
    parser.add_argument("--vocab")
    parser.add_argument("--weights")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    parser.add_argument("--top-k", type=int, help="print only the top k, as nextword's tsv")
    parser.add_argument("--batch", type=int, default=1, help="phrases per forward pass (top-k)")
    parser.add_argument("--threads", type=int, help="torch threads")
    parser.add_argument("--timing", action="store_true",
                        help="report phrases, tokens and seconds of the prediction loop on stderr")
    parser.add_argument("phrase", nargs="*", help="phrase (none: one per line from stdin)")
    args = parser.parse_args()
    global DTYPE
    DTYPE = getattr(torch, args.dtype)
    if args.threads:
        torch.set_num_threads(args.threads)
    vocab = args.vocab or args.model + "/vocab.json"
    if args.weights:
        weights = args.weights
    else:  # as nextword --model DIR: safetensors when it is there
        binary = args.model + "/weights.safetensors"
        weights = binary if os.path.exists(binary) else args.model + "/weights.json"
    model = Model(vocab, weights)
    phrases = [" ".join(args.phrase)] if args.phrase else [l.rstrip("\n") for l in sys.stdin]
    if args.top_k is None:
        for phrase in phrases:
            print(json.dumps(model.record(phrase)), flush=True)
        return
    start, tokens, out = time.perf_counter(), 0, []
    with torch.no_grad():
        for i in range(0, len(phrases), args.batch):
            batch = [model.encode(p)[1] for p in phrases[i:i + args.batch]]
            tokens += sum(len(ids) for ids in batch)
            for logits in model.forward_batch(batch):
                out.append(model.top_k_line(logits, args.top_k))
    seconds = time.perf_counter() - start
    sys.stdout.write("\n".join(out) + "\n")
    if args.timing:
        print(json.dumps({"phrases": len(phrases), "tokens": tokens, "seconds": seconds}),
              file=sys.stderr)


if __name__ == "__main__":
    main()
