#!/usr/bin/env python3
"""The tests' own GGUF writer, from the layout data/FORMAT.md ("GGUF files")
describes (standard-library Python: struct only), for the models and seeds
the tests build: a file of typed metadata and tensors.

    from gguf_writer import Gguf, U32, F32, STRING
    g = Gguf()
    g.add("general.architecture", STRING, "llama")
    g.tensor("output_norm.weight", [64], F32_TYPE, floats_bytes([1.0] * 64))
    data = g.bytes()

Tensor types F32, F16, BF16, Q8_0 and ggml's other blocks (ggml_blocks.py)
(TYPES: each one's ggml number, its bytes of a list of floats, and the
floats those bytes hold).
"""
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggml_blocks  # noqa: E402

# Value types.
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
           BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}

# ggml tensor types the tests write.
F32_TYPE, F16_TYPE, Q8_0_TYPE, BF16_TYPE = 0, 1, 8, 30


def _string(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def _value(vtype, value):
    if vtype == STRING:
        return _string(value)
    return struct.pack(_SCALAR[vtype], value)


def floats_bytes(values):
    return struct.pack("<%df" % len(values), *values)


def halves_bytes(values):
    return struct.pack("<%de" % len(values), *values)


def _f32(x):
    """x rounded to float32 (a double's float32 neighbour, to nearest even)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _f32s(values):
    """Each of 32 values rounded to float32, as _f32 does."""
    return struct.unpack("<32f", struct.pack("<32f", *values))


def bf16_bytes(values):
    """Each value rounded to float32, then to bfloat16 (its upper 16 bits,
    to nearest, ties to even; a NaN stays a quiet NaN)."""
    out = []
    for x in values:
        u = struct.unpack("<I", struct.pack("<f", x))[0]
        if u & 0x7fffffff > 0x7f800000:
            out.append((u >> 16) | 0x40)
        else:
            out.append((u + 0x7fff + ((u >> 16) & 1)) >> 16)
    return struct.pack("<%dH" % len(out), *out)


def bf16_values(data):
    """The floats of bfloat16 bytes: each one's bits shifted up 16."""
    halves = struct.unpack("<%dH" % (len(data) // 2), data)
    return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]


def q8_0_bytes(values):
    """ggml's Q8_0, from its description: blocks of 32 values, each block
    an F16 scale d = max|x| / 127 then 32 int8 q = round(x / d) (half away
    from zero), computed in float32 as ggml does (d and 1/d rounded to
    float32, x * (1/d) rounded to float32, then rounded to an integer)."""
    if len(values) % 32:
        raise ValueError("Q8_0 rows are whole blocks of 32 values, not %d" % len(values))
    out = []
    for b in range(0, len(values), 32):
        block = _f32s(values[b:b + 32])
        d = _f32(max(abs(x) for x in block) / 127.0)
        inverse = _f32(1.0 / d) if d else 0.0
        q = [int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)
             for v in _f32s([x * inverse for x in block])]
        out.append(struct.pack("<e32b", d, *q))
    return b"".join(out)


def q8_0_values(data):
    """The floats of Q8_0 bytes: each q times its block's scale (exact)."""
    values = []
    for b in range(0, len(data), 34):
        d = struct.unpack("<e", data[b:b + 2])[0]
        values += [q * d for q in struct.unpack("<32b", data[b + 2:b + 34])]
    return values


# Each tensor type the tests write: its bytes of values, and the floats those
# bytes hold (what a reader of the file computes with).
TYPES = {
    "F32": (F32_TYPE, floats_bytes, lambda data: list(struct.unpack("<%df" % (len(data) // 4),
                                                                    data))),
    "F16": (F16_TYPE, halves_bytes, lambda data: list(struct.unpack("<%de" % (len(data) // 2),
                                                                    data))),
    "BF16": (BF16_TYPE, bf16_bytes, bf16_values),
    "Q8_0": (Q8_0_TYPE, q8_0_bytes, q8_0_values),
}
# ggml's other blocks, by the tests' own reading and quantizer (ggml_blocks.py).
for _name in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"):
    TYPES[_name] = (ggml_blocks.BLOCKS[_name][0],
                    lambda values, name=_name: ggml_blocks.quantize(name, values),
                    lambda data, name=_name: ggml_blocks.values(name, data))
# Values a block holds, by type name (1: a plain type).
BLOCK_VALUES = {name: ggml_blocks.BLOCKS[name][1] if name in ggml_blocks.BLOCKS else 1
                for name in TYPES}


class Gguf:
    def __init__(self, version=3, alignment=32):
        self.version = version
        self.alignment = alignment
        self.keys = []
        self.tensors = []

    def add(self, key, vtype, value):
        """A scalar or string key."""
        self.keys.append(_string(key) + struct.pack("<I", vtype) + _value(vtype, value))

    def add_array(self, key, element, values):
        body = struct.pack("<IQ", element, len(values))
        body += b"".join(_value(element, v) for v in values)
        self.keys.append(_string(key) + struct.pack("<I", ARRAY) + body)

    def tensor(self, name, dims, ggml_type, data):
        """dims as ggml's ne: the row's length first."""
        self.tensors.append((name, list(dims), ggml_type, bytes(data)))

    def bytes(self):
        return b"".join(self.chunks())

    def write(self, path):
        """The file at path, written a tensor at a time (a model of a gigabyte
        is never joined into one bytes object)."""
        with open(path, "wb") as f:
            for chunk in self.chunks():
                f.write(chunk)

    def chunks(self):
        """The file's bytes in pieces: the header, then each tensor padded."""
        out = b"GGUF" + struct.pack("<IQQ", self.version, len(self.tensors), len(self.keys))
        out += b"".join(self.keys)
        offset = 0
        for name, dims, ggml_type, data in self.tensors:
            out += _string(name) + struct.pack("<I", len(dims))
            out += struct.pack("<%dQ" % len(dims), *dims)
            out += struct.pack("<IQ", ggml_type, offset)
            offset += -(-len(data) // self.alignment) * self.alignment
        out += b"\0" * (-len(out) % self.alignment)
        self.data_start = len(out)  # where the tensors' data begins
        yield out
        for _, _, _, data in self.tensors:
            yield data
            yield b"\0" * (-len(data) % self.alignment)
