#!/usr/bin/env python3
"""Independent PyTorch reference for nextword's inspection commands: score,
lens, trace and attribute (their contracts). Float64 from the
model's float32 weights; tokenization, weight reading and the format-v1
config come from nextword_ref.py, the forward pass here is its own, one
layer at a time, keeping every intermediate under its TransformerLens name.

    /usr/bin/python3 tests/reference/inspect_ref.py score --model DIR "once upon a time"
    /usr/bin/python3 tests/reference/inspect_ref.py score --model DIR --document FILE
    /usr/bin/python3 tests/reference/inspect_ref.py lens --model DIR [-k 5] [--mid]
        [--all-positions] PHRASE
    /usr/bin/python3 tests/reference/inspect_ref.py trace --model DIR [--only GLOB]... PHRASE
    /usr/bin/python3 tests/reference/inspect_ref.py attribute --model DIR [--word W] PHRASE

(no phrase: one per line from stdin) prints one JSON record per phrase in the
binary's layout, with float64 values (masked attention scores are null).
inspect_parity.py uses the functions below to compare against the binary.
"""
import argparse
import fnmatch
import json
import math
import os
import sys
from collections import OrderedDict

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nextword_ref  # noqa: E402
import spelling_ref  # noqa: E402
from nextword_ref import Model, tokenize  # noqa: E402

DTYPE = torch.float64


def load(model_dir=None, vocab=None, weights=None):
    """A Model as `nextword --model DIR` reads it (safetensors when there)."""
    if model_dir is not None:
        vocab = os.path.join(model_dir, "vocab.json")
        binary = os.path.join(model_dir, "weights.safetensors")
        weights = binary if os.path.exists(binary) else os.path.join(model_dir, "weights.json")
    return Model(vocab, weights)


def specials(model):
    c = model.config
    out = {model.ids[c["unk_token"]]}
    if c["bos_token"]:
        out.add(model.ids[c["bos_token"]])
    return out


# ---------------------------------------------------------------- forward pass

def layer_norm(model, x, prefix):
    """(x - mean) / sqrt(var + eps) * weight + bias per row, biased variance."""
    c, W = model.config, model.tensors
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    normalized = (x - mean) / torch.sqrt(var + c["norm_eps"])
    return normalized * W[prefix + ".weight"] + W[prefix + ".bias"]


def rms_norm(model, x, prefix):
    c, W = model.config, model.tensors
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + c["norm_eps"]) * W[prefix + ".weight"]


def norm_of(model, x, prefix):
    """The config's norm of rows x, or x itself without one."""
    norm = model.config["norm"]
    if norm == "layernorm":
        return layer_norm(model, x, prefix)
    return rms_norm(model, x, prefix) if norm == "rmsnorm" else x


def rotary(model, x):
    """Rotary positions on x [T, h, d_k]: pair i of each head (columns (2i,
    2i+1), or (i, i + d_k/2) with "rope_pairs": "halves") turns by
    p * rope_theta^(-2i/d_k) / rope_factors[i], written out element by element."""
    c = model.config
    T, h, dk = x.shape
    halves = c.get("rope_pairs") == "halves"
    factors = c.get("rope_factors") or [1.0] * (dk // 2)
    out = x.clone()
    for p in range(T):
        for i in range(dk // 2):
            angle = p * math.pow(c.get("rope_theta", 10000.0), -2.0 * i / dk) / factors[i]
            cos, sin = math.cos(angle), math.sin(angle)
            first, second = (i, i + dk // 2) if halves else (2 * i, 2 * i + 1)
            a, b = x[p, :, first], x[p, :, second]
            out[p, :, first] = a * cos - b * sin
            out[p, :, second] = a * sin + b * cos
    return out


def sinusoids(T, d):
    out = torch.zeros(T, d, dtype=DTYPE)
    for p in range(T):
        for j in range(d):
            i2 = j - j % 2  # 2i
            angle = p / math.pow(10000.0, i2 / d)
            out[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return out


def classifier(model):
    W = model.tensors
    return W["embedding"] if model.config["tied_classifier"] else W["classifier"]


def unembed(model, x):
    """logits of residual rows x [.., d]: final_norm(x) C^T + c."""
    c, W = model.config, model.tensors
    z = norm_of(model, x, "final_norm")
    if c["adaptive_cutoffs"]:  # every word's ln p, from torch's adaptive softmax
        return model.classify(z)
    logits = z @ classifier(model).T
    return logits + W["classifier_bias"] if "classifier_bias" in W else logits


def readout(model, target):
    """(row [d], bias): the target's score is final_norm(x) . row + bias. With
    an adaptive softmax its head row, or its cluster's head row plus
    proj^T words[target], and the bias of that head entry; ln p is the score
    less the log-normalizers, which the constant takes."""
    c, W = model.config, model.tensors
    cutoffs = c["adaptive_cutoffs"]
    if not cutoffs or target < cutoffs[0]:
        bias = W["classifier_bias"][target].item() if "classifier_bias" in W else 0.0
        return classifier(model)[target], bias
    i = max(k for k, start in enumerate(cutoffs) if start <= target)
    row = W["clusters"][i] + W["cluster.%d.proj" % i].T @ W["cluster.%d.words" % i][
        target - cutoffs[i]]
    head = cutoffs[0] + i
    return row, W["classifier_bias"][head].item() if "classifier_bias" in W else 0.0


def run(model, ids):
    """Every activation of one forward pass over ids, TransformerLens names in
    the contract's order: OrderedDict name -> tensor; "logits" is [T, V]
    here (every position; the contract's is the last row)."""
    c, W = model.config, model.tensors
    T, d, h, dk, dv = len(ids), c["d_model"], c["n_heads"], c["d_k"], c["d_v"]
    normed = c["norm"] != "none"
    acts = OrderedDict()

    def linear(x, w, b):
        y = x @ W[w]
        return y + W[b] if b in W else y

    acts["hook_embed"] = W["embedding"][torch.tensor(ids, dtype=torch.long)]
    x = acts["hook_embed"]
    if c["positional"] in ("learned", "sinusoidal"):
        acts["hook_pos_embed"] = (W["position"][:T] if c["positional"] == "learned"
                                  else sinusoids(T, d))
        x = x + acts["hook_pos_embed"]
    s = 1.0 / math.sqrt(dk) if c["scale"] == "sqrt_dk" else 1.0
    for l in range(c["n_layers"]):
        p, n = "layers.%d." % l, "blocks.%d." % l
        acts[n + "hook_resid_pre"] = x
        u = x
        if normed:
            u = acts[n + "ln1.hook_normalized"] = norm_of(model, x, p + "norm1")
        q = acts[n + "attn.hook_q"] = linear(u, p + "attn.w_q", p + "attn.b_q").reshape(T, h, dk)
        kv = c.get("n_kv_heads") or h  # key/value heads (fewer with grouped-query attention)
        k = acts[n + "attn.hook_k"] = linear(u, p + "attn.w_k", p + "attn.b_k").reshape(T, kv, dk)
        if c.get("qk_norm"):  # QK-norm: each head over its root mean square
            eps = c.get("norm_eps", 1e-5)
            q = q / torch.sqrt(q.pow(2).mean(dim=-1, keepdim=True) + eps)
            k = k / torch.sqrt(k.pow(2).mean(dim=-1, keepdim=True) + eps)
            if c["positional"] != "rope":
                acts[n + "attn.hook_normed_q"], acts[n + "attn.hook_normed_k"] = q, k
        if c["positional"] == "rope":
            q = acts[n + "attn.hook_rot_q"] = rotary(model, q)
            k = acts[n + "attn.hook_rot_k"] = rotary(model, k)
        v = acts[n + "attn.hook_v"] = linear(u, p + "attn.w_v", p + "attn.b_v").reshape(T, kv, dv)
        # Query head i reads kv head i // (h // kv).
        k_of_head, v_of_head = (x.repeat_interleave(h // kv, dim=1) for x in (k, v))
        scores = torch.einsum("qhe,khe->hqk", q, k_of_head) * s
        if c["causal"]:
            future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
            scores = scores.masked_fill(future, float("-inf"))
        acts[n + "attn.hook_attn_scores"] = scores
        pattern = acts[n + "attn.hook_pattern"] = torch.softmax(scores, dim=-1)
        z = acts[n + "attn.hook_z"] = torch.einsum("hqk,khe->qhe", pattern, v_of_head)
        attn_out = acts[n + "hook_attn_out"] = linear(z.reshape(T, h * dv), p + "attn.w_o",
                                                      p + "attn.b_o")
        mid = acts[n + "hook_resid_mid"] = x + attn_out if c["residual"] else attn_out
        x = mid
        if c["d_ff"] > 0:
            u2 = mid
            if normed:
                u2 = acts[n + "ln2.hook_normalized"] = norm_of(model, mid, p + "norm2")
            if c["activation"] == "swiglu":
                gate = acts[n + "mlp.hook_pre"] = linear(u2, p + "ffn.w_gate", p + "ffn.b_gate")
                up = acts[n + "mlp.hook_pre_linear"] = linear(u2, p + "ffn.w_in", p + "ffn.b_in")
                post = gate / (1 + torch.exp(-gate)) * up
            elif c["activation"] == "gelu":
                pre = acts[n + "mlp.hook_pre"] = linear(u2, p + "ffn.w_in", p + "ffn.b_in")
                u = math.sqrt(2 / math.pi) * (pre + 0.044715 * pre ** 3)
                post = 0.5 * pre * (1 + torch.tanh(u))
            else:
                pre = acts[n + "mlp.hook_pre"] = linear(u2, p + "ffn.w_in", p + "ffn.b_in")
                post = torch.clamp(pre, min=0)
                if c["activation"] == "relu2":  # squared relu
                    post = post * post
            acts[n + "mlp.hook_post"] = post
            mlp_out = acts[n + "hook_mlp_out"] = linear(post, p + "ffn.w_out", p + "ffn.b_out")
            x = mid + mlp_out if c["residual"] else mlp_out
        acts[n + "hook_resid_post"] = x
    if normed:
        acts["ln_final.hook_normalized"] = norm_of(model, x, "final_norm")
    acts["logits"] = unembed(model, x)
    acts["_resid_final"] = x  # not a contract name: the residual the classifier reads
    return acts


def float32_copy(model):
    """The model with float32 tensors: run under float32() it is torch's own
    float32 forward, a measure of how much float32 alone loses on an input."""
    import copy
    m = copy.copy(model)
    m.tensors = {name: t.to(torch.float32) for name, t in model.tensors.items()}
    return m


class float32:
    """with float32(): sinusoids in float32 too (everything else follows the tensors)."""
    def __enter__(self):
        global DTYPE
        self.saved, DTYPE = DTYPE, torch.float32

    def __exit__(self, *exc):
        global DTYPE
        DTYPE = self.saved


def final_logits(model, ids):
    """Logits [V] of the last position of one forward pass over ids."""
    return run(model, ids)["logits"][-1]


def self_check(model, phrase="once upon a time"):
    """This forward pass against nextword_ref's forward_all (an assertion)."""
    ids = model.encode(phrase)[1]
    mine = run(model, ids)["logits"]
    theirs = nextword_ref.Model.forward_all(model, ids)[0]
    assert torch.allclose(mine, theirs, rtol=1e-9, atol=1e-9), (mine - theirs).abs().max()


# ---------------------------------------------------------------- ranking

def ranks_before(logits, a, b):
    return logits[a] > logits[b] or (logits[a] == logits[b] and a < b)


def rank(model, logits, target):
    """1 + the non-special words ranking before target (the contract's rule)."""
    values = logits.tolist()
    special = specials(model)
    return 1 + sum(1 for j in range(len(values))
                   if j not in special and j != target and ranks_before(values, j, target))


def top(model, logits, k):
    """The k best non-special ids, best first."""
    values = logits.tolist()
    special = specials(model)
    ids = [j for j in range(len(values)) if j not in special]
    ids.sort(key=lambda j: (-values[j], j))
    return ids[:k]


# ---------------------------------------------------------------- score

def line_ids(model, text):
    """Tokens and ids of a line without truncation, bos first when the model has one."""
    c = model.config
    tokens = tokenize(text, c["tokenizer"]["lowercase"], c["tokenizer"]["split_punctuation"])
    bos = c["bos_token"]
    ids, unknown = [], []
    for t in tokens:
        known = t in model.ids and t not in (c["unk_token"], bos)
        ids.append(model.ids[t] if known else model.ids[c["unk_token"]])
        unknown.append(not known)
    if bos:
        tokens, ids, unknown = [bos] + tokens, [model.ids[bos]] + ids, [False] + unknown
    return tokens, ids, unknown


def document_stride(model, stride=None):
    """The stride of score --document and eval: half of max_len by default,
    at most max_len; 1 for a model that is not causal."""
    L = model.config["max_len"]
    if not model.config["causal"]:
        return 1
    return min(max(1, L // 2 if stride is None else stride), L)


def context_logits(model, ids, targets, stride=1):
    """{i: logits [V] predicting ids[i] from ids[max(0, i - max_len) .. i-1]}.
    Each context is its own forward pass; for a causal model the contexts that
    all start at 0 come from one pass (row i-1 sees exactly ids[0..i-1]).
    With a stride S > 1 (causal), a target i past max_len is read in the
    window that starts at the first multiple of S from which it is at most
    max_len tokens on: ids[S ceil((i - L) / S) .. i-1]."""
    L = model.config["max_len"]
    out = {}
    prefix = [i for i in targets if i <= L]
    if model.config["causal"] and prefix:
        all_rows = run(model, ids[:max(prefix)])["logits"]
        for i in prefix:
            out[i] = all_rows[i - 1]
    if model.config["causal"] and stride > 1:
        windows = {}
        for i in targets:
            if i not in out:
                windows.setdefault(stride * -(-(i - L) // stride), []).append(i)
        for start, rows in windows.items():
            logits = run(model, ids[start:max(rows)])["logits"]
            for i in rows:
                out[i] = logits[i - 1 - start]
    for i in targets:
        if i not in out:
            out[i] = final_logits(model, ids[max(0, i - L):i])
    return out


def perplexity(logprob, n):
    """exp(-logprob / n); inf past the largest double, as C++'s exp gives."""
    try:
        return math.exp(-logprob / n)
    except OverflowError:
        return float("inf")


def score_stream(model, tokens, ids, unknown, scored, stride=1):
    """The record's words, logprob, perplexity and oov for positions `scored`,
    with each word's logits kept under "_logits" (for tolerance checks). A
    word outside the vocabulary (not the unk token itself) scores
    ln p(unk) + ln q(word), spelling_ref's q."""
    logits = context_logits(model, ids, scored, stride)
    words, total = [], 0.0
    spelled = None
    for i in scored:
        lp = torch.log_softmax(logits[i], dim=-1)[ids[i]].item()
        if unknown[i] and tokens[i] != model.config["unk_token"]:
            spelled = spelled or spelling_ref.UnknownWords(model)
            lp += spelled.log_q(tokens[i])
        total += lp
        words.append({"word": tokens[i], "id": ids[i], "logprob": lp,
                      "rank": rank(model, logits[i], ids[i]), "unknown": unknown[i],
                      "_logits": logits[i], "_position": i})
    return {"words": words, "logprob": total,
            "perplexity": perplexity(total, len(words)) if words else None,
            "oov": sum(1 for w in words if w["unknown"])}


def score_line(model, text):
    tokens, ids, unknown = line_ids(model, text)
    record = {"text": text, "tokens": tokens, "ids": ids}
    record.update(score_stream(model, tokens, ids, unknown, list(range(1, len(ids)))))
    return record


def read_documents(path, model):
    """Documents as nextword eval reads them: lines of a file; a document ends
    at a blank line, a line `<|endoftext|>` and the end of the file; empty
    documents are dropped."""
    c = model.config
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="surrogateescape")
    documents, current = [], []
    for line in text.split("\n"):
        content = line.strip(" \t\r\n\v\f")
        if not content or content == "<|endoftext|>":
            if current:
                documents.append(current)
            current = []
        else:
            current.extend(tokenize(line, c["tokenizer"]["lowercase"],
                                    c["tokenizer"]["split_punctuation"]))
    if current:
        documents.append(current)
    return documents


def score_document(model, path, stride=None):
    """One record for a file: each document after a bos, back to back;
    contexts slide across document ends, in windows `stride` apart
    (document_stride); bos tokens are not scored."""
    c = model.config
    bos, unk = c["bos_token"], model.ids[c["unk_token"]]
    tokens, ids, unknown, is_bos = [], [], [], []
    for document in read_documents(path, model):
        if bos:
            tokens.append(bos)
            ids.append(model.ids[bos])
            unknown.append(False)
            is_bos.append(True)
        for t in document:
            known = t in model.ids and t not in (c["unk_token"], bos)
            tokens.append(t)
            ids.append(model.ids[t] if known else unk)
            unknown.append(not known)
            is_bos.append(False)
    record = {"document": path, "tokens": tokens, "ids": ids}
    scored = [i for i in range(1, len(ids)) if not is_bos[i]]
    record.update(score_stream(model, tokens, ids, unknown, scored,
                               document_stride(model, stride)))
    return record


# ---------------------------------------------------------------- lens

def lens_steps(model, acts, mid):
    """[(label, residual [T, d])]: "embed", then per layer "l.mid" (with mid) and l."""
    steps = [("embed", acts["hook_embed"] + acts.get("hook_pos_embed", 0))]
    for l in range(model.config["n_layers"]):
        if mid:
            steps.append(("%d.mid" % (l + 1), acts["blocks.%d.hook_resid_mid" % l]))
        steps.append((l + 1, acts["blocks.%d.hook_resid_post" % l]))
    return steps


def lens(model, phrase, k=5, mid=False, all_positions=False):
    """The lens record; each layer entry keeps its logits under "_logits"."""
    tokens, ids, unknown, truncated = model.encode(phrase)
    acts = run(model, ids)
    steps = [(label, unembed(model, x)) for label, x in lens_steps(model, acts, mid)]
    layers = []
    for position in (range(len(ids)) if all_positions else [len(ids) - 1]):
        final_id = top(model, steps[-1][1][position], 1)[0]
        for label, logits in steps:
            row = logits[position]
            probabilities = torch.softmax(row, dim=-1)
            layers.append({
                "position": position, "layer": label,
                "top": [{"word": model.words[i], "probability": probabilities[i].item()}
                        for i in top(model, row, k)],
                "final_word_rank": rank(model, row, final_id),
                "final_word_probability": probabilities[final_id].item(),
                "_logits": row})
    return {"phrase": phrase, "tokens": tokens, "ids": ids, "unknown": unknown,
            "truncated": truncated, "layers": layers}


# ---------------------------------------------------------------- trace

def trace(model, phrase, only=()):
    tokens, ids, _, _ = model.encode(phrase)
    acts = run(model, ids)
    out = OrderedDict()
    for name, value in acts.items():
        if name.startswith("_"):
            continue
        if name == "logits":
            value = value[-1]
        if only and not any(fnmatch.fnmatchcase(name, g) for g in only):
            continue
        out[name] = {"shape": list(value.shape),
                     "data": [None if v == float("-inf") else v for v in value.flatten().tolist()]}
    return {"phrase": phrase, "tokens": tokens, "ids": ids, "activations": out}


# ---------------------------------------------------------------- attribute

def attribution_parts(model, acts):
    """[(name, vector [d])] summing to the last position's final residual."""
    c, W = model.config, model.tensors
    h, dv, L = c["n_heads"], c["d_v"], c["n_layers"]

    def attn_parts(l):
        n, p = "blocks.%d." % l, "layers.%d." % l
        z = acts[n + "attn.hook_z"][-1]
        wo = W[p + "attn.w_o"]
        parts = [("%d.attn.%d" % (l + 1, H + 1), z[H] @ wo[H * dv:(H + 1) * dv]) for H in range(h)]
        if p + "attn.b_o" in W:
            parts.append(("%d.attn.bias" % (l + 1), W[p + "attn.b_o"]))
        return parts

    def mlp_part(l):
        if c["d_ff"] == 0:
            return []
        return [("%d.mlp" % (l + 1), acts["blocks.%d.hook_mlp_out" % l][-1])]

    if L == 0 or c["residual"]:
        parts = [("embed", acts["hook_embed"][-1])]
        if "hook_pos_embed" in acts:
            parts.append(("pos_embed", acts["hook_pos_embed"][-1]))
        if L > 0:
            for l in range(L):
                parts += attn_parts(l) + mlp_part(l)
    elif c["d_ff"] > 0:
        parts = mlp_part(L - 1)
    else:
        parts = attn_parts(L - 1)
    return parts


def attribute(model, phrase, word=None):
    """The attribute record (word: the top prediction when None); "_logits"
    keeps the last position's logits."""
    c, W = model.config, model.tensors
    tokens, ids, _, _ = model.encode(phrase)
    acts = run(model, ids)
    logits = acts["logits"][-1]
    target = top(model, logits, 1)[0] if word is None else model.ids[word]
    x = acts["_resid_final"][-1]
    parts = attribution_parts(model, acts)
    total = sum(v for _, v in parts)
    assert torch.allclose(total, x, rtol=1e-9, atol=1e-9), "parts do not sum to the residual"
    row, bias = readout(model, target)
    if c["norm"] == "layernorm":
        mean = x.mean()
        sigma = torch.sqrt(((x - mean) ** 2).mean() + c["norm_eps"])
        w = W["final_norm.weight"]
        values = [(name, (((p - p.mean()) / sigma * w) @ row).item()) for name, p in parts]
        constant = (W["final_norm.bias"] @ row).item()
    elif c["norm"] == "rmsnorm":
        sigma = torch.sqrt((x * x).mean() + c["norm_eps"])
        w = W["final_norm.weight"]
        values = [(name, ((p / sigma * w) @ row).item()) for name, p in parts]
        constant = 0.0
    else:
        values = [(name, (p @ row).item()) for name, p in parts]
        constant = 0.0
    constant += bias
    logit = logits[target].item()
    if c["adaptive_cutoffs"]:
        score = (norm_of(model, x, "final_norm") @ row).item() + bias
        constant += logit - score
    assert abs(sum(v for _, v in values) + constant - logit) <= 1e-9 * max(1.0, abs(logit))
    return {"phrase": phrase, "tokens": tokens, "ids": ids, "word": model.words[target],
            "id": target, "logit": logit,
            "parts": [{"name": name, "value": v} for name, v in values],
            "constant": constant, "_logits": logits}


# ---------------------------------------------------------------- command line

def public(record):
    """The record without the reference's private "_" fields."""
    if isinstance(record, dict):
        return {k: public(v) for k, v in record.items() if not k.startswith("_")}
    if isinstance(record, list):
        return [public(v) for v in record]
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["score", "lens", "trace", "attribute"])
    parser.add_argument("--model", "-m", help="directory with vocab.json and weights")
    parser.add_argument("--vocab")
    parser.add_argument("--weights")
    parser.add_argument("-k", "--top-k", type=int, default=5)
    parser.add_argument("--mid", action="store_true")
    parser.add_argument("--all-positions", action="store_true")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--word")
    parser.add_argument("--document")
    parser.add_argument("--stride", type=int)
    parser.add_argument("phrase", nargs="*")
    args = parser.parse_intermixed_args()
    model = load(args.model, args.vocab, args.weights)
    if args.document:
        print(json.dumps(public(score_document(model, args.document, args.stride))))
        return
    phrases = [" ".join(args.phrase)] if args.phrase else [l.rstrip("\n") for l in sys.stdin]
    with torch.no_grad():
        for phrase in phrases:
            if args.command == "score":
                record = score_line(model, phrase)
            elif args.command == "lens":
                record = lens(model, phrase, args.top_k, args.mid, args.all_positions)
            elif args.command == "trace":
                record = trace(model, phrase, args.only)
            else:
                record = attribute(model, phrase, args.word)
            print(json.dumps(public(record)), flush=True)


if __name__ == "__main__":
    main()
