#!/usr/bin/env python3
"""The tests' own GGUF writer, from the layout data/FORMAT.md ("GGUF files")
describes (standard-library Python: struct only), for the models and seeds
the tests build: a file of typed metadata and tensors.

    from gguf_writer import Gguf, U32, F32, STRING
    g = Gguf()
    g.add("general.architecture", STRING, "llama")
    g.tensor("output_norm.weight", [64], F32_TYPE, floats_bytes([1.0] * 64))
    data = g.bytes()
"""
import struct

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
        out = b"GGUF" + struct.pack("<IQQ", self.version, len(self.tensors), len(self.keys))
        out += b"".join(self.keys)
        offset, offsets = 0, []
        for name, dims, ggml_type, data in self.tensors:
            offsets.append(offset)
            out += _string(name) + struct.pack("<I", len(dims))
            out += struct.pack("<%dQ" % len(dims), *dims)
            out += struct.pack("<IQ", ggml_type, offset)
            offset += -(-len(data) // self.alignment) * self.alignment
        out += b"\0" * (-len(out) % self.alignment)
        self.data_start = len(out)  # where the tensors' data begins
        for (name, dims, ggml_type, data), at in zip(self.tensors, offsets):
            out += data + b"\0" * (-len(data) % self.alignment)
        return out
