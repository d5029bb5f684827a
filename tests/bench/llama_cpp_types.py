#!/usr/bin/env python3
"""nextword against llama.cpp on random llama, qwen2 and gpt2 GGUF files in
each tensor type nextword reads: the next pieces' log-probabilities, the
greedy pieces and the perplexity, side by side in one run.

    python3 tests/bench/llama_cpp_types.py --nextword build/nextword
        --llama-cpp LLAMA_CPP/build/bin [--models ../shared/models]
        [--corpus ../shared/corpus] [--archs llama,qwen2,gpt2]
        [--types F32,F16,BF16,Q8_0,Q8_0-quantize] [--workdir DIR] [--json OUT]

llama.cpp is not part of this repository: its programs (llama-server,
llama-cli, llama-perplexity, llama-tokenize, llama-quantize in the build
folder --llama-cpp names) are only run, with 2 threads. Never in CI.

The models, written by the tests' GGUF writer (tests/reference/gguf_writer.py)
with random weights: d_model 256, 4 layers, 8 heads, d_ff 768 (gpt2: 1024),
context 1024:
  - llama: 4 key/value heads, its own `output`, Llama 3's rope_freqs, with
    the 32,000 pieces of ggml-vocab-llama-spm.gguf (SentencePiece);
  - qwen2: 2 key/value heads, biases on Q, K and V, rotary positions on the
    halves of each head, the output tied to the embedding, with GPT-2's
    50,257 byte-level BPE pieces under the pre-tokenizer "qwen2";
  - gpt2: 8 key/value heads, the fused attn_qkv, learned positions, GPT-2's
    vocabulary and pre-tokenizer;
each with every matrix (the embedding and the classifier too; gpt2's
positions stay F32) in F32, F16, BF16 or Q8_0 as our writer rounds them,
and "Q8_0-quantize": the F32 file through `llama-quantize ... Q8_0`.

For each file:
1. The next piece after each of PROMPTS: `nextword predict -f json -k 10`
   (its "pieces": ids and probabilities; its "ids": the prompt as it read
   it, BOS first where the vocabulary puts one) against llama-server's
   /completion with those same ids, n_predict 1 and n_probs 10 (the top 10
   of a softmax over the raw logits, as log-probabilities), with its
   default F16 key/value cache and again with -ctk f32 -ctv f32. The
   server's /tokenize of the prompt must give the same ids. Compared: the
   ten pieces, in order (two pieces whose log-probabilities are within
   the tolerance may change places) and the largest difference of the
   log-probabilities of the pieces in both lists.
2. Greedy text: 32 pieces from "Once upon a time", `nextword generate`
   against `llama-cli --temp 0` (llama_cpp_side_by_side.py's comparison).
3. Perplexity: llama_cpp_side_by_side.py's (llama-perplexity -c 256 on 16
   runs of TinyStories, nextword's `score` on the same tokens).
"""
import argparse
import json
import math
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import gguf_architectures as reference  # noqa: E402
import llama_cpp_side_by_side as side  # noqa: E402
from llama_cpp_side_by_side import w, read_gguf, run, random_floats  # noqa: E402
from gguf_reader import tensor_data  # noqa: E402

PROMPTS = ["Once upon a time", "The capital of France is", "def add(a, b):\n    return",
           "In 1969, 3 astronauts", "naïve café — 東京 🎉 and"]
GREEDY_PROMPT = "Once upon a time"
GREEDY_PIECES = 32
TOLERANCE = 2e-2  # log-probabilities, the bound against llama.cpp
D, LAYERS, HEADS, CONTEXT = 256, 4, 8, 1024
ARCHS = {  # name: (vocabulary file, pre-tokenizer in its place or None, kv heads, d_ff)
    "llama": ("ggml-vocab-llama-spm.gguf", None, 4, 768),
    "qwen2": ("ggml-vocab-gpt-2.gguf", "qwen2", 2, 768),
    "gpt2": ("ggml-vocab-gpt-2.gguf", None, 8, 1024),
}
TYPES = ["F32", "F16", "BF16", "Q8_0", "Q8_0-quantize"]


# ----------------------------------------------------------------------------
# The models.

def write_model(path, arch, vocab_dir, kind, twin=False, seed=7):
    """A random model of ARCHS[arch] at path, its matrices of type `kind`;
    with twin, the same values in F32: what the file of `kind` holds."""
    vocab_file, pre, kv_heads, ff = ARCHS[arch]
    keys, _ = read_gguf(os.path.join(vocab_dir, vocab_file))
    tokens = keys["tokenizer.ggml.tokens"]
    V, hs = len(tokens), D // HEADS
    rng = random.Random(seed)  # the same weights in every type
    g = w.Gguf()
    g.add("general.architecture", w.STRING, arch)
    g.add("general.name", w.STRING, "nextword random %s %s" % (arch, kind))
    for key, value in (("context_length", CONTEXT), ("embedding_length", D),
                       ("block_count", LAYERS), ("feed_forward_length", ff),
                       ("attention.head_count", HEADS), ("attention.head_count_kv", kv_heads)):
        g.add(arch + "." + key, w.U32, value)
    if arch == "gpt2":
        g.add("gpt2.attention.layer_norm_epsilon", w.F32, 1e-5)
    else:
        g.add(arch + ".rope.freq_base", w.F32, 10000.0 if arch == "llama" else 1000000.0)
        g.add(arch + ".rope.dimension_count", w.U32, hs)
        g.add(arch + ".attention.layer_norm_rms_epsilon", w.F32, 1e-6)
    side.add_vocabulary(g, keys, pre)
    ggml_type, stored, held = w.TYPES[kind]

    def matrix(name, rows, row_length, high=0x3D):
        data = random_floats(rng, rows * row_length, high)
        if kind != "F32":
            data = stored(struct.unpack("<%df" % (rows * row_length), data))
            if twin:
                data = w.floats_bytes(held(data))
        g.tensor(name, [row_length, rows], w.F32_TYPE if twin else ggml_type, data)

    def vector(name, values):
        g.tensor(name, [len(values)], w.F32_TYPE, w.floats_bytes(values))

    def gains(count):
        return [1.0 + rng.uniform(-0.2, 0.2) for _ in range(count)]

    def small(count, scale=0.05):
        return [rng.gauss(0, scale) for _ in range(count)]

    q, kv = HEADS * hs, kv_heads * hs
    matrix("token_embd.weight", V, D, high=0x3E)
    if arch == "gpt2":
        g.tensor("position_embd.weight", [D, CONTEXT], w.F32_TYPE,
                 random_floats(rng, CONTEXT * D, 0x3C))
    if arch == "llama":  # Llama 3's divisors of each pair's angle
        vector("rope_freqs.weight", [rng.choice([1.0, 1.0, 2.5, 8.0]) for _ in range(hs // 2)])
    for layer in range(LAYERS):
        p = "blk.%d." % layer
        vector(p + "attn_norm.weight", gains(D))
        if arch == "gpt2":
            vector(p + "attn_norm.bias", small(D))
            matrix(p + "attn_qkv.weight", q + 2 * kv, D)
            vector(p + "attn_qkv.bias", small(q + 2 * kv))
        else:
            matrix(p + "attn_q.weight", q, D)
            matrix(p + "attn_k.weight", kv, D)
            matrix(p + "attn_v.weight", kv, D)
            if arch == "qwen2":
                for part, width in (("q", q), ("k", kv), ("v", kv)):
                    vector(p + "attn_%s.bias" % part, small(width, 0.2))
        matrix(p + "attn_output.weight", D, q)
        vector(p + "ffn_norm.weight", gains(D))
        if arch == "gpt2":
            vector(p + "attn_output.bias", small(D))
            vector(p + "ffn_norm.bias", small(D))
            vector(p + "ffn_up.bias", small(ff))
            vector(p + "ffn_down.bias", small(D))
        else:
            matrix(p + "ffn_gate.weight", ff, D)
        matrix(p + "ffn_up.weight", ff, D)
        matrix(p + "ffn_down.weight", D, ff)
    vector("output_norm.weight", gains(D))
    if arch == "gpt2":
        vector("output_norm.bias", small(D))
    if arch != "qwen2":  # qwen2's classifier is its embedding, as Qwen2.5 0.5B's
        matrix("output.weight", V, D, high=0x3E)
    with open(path, "wb") as f:
        f.write(g.bytes())


def model_file(args, workdir, arch, kind, twin=False):
    """The file of arch in type kind (or its F32 twin), written unless
    --workdir keeps it."""
    path = os.path.join(workdir, "random-%s-%s%s.gguf" % (arch, kind, "-twin" if twin else ""))
    if os.path.exists(path) and args.workdir:
        return path
    vocab_dir = os.path.join(args.models, "gguf", "vocab")
    if kind == "Q8_0-quantize":
        source = model_file(args, workdir, arch, "F32")
        run([os.path.join(args.llama_cpp, "llama-quantize"), source, path, "Q8_0", side.THREADS])
    else:
        write_model(path, arch, vocab_dir, kind, twin)
    return path


def same_tensors(path, other):
    """Whether two GGUF files hold the same tensors: names, shapes, types
    and bytes (their metadata may differ)."""
    return tensor_data(path) == tensor_data(other)


# ----------------------------------------------------------------------------
# 1. The next pieces.

class Server:
    """llama-server on a free port of localhost, for one model."""

    def __init__(self, bins, model, extra=()):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen(
            [os.path.join(bins, "llama-server"), "-m", model, "-t", side.THREADS, "-c",
             str(CONTEXT), "-np", "1", "--host", "127.0.0.1", "--port", str(self.port),
             "--log-disable", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                self.post("/tokenize", {"content": "a"})
                return
            except OSError:
                if self.process.poll() is not None:
                    sys.exit("llama-server ended with %d on %s" % (self.process.returncode, model))
                time.sleep(0.1)
        sys.exit("llama-server did not answer on %s" % model)

    def post(self, path, body):
        request = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path),
                                         data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.loads(response.read())

    def close(self):
        self.process.terminate()
        self.process.wait()


def ours_next(args, model, prompt):
    """(the prompt's ids as nextword read them, [(id, log-probability)] of its top 10)."""
    record = json.loads(run([args.nextword, "predict", "--model", model, "-f", "json", "-k", "10",
                             "-t", side.THREADS, prompt]).stdout)
    return record["ids"], [(p["id"], _log(p["probability"])) for p in record["pieces"]]


def _log(p):
    return math.log(p) if p > 0 else float("-inf")


def theirs_next(server, ids):
    answer = server.post("/completion", {"prompt": ids, "n_predict": 1, "n_probs": 10,
                                         "temperature": 0, "cache_prompt": False})
    top = answer["completion_probabilities"][0]["top_logprobs"]
    return [(p["id"], p["logprob"]) for p in top]


def compare_top(ours, theirs, tolerance=TOLERANCE):
    """A dict: the pieces in both lists, the largest |difference| of their
    log-probabilities, and whether the two orders agree up to swaps of
    pieces whose log-probabilities lie within `tolerance`."""
    mine, peer = dict(ours), dict(theirs)
    common = [i for i in mine if i in peer]
    worst = max(abs(mine[i] - peer[i]) for i in common) if common else float("inf")
    same_order = [i for i, _ in ours] == [i for i, _ in theirs]
    ties_only = same_order or (
        len(common) >= 9 and all(
            abs(a[1] - b[1]) <= tolerance or a[0] == b[0] for a, b in zip(ours, theirs)))
    return {"common": len(common), "worst": worst, "same_order": same_order,
            "agree": ties_only and worst <= tolerance,
            "ours": ours, "theirs": theirs}


def reference_next(model, prompt_ids, torch):
    """{prompt: [(id, log-probability)] of the top 10} by the tests' float64
    forward (tests/reference/gguf_architectures.py) of the file's values."""
    keys, _ = read_gguf(model)
    arch = keys["general.architecture"]
    held = {ggml_type: values for ggml_type, _, values in w.TYPES.values()}
    weights = {}
    for name, (dims, ggml_type, data) in tensor_data(model).items():
        t = torch.tensor(held[ggml_type](data), dtype=torch.float64)
        weights[name] = t.reshape(list(reversed(dims))) if len(dims) > 1 else t
    heads = keys[arch + ".attention.head_count"]
    cfg = {"arch": arch, "L": keys[arch + ".block_count"], "heads": heads,
           "kv_heads": keys[arch + ".attention.head_count_kv"],
           "hs": keys[arch + ".embedding_length"] // heads,
           "theta": keys.get(arch + ".rope.freq_base", 10000.0),
           "eps": keys.get(arch + ".attention.layer_norm_rms_epsilon",
                           keys.get(arch + ".attention.layer_norm_epsilon")),
           "tied": "output.weight" not in weights}
    out = {}
    for prompt, ids in prompt_ids.items():
        logits, _ = reference.forward(cfg, weights, ids, torch)
        top = torch.log_softmax(logits[-1], dim=-1).topk(10)
        out[prompt] = [(int(i), float(v)) for v, i in zip(top.values, top.indices)]
    return out


def next_pieces(args, model, twin=None, torch=None):
    """Rows of compare_top for each prompt, against llama.cpp on the file
    with its F16 key/value cache and with an F32 one, and on the file's F32
    twin (its values widened) with an F32 cache; with torch, each row also
    gives llama.cpp's worst difference from the float64 forward, and rows
    "float64" nextword's."""
    rows = []
    our = {prompt: ours_next(args, model, prompt) for prompt in PROMPTS}
    exact = reference_next(model, {p: ids for p, (ids, _) in our.items()},
                           torch) if torch else {}
    for prompt in exact:
        row = compare_top(our[prompt][1], exact[prompt])
        row.update({"prompt": prompt, "llama.cpp": "float64", "ids": len(our[prompt][0]),
                    "same_ids": True})
        rows.append(row)
    runs = [("f16 cache", model, ()), ("f32 cache", model, ("-ctk", "f32", "-ctv", "f32"))]
    if twin:
        runs.append(("F32 twin", twin, ("-ctk", "f32", "-ctv", "f32")))
    for label, path, extra in runs:
        server = Server(args.llama_cpp, path, extra)
        try:
            for prompt in PROMPTS:
                ids, ours = our[prompt]
                tokenized = server.post("/tokenize", {"content": prompt, "add_special": True})
                theirs = theirs_next(server, ids)
                row = compare_top(ours, theirs)
                if prompt in exact:
                    row["llama_vs_float64"] = compare_top(theirs, exact[prompt])["worst"]
                row.update({"prompt": prompt, "llama.cpp": label, "ids": len(ids),
                            "same_ids": tokenized["tokens"] == ids})
                rows.append(row)
        finally:
            server.close()
    return rows


def twin_greedy(args, model, twin):
    """nextword's greedy text on the file against llama-cli's on its F32
    twin with an F32 key/value cache."""
    ours, our_pieces = side.nextword_generated(args.nextword, model, GREEDY_PROMPT,
                                               GREEDY_PIECES)
    theirs, stopped = side.llama_generated(args.llama_cpp, twin, GREEDY_PROMPT, GREEDY_PIECES,
                                           ("-ctk", "f32", "-ctv", "f32"))
    row = {"prompt": GREEDY_PROMPT, "pieces": GREEDY_PIECES}
    row.update(side.compare_texts(ours, theirs, our_pieces, stopped))
    return row


def summary(results):
    """Lines of a table: each model, each llama.cpp run: the worst |d log p|
    over the prompts, how many prompts give the same top 10 in the same
    order (or swapped within TOLERANCE), the greedy text and perplexity."""
    lines = ["| model | against | worst abs. d log p | llama.cpp against float64 | "
             "top 10 the same (order) | greedy %d | perplexity, nextword / llama.cpp - 1 |"
             % GREEDY_PIECES, "| --- | --- | ---: | ---: | --- | --- | ---: |"]
    for label, entry in results["models"].items():
        runs = {}
        for row in entry.get("next", []):
            runs.setdefault(row["llama.cpp"], []).append(row)
        for run_label, rows in runs.items():
            same_set = sum(1 for r in rows if r["common"] == 10)
            in_order = sum(1 for r in rows if r["same_order"])
            greedy = ""
            if run_label == "f16 cache" and "greedy" in entry:
                g = entry["greedy"][0]
                greedy = "equal" if g["equal"] else "from piece %d" % g["piece"]
            elif run_label == "f32 cache" and "greedy" in entry:
                g = entry["greedy"][0]
                greedy = "equal" if g["equal"] else (
                    "from piece %d" % g["f32_cache"]["piece"] if "f32_cache" in g else "")
            elif run_label == "F32 twin" and "greedy_twin" in entry:
                g = entry["greedy_twin"]
                greedy = "equal" if g["equal"] else "from piece %d" % g["piece"]
            ppl = ""
            if run_label == "f16 cache" and "perplexity" in entry:
                ppl = "%+.4f%%" % (100 * entry["perplexity"]["difference"])
            exact = [r["llama_vs_float64"] for r in rows if "llama_vs_float64" in r]
            lines.append("| %s | %s | %.1e | %s | %d of %d (%d) | %s | %s |" % (
                label, run_label, max(r["worst"] for r in rows),
                "%.1e" % max(exact) if exact else "", same_set, len(rows), in_order, greedy, ppl))
    return lines


# ----------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    side.add_program_arguments(parser)
    parser.add_argument("--archs", default=",".join(ARCHS))
    parser.add_argument("--types", default=",".join(TYPES))
    parser.add_argument("--parts", default="next,greedy,perplexity")
    parser.add_argument("--workdir", help="where to write the random models (kept, reused)")
    parser.add_argument("--json")
    args = parser.parse_args()
    args.nextword = os.path.abspath(args.nextword)
    args.llama_cpp = os.path.abspath(args.llama_cpp)
    args.ctx, args.chunks = 256, 16  # llama_cpp_side_by_side's perplexity
    archs, kinds, parts = args.archs.split(","), args.types.split(","), set(args.parts.split(","))
    if not set(archs) <= set(ARCHS) or not set(kinds) <= set(TYPES):
        sys.exit("--archs: %s; --types: %s" % (", ".join(ARCHS), ", ".join(TYPES)))
    tmp = tempfile.TemporaryDirectory(prefix="nextword-llama-cpp-types-")
    workdir = args.workdir or tmp.name
    os.makedirs(workdir, exist_ok=True)
    try:
        import torch
    except ImportError:
        torch = None
        print("no torch: the float64 forward is left out")
    version = run([args.nextword, "--version"]).stdout.decode().strip()
    results = {"machine": side.machine(), "nextword": version, "models": {}}
    print("machine    %s\nnextword   %s (%s); llama.cpp %s" % (
        results["machine"], args.nextword, version, args.llama_cpp))
    for arch in archs:
        for kind in kinds:
            path = model_file(args, workdir, arch, kind)
            label = "%s %s" % (arch, kind)
            entry = results["models"].setdefault(label, {"bytes": os.path.getsize(path)})
            print("\n== %s (%.1f MB)" % (label, os.path.getsize(path) / 1e6))
            twin = None
            if kind == "Q8_0-quantize":
                entry["same_tensors_as_ours"] = same_tensors(
                    path, model_file(args, workdir, arch, "Q8_0"))
                print("  the same tensors as our writer's Q8_0 file: %s" %
                      entry["same_tensors_as_ours"])
                if entry["same_tensors_as_ours"]:
                    twin = model_file(args, workdir, arch, "Q8_0", twin=True)
            elif kind != "F32":
                twin = model_file(args, workdir, arch, kind, twin=True)
            if "next" in parts:
                entry["next"] = next_pieces(args, path, twin, torch)
                for row in entry["next"]:
                    print("  %-30r %s: log p %.2f..%.2f, top 10 %s, %d in both, "
                          "worst |d log p| %.2e%s%s" % (
                              row["prompt"], row["llama.cpp"], row["ours"][0][1], row["ours"][-1][1],
                              "same order" if row["same_order"] else
                              "reordered within %g" % TOLERANCE if row["agree"] else "REORDERED",
                              row["common"], row["worst"],
                              "" if row["same_ids"] else ", PROMPT IDS DIFFER",
                              "; llama.cpp against float64 %.2e" % row["llama_vs_float64"]
                              if "llama_vs_float64" in row else ""))
            if "greedy" in parts:
                rows = side.greedy(args, path, [GREEDY_PROMPT], GREEDY_PIECES)
                entry["greedy"] = rows
                print("  greedy %d: %s" % (GREEDY_PIECES, side.describe(rows[0])))
                if twin and not rows[0]["equal"]:
                    entry["greedy_twin"] = twin_greedy(args, path, twin)
                    print("  greedy %d against llama.cpp on the F32 twin, f32 cache: %s" % (
                        GREEDY_PIECES, side.describe(entry["greedy_twin"])))
            if "perplexity" in parts:
                p = side.perplexity(args, path, tmp.name)
                entry["perplexity"] = p
                print("  perplexity: llama.cpp %.4f, nextword %.4f over %d tokens: %+.4f%%" % (
                    p["llama.cpp"], p["nextword"], p["tokens"], 100 * p["difference"]))
    print()
    print("\n".join(summary(results)))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    shutil.rmtree(tmp.name, ignore_errors=True)


if __name__ == "__main__":
    main()
