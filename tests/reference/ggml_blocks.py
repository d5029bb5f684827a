#!/usr/bin/env python3
"""The tests' own reading of ggml's quantized blocks, written from the
layouts docs/blocks.md describes (standard-library Python: struct only):
what each block's bytes hold, as values.

    from ggml_blocks import BLOCKS, values, random_blocks
    BLOCKS["Q4_K"]            # (ggml type, values a block, bytes a block)
    values("Q4_K", data)      # the floats of whole blocks, exactly (float64)
    random_blocks("Q4_K", rng, count)   # blocks of random bytes, finite scales

A value is computed in float64 from the block's integers and its F16 scales,
so it is exact: the reference the kernels' float32 arithmetic is held to.
"""
import struct

QK_K = 256  # values in a K-quant super-block

# name: (ggml type, values a block, bytes a block)
BLOCKS = {
    "Q4_0": (2, 32, 18),
    "Q4_1": (3, 32, 20),
    "Q5_0": (6, 32, 22),
    "Q5_1": (7, 32, 24),
    "Q8_0": (8, 32, 34),
    "Q4_K": (12, QK_K, 144),
    "Q5_K": (13, QK_K, 176),
    "Q6_K": (14, QK_K, 210),
}


def _half(data, at):
    return struct.unpack_from("<e", data, at)[0]


def _nibbles(qs):
    """16 bytes as the 32 values of a block: the low nibbles first (values
    0-15), then the high ones (16-31)."""
    return [b & 0xF for b in qs] + [b >> 4 for b in qs]


def q4_0(block):
    d = _half(block, 0)
    return [d * (q - 8) for q in _nibbles(block[2:18])]


def q4_1(block):
    d, m = _half(block, 0), _half(block, 2)
    return [d * q + m for q in _nibbles(block[4:20])]


def _fifth_bits(qh, qs):
    """Q5's 32 quants: each nibble (as _nibbles orders them) with bit i of
    the little-endian word qh as its fifth bit, 0 to 31."""
    high = struct.unpack("<I", qh)[0]
    return [q | ((high >> i) & 1) << 4 for i, q in enumerate(_nibbles(qs))]


def q5_0(block):
    d = _half(block, 0)
    return [d * (q - 16) for q in _fifth_bits(block[2:6], block[6:22])]


def q5_1(block):
    d, m = _half(block, 0), _half(block, 2)
    return [d * q + m for q in _fifth_bits(block[4:8], block[8:24])]


def q8_0(block):
    d = _half(block, 0)
    return [d * q for q in struct.unpack("<32b", block[2:34])]


def k_scales(scales):
    """The 8 sub-blocks' 6-bit (scale, min) pairs of Q4_K and Q5_K's 12
    bytes: bytes 0-3 hold sub-blocks 0-3's scales in their low 6 bits, bytes
    4-7 their mins; sub-blocks 4-7 take their low 4 bits from bytes 8-11
    (scale low nibble, min high nibble) and their top 2 bits from the top 2
    bits of bytes 0-3 (scales) and 4-7 (mins)."""
    pairs = []
    for s in range(8):
        if s < 4:
            pairs.append((scales[s] & 63, scales[s + 4] & 63))
        else:
            pairs.append(((scales[s + 4] & 0xF) | (scales[s - 4] >> 6) << 4,
                          (scales[s + 4] >> 4) | (scales[s] >> 6) << 4))
    return pairs


def _k_quants(qs, qh=None):
    """The 256 quants of Q4_K (qh None) or Q5_K: four runs of 32 bytes, each
    the low nibbles of one sub-block then the high nibbles of the next; Q5_K's
    fifth bit of value l of sub-block s is bit s of qh[l]."""
    quants = []
    for run in range(4):
        chunk = qs[32 * run:32 * run + 32]
        for half, shift in ((0, 0), (1, 4)):
            s = 2 * run + half
            for l in range(32):
                q = (chunk[l] >> shift) & 0xF
                if qh is not None:
                    q |= ((qh[l] >> s) & 1) << 4
                quants.append(q)
    return quants


def _k_values(d, dmin, scales, quants):
    out = []
    for i, q in enumerate(quants):
        scale, minimum = scales[i // 32]
        out.append(d * scale * q - dmin * minimum)
    return out


def q4_k(block):
    d, dmin = _half(block, 0), _half(block, 2)
    return _k_values(d, dmin, k_scales(block[4:16]), _k_quants(block[16:144]))


def q5_k(block):
    d, dmin = _half(block, 0), _half(block, 2)
    return _k_values(d, dmin, k_scales(block[4:16]), _k_quants(block[48:176], block[16:48]))


def q6_k(block):
    """ql[128], qh[64], scales[16] (int8), d: two halves of 128 values; in
    half h, value 32j + l (j 0-3, l 0-31) is the nibble of ql[64h + l] (j 0,
    2) or ql[64h + 32 + l] (j 1, 3), low for j 0-1 and high for j 2-3, with
    bits 2j, 2j+1 of qh[32h + l] above it, less 32, times its sixteen
    values' scale scales[8h + l // 16 + 2j]."""
    ql, qh = block[0:128], block[128:192]
    scales = struct.unpack("<16b", block[192:208])
    d = _half(block, 208)
    out = [0.0] * QK_K
    for h in range(2):
        for j in range(4):
            for l in range(32):
                low = ql[64 * h + l + (32 if j % 2 else 0)]
                nibble = low >> 4 if j >= 2 else low & 0xF
                q = nibble | ((qh[32 * h + l] >> (2 * j)) & 3) << 4
                out[128 * h + 32 * j + l] = d * scales[8 * h + l // 16 + 2 * j] * (q - 32)
    return out


_READ = {"Q4_0": q4_0, "Q4_1": q4_1, "Q5_0": q5_0, "Q5_1": q5_1, "Q8_0": q8_0,
         "Q4_K": q4_k, "Q5_K": q5_k, "Q6_K": q6_k}


def values(name, data):
    """The values of whole blocks of type `name`."""
    _, count, size = BLOCKS[name]
    if len(data) % size:
        raise ValueError("%s: %d bytes are not whole blocks of %d" % (name, len(data), size))
    out = []
    for at in range(0, len(data), size):
        out += _READ[name](data[at:at + size])
    return out


def random_blocks(name, rng, count, scale=0.01):
    """`count` blocks of random quants whose F16 scales (and minimums) are
    finite, about `scale` in size: any such bytes are a valid block."""
    _, _, size = BLOCKS[name]
    out = b""
    for _ in range(count):
        block = bytearray(rng.randbytes(size))
        # The block's F16 fields, where its layout puts them.
        fields = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
                  "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}[name]
        for at in fields:
            # K-quants' super-block scales multiply 6- or 8-bit sub-scales.
            s = scale / (32 if name.endswith("_K") else 1)
            struct.pack_into("<e", block, at, rng.uniform(0.25, 1.0) * s)
        out += bytes(block)
    return out


# ---- Writing blocks: the tests' own quantizer (plain rounding, not
# llama.cpp's search for the best scales), the inverse of the readings
# above, so that values(name, quantize(name, xs)) is xs to within half a
# step of each block.

def _half_of(x):
    """x rounded to an F16, as a float."""
    return struct.unpack("<e", struct.pack("<e", x))[0]


def _q(x, step, offset, top):
    return 0 if step == 0 else max(0, min(top, int(round(x / step)) + offset))


def _pack_nibbles(q):
    return bytes(q[j] & 0xF | (q[j + 16] & 0xF) << 4 for j in range(16))


def _pack_fifth_bits(q):
    return struct.pack("<I", sum(((v >> 4) & 1) << j for j, v in enumerate(q)))


def _block32(name, xs):
    lo, hi = min(xs), max(xs)
    if name in ("Q4_1", "Q5_1"):
        top = 15 if name == "Q4_1" else 31
        d, m = _half_of((hi - lo) / top), _half_of(lo)
        q = [_q(x - m, d, 0, top) for x in xs]
        head = struct.pack("<ee", d, m)
    else:
        amax = max(abs(lo), abs(hi))
        half_range = {"Q4_0": 8, "Q5_0": 16, "Q8_0": 127}[name]
        d = _half_of(amax / half_range)
        if name == "Q8_0":
            return struct.pack("<e", d) + struct.pack("<32b", *[_q(x, d, 127, 254) - 127
                                                                for x in xs])
        q = [_q(x, d, half_range, 2 * half_range - 1) for x in xs]
        head = struct.pack("<e", d)
    fifth = _pack_fifth_bits(q) if name in ("Q5_0", "Q5_1") else b""
    return head + fifth + _pack_nibbles(q)


def _pack_k_scales(sc, mn):
    out = bytearray(12)
    for j in range(4):
        out[j] = sc[j] & 63 | (sc[j + 4] >> 4) << 6
        out[j + 4] = mn[j] & 63 | (mn[j + 4] >> 4) << 6
        out[j + 8] = sc[j + 4] & 0xF | (mn[j + 4] & 0xF) << 4
    return bytes(out)


def _block_k(name, xs):
    top = 15 if name == "Q4_K" else 31
    subs = [xs[32 * s:32 * s + 32] for s in range(8)]
    mins = [max(0.0, -min(sub)) for sub in subs]
    steps = [(max(sub) + m) / top for sub, m in zip(subs, mins)]
    d, dmin = _half_of(max(steps) / 63), _half_of(max(mins) / 63)
    sc = [_q(s, d, 0, 63) for s in steps]
    mn = [_q(m, dmin, 0, 63) for m in mins]
    q = []
    for s, sub in enumerate(subs):
        q += [_q(x + dmin * mn[s], d * sc[s], 0, top) for x in sub]
    qs = bytearray(128)
    for r in range(4):
        for l in range(32):
            qs[32 * r + l] = q[64 * r + l] & 0xF | (q[64 * r + 32 + l] & 0xF) << 4
    head = struct.pack("<ee", d, dmin) + _pack_k_scales(sc, mn)
    if name == "Q4_K":
        return head + bytes(qs)
    qh = bytes(sum(((q[32 * s + l] >> 4) & 1) << s for s in range(8)) for l in range(32))
    return head + qh + bytes(qs)


def _block_q6_k(xs):
    groups = [xs[16 * i:16 * i + 16] for i in range(16)]
    amaxes = [max(abs(x) for x in g) / 31 for g in groups]
    d = _half_of(max(amaxes) / 127)
    sc = [max(-128, min(127, int(round(a / d)))) if d else 0 for a in amaxes]
    q = [_q(x, d * sc[i // 16], 32, 63) for i, x in enumerate(xs)]
    ql, qh = bytearray(128), bytearray(64)
    for h in range(2):
        for j in range(4):
            for l in range(32):
                v = q[128 * h + 32 * j + l]
                at = 64 * h + l + (32 if j % 2 else 0)
                ql[at] |= (v & 0xF) << (4 if j >= 2 else 0)
                qh[32 * h + l] |= (v >> 4) << (2 * j)
    return bytes(ql) + bytes(qh) + struct.pack("<16b", *sc) + struct.pack("<e", d)


def quantize(name, xs):
    """`xs` (whole blocks of values) as blocks of type `name`."""
    _, count, _ = BLOCKS[name]
    if len(xs) % count:
        raise ValueError("%s rows are whole blocks of %d values, not %d" % (name, count, len(xs)))
    out = b""
    for at in range(0, len(xs), count):
        block = xs[at:at + count]
        out += (_block32(name, block) if count == 32 else
                _block_q6_k(block) if name == "Q6_K" else _block_k(name, block))
    return out
