#!/usr/bin/env python3
"""Writes fuzz_memory's seed files: small memory.bin files of a 12-word
vocabulary, laid out from data/FORMAT.md's description alone (an
independent writer of the format; the fuzzer sets vocab_size and
vocab_hash itself).

    python3 tests/fuzz/make_memory_seeds.py tests/fuzz/corpus/fuzz_memory
"""
import os
import struct
import sys

V = 12


def pad(b):
    return b + b"\0" * (-len(b) % 8)


def bf16(x):  # toward zero, as nextword memory writes
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16


def memory(order, orders):
    """orders[k] for k >= 2: (words, shares, children of order k); children of
    order 1 in orders[1]."""
    entries = [V] + [len(orders[k][0]) for k in range(2, order + 1)] + [0] * (8 - order)
    header = b"NWMEMORY" + struct.pack("<IIII", 1, order, V, 2) + struct.pack("<QQ", 0, 1000)
    header += struct.pack("<II", 16, 0) + struct.pack("<8Q", *entries)
    header += struct.pack("<8I", *([1] * 8)) + struct.pack("<24d", *([0.5] * 24))
    header += b"\0" * (384 - len(header))
    out = header + pad(struct.pack("<%dd" % (order * 16), *([0.25] * (order * 16))))
    out += pad(struct.pack("<%df" % V, *([1.0 / V] * V)))
    for k in range(1, order + 1):
        if k >= 2:
            words, shares, _ = orders[k]
            out += pad(struct.pack("<%dH" % len(words), *words))
            out += pad(struct.pack("<%dH" % len(shares), *[bf16(s) for s in shares]))
        if k < order:
            children = orders[k][2] if k >= 2 else orders[1]
            out += pad(struct.pack("<%dI" % len(children), *children))
    return out


def main():
    where = sys.argv[1]
    os.makedirs(where, exist_ok=True)
    # Order 2: word 2 is followed by 3 and 4, word 5 by 2.
    children1 = [0, 0, 0, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3]
    two = {1: children1, 2: ([3, 4, 2], [0.5, 0.25, 0.75], None)}
    # Order 3: (2 3) followed by 4; (5 2) followed by 3 and 9.
    three = {1: children1, 2: ([3, 4, 2], [0.5, 0.25, 0.75], [0, 1, 1, 3]),
             3: ([4, 3, 9], [0.5, 0.4, 0.1], None)}
    for name, data in [("order1", memory(1, {})), ("order2", memory(2, two)),
                       ("order3", memory(3, three))]:
        with open(os.path.join(where, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
