"""Random format-v1 models that together exercise every config flag.

Used by make_fixtures.py (committed fixtures) and live_parity.py (fresh
models compared against the built binary in CI). Standard library only, so
that writing models needs no torch.
"""
import base64
import json
import os
import random
import struct

WORDS = ["the", "a", "cat", "dog", "sat", "on", "mat", "and", "ran", "once", "upon",
         "time", "there", "was", "little", "girl", "Big", "Lily", "don't", "well-known",
         "café", "Émile", ",", ".", "!", "?", "'", "—"]
UNKNOWN = ["zebra", "quokka", "Xylophone"]
FLAGS = {
    "positional": ["none", "learned", "sinusoidal"],
    "norm": ["none", "layernorm"],
    "activation": ["gelu", "relu"],
    "residual": [True, False],
    "causal": [True, False],
    "scale": ["sqrt_dk", "none"],
    "tied_classifier": [True, False],
}
# The modern options (rope, rmsnorm, swiglu), drawn only for models made with modern=True, so
# that the seeds of the committed fixtures give the models they always gave.
MODERN_FLAGS = {
    "positional": ["rope", "rope", "learned", "none"],
    "norm": ["rmsnorm", "rmsnorm", "layernorm", "none"],
    "activation": ["swiglu", "swiglu", "gelu", "relu"],
}


def f32(x):
    """x rounded to float32, as the model file stores it."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def tensor_shapes(c):
    d, V, h = c["d_model"], c["vocab_size"], c["n_heads"]
    kv = c.get("n_kv_heads", h)  # key/value heads (grouped-query attention)
    qk, k, v, heads = h * c["d_k"], kv * c["d_k"], kv * c["d_v"], h * c["d_v"]
    shapes = {"embedding": [V, d]}
    if c["positional"] == "learned":
        shapes["position"] = [c["max_len"], d]
    optional = set()
    for l in range(c["n_layers"]):
        p = "layers.%d." % l
        if c["norm"] != "none":
            shapes[p + "norm1.weight"] = [d]
        if c["norm"] == "layernorm":
            shapes[p + "norm1.bias"] = [d]
        shapes.update({p + "attn.w_q": [d, qk], p + "attn.w_k": [d, k],
                       p + "attn.w_v": [d, v], p + "attn.w_o": [heads, d]})
        for name, shape in (("b_q", [qk]), ("b_k", [k]), ("b_v", [v]), ("b_o", [d])):
            shapes[p + "attn." + name] = shape
            optional.add(p + "attn." + name)
        if c["d_ff"] > 0:
            if c["norm"] != "none":
                shapes[p + "norm2.weight"] = [d]
            if c["norm"] == "layernorm":
                shapes[p + "norm2.bias"] = [d]
            ffn = [("w_in", [d, c["d_ff"]]), ("b_in", [c["d_ff"]]), ("w_out", [c["d_ff"], d]),
                   ("b_out", [d])]
            if c["activation"] == "swiglu":
                ffn += [("w_gate", [d, c["d_ff"]]), ("b_gate", [c["d_ff"]])]
            for name, shape in ffn:
                shapes[p + "ffn." + name] = shape
                # Feed-forward biases are optional with the modern options.
                if name.startswith("b_") and c.get("_modern"):
                    optional.add(p + "ffn." + name)
    if c["norm"] != "none":
        shapes["final_norm.weight"] = [d]
    if c["norm"] == "layernorm":
        shapes["final_norm.bias"] = [d]
    cutoffs = c.get("adaptive_cutoffs")
    head = cutoffs[0] if cutoffs else V
    if not c["tied_classifier"]:
        shapes["classifier"] = [head, d]
    shapes["classifier_bias"] = [head + len(cutoffs or [])]
    optional.add("classifier_bias")
    for i, start in enumerate(cutoffs or []):
        end = cutoffs[i + 1] if i + 1 < len(cutoffs) else V
        width = int(d // (c.get("adaptive_div", 4.0) ** (i + 1)))
        if i == 0:
            shapes["clusters"] = [len(cutoffs), d]
        shapes["cluster.%d.proj" % i] = [width, d]
        shapes["cluster.%d.words" % i] = [end - start, width]
    return shapes, optional


def random_model(seed, modern=False, adaptive=False, grouped=False):
    """(config, tensors {name: (shape, flat values)}, words, phrases) for a seed;
    modern: the options of MODERN_FLAGS (rope, rmsnorm, swiglu, optional
    feed-forward biases) are drawn too; adaptive: an adaptive softmax of one
    to three clusters; grouped: grouped-query attention, 2 to 6 query heads
    sharing fewer key/value heads (as llama2.c's models have)."""
    rng = random.Random(seed)
    n_layers = seed % 4
    words = ["<unk>"] + rng.sample(WORDS, rng.randint(10, len(WORDS)))
    c = {
        "vocab_size": 0, "d_model": rng.choice([4, 6, 8, 12]), "n_layers": n_layers,
        "n_heads": rng.randint(1, 3), "d_k": rng.randint(2, 6), "d_v": rng.randint(2, 6),
        "d_ff": rng.choice([0, 0, 5, 8, 16]), "max_len": rng.randint(4, 12),
        "norm_eps": rng.choice([1e-5, 1e-3, 0.1]),
        "tokenizer": {"lowercase": rng.random() < 0.7, "split_punctuation": rng.random() < 0.8},
    }
    for flag, values in FLAGS.items():
        c[flag] = rng.choice(values)
    if rng.random() < 0.3:
        c["unk_token"] = "[UNK]"
        words[0] = "[UNK]"
    if rng.random() < 0.4:
        c["bos_token"] = "<s>"
        words.append("<s>")
    c["vocab_size"] = len(words)
    if modern:
        extra = random.Random(seed * 104729 + 17)
        for flag, values in MODERN_FLAGS.items():
            c[flag] = extra.choice(values)
        if extra.random() < 0.4:  # all of them together, as in Llama
            c.update(positional="rope", norm="rmsnorm", activation="swiglu",
                     d_ff=c["d_ff"] or 6)
        if c["positional"] == "rope":
            c["d_k"] += c["d_k"] % 2  # rotary positions turn pairs of columns
            if extra.random() < 0.5:
                c["rope_theta"] = extra.choice([10.0, 100.0, 500000.0])
        # The pairing and frequency factors of rotary positions, from a stream
        # of their own too.
        rotary = random.Random(seed * 7877 + 3)
        if c["positional"] == "rope" and rotary.random() < 0.5:
            c["rope_pairs"] = "halves"
        if c["positional"] == "rope" and rotary.random() < 0.4:
            c["rope_factors"] = [f32(rotary.choice([1.0, 0.5, 2.0, 8.0]) * rotary.uniform(0.9, 1.1))
                                 for _ in range(c["d_k"] // 2)]
        # Squared relu in place of relu or gelu, from a stream of
        # its own, so that no other draw changes.
        if c["activation"] in ("relu", "gelu") and random.Random(seed * 15485863 + 49).random() < 0.6:
            c["activation"] = "relu2"
        # QK-norm, from a stream of its own too.
        if random.Random(seed * 104723 + 49).random() < 0.5:
            c["qk_norm"] = True
        c["_modern"] = True
    if grouped and n_layers > 0:
        extra = random.Random(seed * 7919 + 5)
        c["n_heads"] = extra.choice([2, 4, 6])
        c["n_kv_heads"] = extra.choice([kv for kv in (1, 2, 3) if c["n_heads"] % kv == 0 and
                                        kv < c["n_heads"]])
    if adaptive:
        extra = random.Random(seed * 15485863 + 29)
        n = extra.randint(1, min(3, len(words) - 1))
        c["adaptive_cutoffs"] = sorted(extra.sample(range(1, len(words)), n))
        divs = [x for x in (1.0, 1.5, 2.0, 4.0) if c["d_model"] // x ** n >= 1]
        c["adaptive_div"] = extra.choice(divs)
    shapes, optional = tensor_shapes(c)
    c.pop("_modern", None)
    tensors = {}
    for name, shape in shapes.items():
        if name in optional and rng.random() < 0.4:
            continue
        n = 1
        for dim in shape:
            n *= dim
        if name.endswith("norm1.weight") or name.endswith("norm2.weight") or name == "final_norm.weight":
            values = [f32(1.0 + rng.gauss(0, 0.2)) for _ in range(n)]
        else:
            values = [f32(rng.gauss(0, 0.6)) for _ in range(n)]
        tensors[name] = (shape, values)

    known = [w for w in words if w not in ("<unk>", "[UNK]", "<s>")]
    # A phrase starts with a word that every tokenizer setting keeps as it is.
    plain = [w for w in known if w.isascii() and w.isalpha() and w.islower()]
    phrases = []
    for i in range(5):
        length = rng.randint(1, c["max_len"] + 4 if i == 4 else c["max_len"])
        picked = [rng.choice(plain)] + [rng.choice(known + UNKNOWN) for _ in range(length - 1)]
        if i == 1:
            picked = picked[:1] + [w.upper() if rng.random() < 0.5 else w for w in picked[1:]]
        phrase = " ".join(picked)
        if i == 2:
            phrase = phrase.replace("'", "\u2019").replace(" ,", ",").replace(" .", ".")
        phrases.append(phrase)
    return c, tensors, words, phrases


def write_model(directory, seed, config, tensors, words):
    """Writes vocab.json and weights.json, varying the JSON forms by seed."""
    rng = random.Random(seed * 7919 + 1)
    os.makedirs(directory, exist_ok=True)
    if rng.random() < 0.5:
        vocab = words
    else:
        order = list(range(len(words)))
        rng.shuffle(order)
        vocab = {words[i]: i for i in order}
    with open(os.path.join(directory, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=rng.random() < 0.5)
    out = {}
    for name, (shape, values) in tensors.items():
        style = rng.choice(["flat", "nested", "b64"])
        if style == "b64":
            raw = struct.pack("<%df" % len(values), *values)
            out[name] = {"shape": shape, "dtype": "f32", "b64": base64.b64encode(raw).decode()}
        elif style == "nested" and len(shape) == 2:
            cols = shape[1]
            out[name] = {"shape": shape,
                         "data": [values[r * cols:(r + 1) * cols] for r in range(shape[0])]}
        else:
            out[name] = {"shape": shape, "data": values}
    root = {"format": "nextword", "version": 1, "config": config, "tensors": out}
    with open(os.path.join(directory, "weights.json"), "w", encoding="utf-8") as f:
        json.dump(root, f)


def describe(config):
    c = config
    parts = ["L%d" % c["n_layers"], "h%d" % c["n_heads"]]
    if "n_kv_heads" in c:
        parts.append("kv%d" % c["n_kv_heads"])
    parts += ["dk%d" % c["d_k"], "dv%d" % c["d_v"],
             "ff%d%s" % (c["d_ff"], c["activation"][0] if c["d_ff"] else ""), c["positional"][:4],
             c["norm"][:4], "res" if c["residual"] else "nores",
             "causal" if c["causal"] else "bidir", "s" + c["scale"][:4],
             "tied" if c["tied_classifier"] else "untied"]
    if c.get("adaptive_cutoffs"):
        parts.append("adaptive%s" % ",".join(map(str, c["adaptive_cutoffs"])))
    if "bos_token" in c:
        parts.append("bos")
    if c.get("qk_norm"):
        parts.append("qknorm")
    return "-".join(parts)
