#!/usr/bin/env python3
"""tests/reference/ggml_blocks.py against the worked blocks of docs/blocks.md
(each value there worked by hand from the layout), and each type's block
size against its layout's fields."""
import os
import random
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggml_blocks as gb  # noqa: E402


def half(x):
    return struct.pack("<e", x)


class WorkedBlocks(unittest.TestCase):
    def test_q5_0(self):
        block = half(2.0) + bytes([1, 0, 1, 0]) + bytes([0x30]) + bytes(15)
        v = gb.values("Q5_0", block)
        self.assertEqual((v[0], v[16], v[1]), (0.0, 6.0, -32.0))
        self.assertEqual(v[17:], [-32.0] * 15)

    def test_q4_0_and_q4_1_nibble_order(self):
        qs = bytes([0x9F]) + bytes([0x88] * 15)
        v = gb.values("Q4_0", half(0.5) + qs)
        self.assertEqual((v[0], v[16], v[1], v[17]), (3.5, 0.5, 0.0, 0.0))
        v = gb.values("Q4_1", half(0.5) + half(-1.0) + qs)
        self.assertEqual((v[0], v[16], v[1]), (6.5, 3.5, 3.0))

    def test_q5_1_and_q8_0(self):
        v = gb.values("Q5_1", half(0.25) + half(1.0) + bytes([0, 0, 0, 0x80]) + bytes([0xF1]) +
                      bytes(15))
        self.assertEqual((v[0], v[16], v[31]), (1.25, 4.75, 5.0))  # bit 31: value 31's fifth
        v = gb.values("Q8_0", half(0.125) + struct.pack("<32b", *range(-16, 16)))
        self.assertEqual((v[0], v[31]), (-2.0, 1.875))

    def test_q4_k(self):
        scales = bytearray(12)
        scales[0], scales[4], scales[8] = 0x42, 0x83, 0x51
        qs = bytearray(128)
        qs[0], qs[64] = 0x7A, 0x0C
        v = gb.values("Q4_K", half(1.0) + half(0.5) + bytes(scales) + bytes(qs))
        self.assertEqual((v[0], v[128], v[32]), (18.5, 185.5, 0.0))
        self.assertEqual(v[1], -1.5)  # sub-block 0's minimum alone
        self.assertEqual(gb.k_scales(bytes(scales))[4], (17, 37))

    def test_q5_k_fifth_bits(self):
        scales = bytearray(12)
        for s in range(4):
            scales[s] = 1  # sc 1, m 0 for sub-blocks 0-3
        qh = bytearray(32)
        qh[0] = 0b0000_0110  # value 0 of sub-blocks 1 and 2
        qs = bytearray(128)
        qs[0] = 0x21  # sub-block 0: 1, sub-block 1: 2
        v = gb.values("Q5_K", half(1.0) + half(0.0) + bytes(scales) + bytes(qh) + bytes(qs))
        self.assertEqual((v[0], v[32], v[64], v[96]), (1.0, 18.0, 16.0, 0.0))

    def test_q6_k(self):
        block = bytearray(210)
        block[0], block[128], block[192], block[196] = 0x05, 0x32, 0xFD, 2
        block[208:210] = half(0.25)
        v = gb.values("Q6_K", bytes(block))
        self.assertEqual((v[0], v[64], v[1]), (-3.75, 8.0, 24.0))


class Quantize(unittest.TestCase):
    def test_values_of_the_blocks_written_are_the_values_to_a_step(self):
        rng = random.Random(7)
        for name, (_, count, _) in gb.BLOCKS.items():
            for spread in (0.3, 4.0):
                xs = [rng.gauss(0.1, spread) for _ in range(3 * count)]
                data = gb.quantize(name, xs)
                back = gb.values(name, data)
                self.assertEqual(len(back), len(xs))
                for at in range(0, len(xs), count):
                    block = xs[at:at + count]
                    # A step: the block's range over its quants' range (the
                    # symmetric types: its largest magnitude over half of it;
                    # the K-quants: the 6-bit sub-scales' rounding on top).
                    amax = max(abs(x) for x in block)
                    symmetric = {"Q4_0": 8, "Q5_0": 16, "Q8_0": 127}
                    levels = {"Q4_1": 15, "Q5_1": 31, "Q4_K": 15, "Q5_K": 31, "Q6_K": 63}
                    bound = (amax / symmetric[name] if name in symmetric else
                             (max(block) - min(block)) / levels[name] *
                             (2.5 if name.endswith("_K") else 0.5))
                    bound = bound * 1.01 + amax * 2 ** -10  # F16 scales' rounding
                    for x, y in zip(block, back[at:at + count]):
                        self.assertLessEqual(abs(x - y), bound, (name, x, y))
        with self.assertRaises(ValueError):
            gb.quantize("Q4_K", [0.0] * 32)


class Layouts(unittest.TestCase):
    def test_sizes_are_the_fields(self):
        fields = {"Q4_0": 2 + 16, "Q4_1": 4 + 16, "Q5_0": 2 + 4 + 16, "Q5_1": 4 + 4 + 16,
                  "Q8_0": 2 + 32, "Q4_K": 4 + 12 + 128, "Q5_K": 4 + 12 + 32 + 128,
                  "Q6_K": 128 + 64 + 16 + 2}
        for name, (_, count, size) in gb.BLOCKS.items():
            self.assertEqual(size, fields[name], name)
            data = gb.random_blocks(name, random.Random(1), 3)
            self.assertEqual(len(gb.values(name, data)), 3 * count)
        with self.assertRaises(ValueError):
            gb.values("Q4_K", bytes(143))


if __name__ == "__main__":
    unittest.main()
