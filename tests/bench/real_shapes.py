#!/usr/bin/env python3
"""Random-weight GGUF models of real shapes, for measuring (issue 67): the
shapes of SmolLM2-135M and Qwen2.5-0.5B, as F16 files written by the tests'
own GGUF writer (tests/reference/gguf_writer.py) and quantized from them by
llama.cpp's `llama-quantize` to Q8_0, Q4_0, Q4_K_M and Q5_K_M.

    python3 tests/bench/real_shapes.py --llama-cpp LLAMA_CPP/build/bin
        --workdir DIR [--shapes smollm2-135m,qwen2.5-0.5b]
        [--types F16,Q8_0,Q4_0,Q4_K_M,Q5_K_M] [--models ../shared/models] [--json OUT]

writes each file once into DIR (`SHAPE-TYPE.gguf`; a file already there is
kept and reused) and prints each file's tensor types and their shares of
the parameters and bytes. Nothing here is committed or run in CI: a model
is 0.1 to 1 GB.

The shapes:
  - smollm2-135m: llama, 30 layers, d_model 576, 9 heads and 3 key/value
    heads of 64, d_ff 1536, the output tied to the embedding, context 8192,
    rope base 100000, with the 49,152 byte-level BPE pieces of
    ggml-vocab-starcoder.gguf under the pre-tokenizer "smollm" (SmolLM2's
    own GGUF files name it; llama.cpp reads it with starcoder's expression);
  - qwen2.5-0.5b: qwen2, 24 layers, d_model 896, 14 heads and 2 key/value
    heads of 64 (biases on Q, K and V), d_ff 4864, tied, context 32768,
    rope base 1000000, with GPT-2's 50,257 pieces and pre-tokenizer "qwen2",
    padded to Qwen's 151,936 pieces with "[PAD<id>]" pieces of type unused,
    as llama.cpp's converter pads Qwen's vocabulary.
Matrices are F16, normal with standard deviation 0.02 (the usual
initialisation), the embedding too; norm gains 1 + U(-0.1, 0.1) and biases
N(0, 0.02) in F32, as converted files keep them. Logits then have a spread
of about 0.5 and the residual stream stays near 1: the activations are
those of a model, while the text is noise (perplexity near the vocabulary's
size).

llama-quantize's types are mixtures, and more so on these shapes: a K-quant
block is 256 values, and rows of 576 or 896 values are not whole blocks of
256, so llama-quantize gives such rows a fallback type (Q4_K -> Q5_0, Q5_K
-> Q5_1, Q6_K -> Q8_0), while rows of 1536 (smollm2's ffn_down) and 4864
(qwen2.5's) are K-quants. Q4_K_M and Q5_K_M files of these shapes are thus
mostly Q5_0/Q5_1/Q8_0 with some Q4_K/Q5_K/Q6_K: the real models' files are
the same (their d_model is the same). Each file's types are read back and
printed with their shares (type_shares): what a measurement on the file
measures.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
import gguf_writer as w  # noqa: E402
from ggml_blocks import BLOCKS  # noqa: E402
from gguf_reader import read as read_gguf  # noqa: E402
from llama_cpp_side_by_side import add_vocabulary  # noqa: E402

SHAPES = {
    "smollm2-135m": {"arch": "llama", "layers": 30, "d": 576, "heads": 9, "kv_heads": 3,
                     "ff": 1536, "context": 8192, "rope_base": 100000.0, "eps": 1e-5,
                     "vocab_file": "ggml-vocab-starcoder.gguf", "pre": "smollm",
                     "vocab_size": 49152},
    "qwen2.5-0.5b": {"arch": "qwen2", "layers": 24, "d": 896, "heads": 14, "kv_heads": 2,
                     "ff": 4864, "context": 32768, "rope_base": 1000000.0, "eps": 1e-6,
                     "vocab_file": "ggml-vocab-gpt-2.gguf", "pre": "qwen2",
                     "vocab_size": 151936},
}
TYPES = ["F16", "Q8_0", "Q4_0", "Q4_K_M", "Q5_K_M"]
STD = 0.02
UNUSED = 5  # llama.cpp's token type of a padding piece
# ggml's type numbers and (values, bytes) of a block, for the types a file may hold.
TYPE_BLOCKS = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 30: ("BF16", 1, 2)}
TYPE_BLOCKS.update({number: (name, values, size)
                    for name, (number, values, size) in BLOCKS.items()})
TYPE_BLOCKS.update({10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110)})


def padded_vocabulary(keys, size):
    """A vocabulary file's keys with its pieces padded to `size` as
    llama.cpp's converter pads Qwen's: "[PAD<id>]", of type unused."""
    keys = dict(keys)
    tokens = list(keys["tokenizer.ggml.tokens"])
    if len(tokens) > size:
        sys.exit("a vocabulary of %d pieces is more than %d" % (len(tokens), size))
    keys["tokenizer.ggml.tokens"] = tokens + ["[PAD%d]" % i for i in range(len(tokens), size)]
    keys["tokenizer.ggml.token_type"] = list(keys["tokenizer.ggml.token_type"]) + \
        [UNUSED] * (size - len(tokens))
    return keys


def write_f16(path, shape, vocab_dir, seed=67):
    """The random F16 model of SHAPES[shape] at path."""
    import torch  # python3-torch: 0.5 G normal values in seconds
    s = SHAPES[shape]
    arch, d, hs = s["arch"], s["d"], s["d"] // s["heads"]
    keys, _ = read_gguf(os.path.join(vocab_dir, s["vocab_file"]))
    keys = padded_vocabulary(keys, s["vocab_size"])
    generator = torch.Generator().manual_seed(seed)
    g = w.Gguf()
    g.add("general.architecture", w.STRING, arch)
    g.add("general.name", w.STRING, "nextword random %s" % shape)
    g.add("general.file_type", w.U32, 1)  # mostly F16
    for key, value in (("context_length", s["context"]), ("embedding_length", d),
                       ("block_count", s["layers"]), ("feed_forward_length", s["ff"]),
                       ("attention.head_count", s["heads"]),
                       ("attention.head_count_kv", s["kv_heads"]),
                       ("rope.dimension_count", hs)):
        g.add(arch + "." + key, w.U32, value)
    g.add(arch + ".rope.freq_base", w.F32, s["rope_base"])
    g.add(arch + ".attention.layer_norm_rms_epsilon", w.F32, s["eps"])
    add_vocabulary(g, keys, s["pre"])

    def raw(tensor):
        return ctypes.string_at(tensor.data_ptr(), tensor.numel() * tensor.element_size())

    def matrix(name, rows, row_length):
        values = torch.randn(rows * row_length, generator=generator).mul_(STD).half()
        g.tensor(name, [row_length, rows], w.F16_TYPE, raw(values))

    def gains(name, count):
        values = torch.rand(count, generator=generator).mul_(0.2).add_(0.9)
        g.tensor(name, [count], w.F32_TYPE, raw(values))

    def biases(name, count):
        g.tensor(name, [count], w.F32_TYPE,
                 raw(torch.randn(count, generator=generator).mul_(STD)))

    q, kv = s["heads"] * hs, s["kv_heads"] * hs
    matrix("token_embd.weight", s["vocab_size"], d)
    for layer in range(s["layers"]):
        p = "blk.%d." % layer
        gains(p + "attn_norm.weight", d)
        for part, width in (("q", q), ("k", kv), ("v", kv)):
            matrix(p + "attn_%s.weight" % part, width, d)
            if arch == "qwen2":
                biases(p + "attn_%s.bias" % part, width)
        matrix(p + "attn_output.weight", d, q)
        gains(p + "ffn_norm.weight", d)
        matrix(p + "ffn_gate.weight", s["ff"], d)
        matrix(p + "ffn_up.weight", s["ff"], d)
        matrix(p + "ffn_down.weight", d, s["ff"])
    gains("output_norm.weight", d)
    g.write(path + ".part")
    os.replace(path + ".part", path)


def model_file(llama_cpp, workdir, shape, kind, vocab_dir):
    """The path of SHAPE's file of type kind in workdir, made if it is not
    there: F16 by our writer, the others by llama-quantize from it."""
    path = os.path.join(workdir, "%s-%s.gguf" % (shape, kind))
    if os.path.exists(path):
        return path
    if kind == "F16":
        write_f16(path, shape, vocab_dir)
        return path
    source = model_file(llama_cpp, workdir, shape, "F16", vocab_dir)
    p = subprocess.run([os.path.join(llama_cpp, "llama-quantize"), source, path + ".part", kind,
                        "2"], capture_output=True, check=False)
    if p.returncode != 0:
        sys.exit("llama-quantize %s failed (exit %d):\n%s" % (
            kind, p.returncode, p.stderr.decode(errors="replace")[-2000:]))
    os.replace(path + ".part", path)
    return path


def type_shares(path):
    """{type name: {"tensors", "parameters", "bytes", "parameter_share",
    "byte_share"}} of a file's tensors."""
    _, tensors = read_gguf(path)
    shares = {}
    for _, dims, ggml_type, _ in tensors:
        if ggml_type not in TYPE_BLOCKS:
            sys.exit("%s: ggml type %d is not in TYPE_BLOCKS" % (path, ggml_type))
        name, values, size = TYPE_BLOCKS[ggml_type]
        count = 1
        for n in dims:
            count *= n
        entry = shares.setdefault(name, {"tensors": 0, "parameters": 0, "bytes": 0})
        entry["tensors"] += 1
        entry["parameters"] += count
        entry["bytes"] += count // values * size
    parameters = sum(e["parameters"] for e in shares.values())
    size = sum(e["bytes"] for e in shares.values())
    for entry in shares.values():
        entry["parameter_share"] = entry["parameters"] / parameters
        entry["byte_share"] = entry["bytes"] / size
    return dict(sorted(shares.items(), key=lambda item: -item[1]["parameters"]))


def describe_shares(shares):
    """"Q5_0 62.1% (48.9% of the bytes), ..." with the types by parameters."""
    return ", ".join("%s %.1f%% (%.1f%% of the bytes, %d tensors)" % (
        name, 100 * e["parameter_share"], 100 * e["byte_share"], e["tensors"])
        for name, e in shares.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-cpp", required=True,
                        help="llama.cpp's build folder of programs (build/bin)")
    parser.add_argument("--workdir", required=True, help="where the models are made and kept")
    parser.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--types", default=",".join(TYPES))
    parser.add_argument("--json")
    args = parser.parse_args()
    shapes, kinds = args.shapes.split(","), args.types.split(",")
    if not set(shapes) <= set(SHAPES) or not set(kinds) <= set(TYPES):
        sys.exit("--shapes: %s; --types: %s" % (", ".join(SHAPES), ", ".join(TYPES)))
    os.makedirs(args.workdir, exist_ok=True)
    vocab_dir = os.path.join(args.models, "gguf", "vocab")
    results = {}
    for shape in shapes:
        for kind in kinds:
            path = model_file(os.path.abspath(args.llama_cpp), args.workdir, shape, kind,
                              vocab_dir)
            shares = type_shares(path)
            results["%s %s" % (shape, kind)] = {"file": path, "bytes": os.path.getsize(path),
                                                "types": shares}
            print("%s %s: %.1f MB; %s" % (shape, kind, os.path.getsize(path) / 1e6,
                                          describe_shares(shares)))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
