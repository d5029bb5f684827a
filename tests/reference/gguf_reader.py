#!/usr/bin/env python3
"""The tests' own GGUF metadata reader, the counterpart of gguf_writer.py
(standard-library Python: struct only), from the layout data/FORMAT.md
("GGUF files") describes: a file's typed keys, and its tensors' names,
shapes, types and offsets (the data itself is left in the file).

    from gguf_reader import read
    keys, tensors = read("ggml-vocab-llama-spm.gguf")
    keys["tokenizer.ggml.tokens"]   # a list of str
    tensors[0]                      # (name, dims as ggml's ne, type, offset)
    tensor_data(path)               # {name: (dims, type, the tensor's bytes)}

Strings that are not UTF-8 are given as bytes.
"""
import mmap
import struct

import gguf_writer as w

_SIZE = {w.U8: 1, w.I8: 1, w.U16: 2, w.I16: 2, w.U32: 4, w.I32: 4, w.F32: 4, w.BOOL: 1,
         w.U64: 8, w.I64: 8, w.F64: 8}
_FORMAT = {w.U8: "B", w.I8: "b", w.U16: "H", w.I16: "h", w.U32: "I", w.I32: "i", w.F32: "f",
           w.BOOL: "?", w.U64: "Q", w.I64: "q", w.F64: "d"}


class _Cursor:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def string(self):
        (n,) = self.take("Q")
        b = bytes(self.data[self.at:self.at + n])
        self.at += n
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            return b

    def value(self, vtype):
        if vtype == w.STRING:
            return self.string()
        if vtype == w.ARRAY:
            element, n = self.take("IQ")
            if element in _FORMAT:  # a run of scalars at once
                return list(self.take("%d%s" % (n, _FORMAT[element])))
            return [self.value(element) for _ in range(n)]
        return self.take(_FORMAT[vtype])[0]


def read(path):
    """(keys {name: value}, tensors [(name, dims, ggml type, offset from the data start)]).
    The file is mapped, not read: a model of a gigabyte costs its header."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return _parse(path, data)[:2]


# Bytes of a tensor of n values of each type the tests write (Q8_0: blocks
# of 32 values, each an F16 scale and 32 int8).
_BYTES = {w.F32_TYPE: lambda n: 4 * n, w.F16_TYPE: lambda n: 2 * n,
          w.BF16_TYPE: lambda n: 2 * n, w.Q8_0_TYPE: lambda n: n // 32 * 34}


def tensor_data(path):
    """{name: (dims, ggml type, its bytes)} of a file's tensors of the types
    the tests write."""
    with open(path, "rb") as f:
        data = f.read()
    keys, tensors, end = _parse(path, data)
    alignment = keys.get("general.alignment", 32)
    start = -(-end // alignment) * alignment
    out = {}
    for name, dims, ggml_type, offset in tensors:
        count = 1
        for n in dims:
            count *= n
        at = start + offset
        out[name] = (dims, ggml_type, data[at:at + _BYTES[ggml_type](count)])
    return out


def _parse(path, data):
    """(keys, tensors, where the tensor infos end)."""
    if data[:4] != b"GGUF":
        raise ValueError("%s: not a GGUF file" % path)
    c = _Cursor(data)
    c.at = 4
    version, n_tensors, n_keys = c.take("IQQ")
    if version not in (2, 3):
        raise ValueError("%s: GGUF version %d" % (path, version))
    keys = {}
    for _ in range(n_keys):
        name = c.string()
        (vtype,) = c.take("I")
        keys[name] = c.value(vtype)
    tensors = []
    for _ in range(n_tensors):
        name = c.string()
        (n_dims,) = c.take("I")
        dims = list(c.take("%dQ" % n_dims))
        ggml_type, offset = c.take("IQ")
        tensors.append((name, dims, ggml_type, offset))
    return keys, tensors, c.at
