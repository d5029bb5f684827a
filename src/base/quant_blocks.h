// ggml's quantized blocks as a GGUF file holds them (docs/blocks.md): their
// layouts as structs, and each block's values widened to floats.
//
// Every value is one float, rounded at most once, the same as ggml's own
// to_float gives: a value is an integer of at most 6 bits times F16 scales
// (11-bit significands) and small integer sub-scales, a product of at most
// 24 significant bits, so exact in float32; the types with a minimum
// (Q4_1, Q5_1, Q4_K, Q5_K) then add or subtract one exact product, one
// rounding. So the products that widen these values in registers
// (math/block_kernels.h) give the same bits as the product of the values
// widened here first, and the tests' float64 reading of the blocks
// (tests/reference/ggml_blocks.py) rounded to float32 is this, bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/half_float.h"
#include "base/weight_view.h"

namespace nextword {

constexpr int kQ8Block = 32;      // values in a block of Q4_0 .. Q8_0
constexpr int kSuperBlock = 256;  // values in a K-quant's super-block

struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];  // value j in byte j's low nibble, value j + 16 in its high one
};
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];  // a little-endian word: bit j, value j's fifth bit
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t q[kQ8Block];
};
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];  // 8 sub-blocks' 6-bit scales and minimums (KScales)
  uint8_t qs[128];     // run r: sub-block 2r in the low nibbles, 2r + 1 in the high
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];  // bit s of qh[l]: value l of sub-block s's fifth bit
  uint8_t qs[128];
};
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];  // one for each 16 values
  uint16_t d;
};
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
                  sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_K) == 144 &&
                  sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210,
              "ggml's block layouts");

// The values a block of `type` holds and its bytes (1 and the element's
// size for F32, F16 and BF16).
struct BlockShape {
  int values;
  int bytes;
};
constexpr BlockShape block_shape(WeightType type) {
  switch (type) {
    case WeightType::kF32: return {1, 4};
    case WeightType::kF16:
    case WeightType::kBF16: return {1, 2};
    case WeightType::kQ4_0: return {kQ8Block, sizeof(BlockQ4_0)};
    case WeightType::kQ4_1: return {kQ8Block, sizeof(BlockQ4_1)};
    case WeightType::kQ5_0: return {kQ8Block, sizeof(BlockQ5_0)};
    case WeightType::kQ5_1: return {kQ8Block, sizeof(BlockQ5_1)};
    case WeightType::kQ8_0: return {kQ8Block, sizeof(BlockQ8_0)};
    case WeightType::kQ4_K: return {kSuperBlock, sizeof(BlockQ4_K)};
    case WeightType::kQ5_K: return {kSuperBlock, sizeof(BlockQ5_K)};
    case WeightType::kQ6_K: return {kSuperBlock, sizeof(BlockQ6_K)};
  }
  return {1, 4};
}
constexpr bool is_block_type(WeightType type) { return block_shape(type).values > 1; }

// The 6-bit scales and minimums of a Q4_K or Q5_K super-block's 8
// sub-blocks, unpacked from its 12 bytes: sub-blocks 0-3 are the low 6 bits
// of bytes 0-3 (scales) and 4-7 (minimums); 4-7 take their low 4 bits from
// bytes 8-11's nibbles and their top 2 bits from the top of bytes 0-3 and
// 4-7. Three little-endian words at a time, four sub-blocks a word.
struct KScales {
  uint8_t scale[8], min[8];
};
inline KScales k_scales(const uint8_t* bytes) {
  uint32_t w[3];
  std::memcpy(w, bytes, sizeof w);
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  const uint32_t scale[2] = {w[0] & kLow6, (w[2] & kLow4) | ((w[0] >> 6) & kLow2) << 4};
  const uint32_t min[2] = {w[1] & kLow6, ((w[2] >> 4) & kLow4) | ((w[1] >> 6) & kLow2) << 4};
  KScales k;
  std::memcpy(k.scale, scale, sizeof k.scale);
  std::memcpy(k.min, min, sizeof k.min);
  return k;
}

// A Q4_K or Q5_K super-block's sub-block factors: value = q d1[s] - m1[s]
// (d1 = d sc, m1 = dmin m: each exact in float32).
struct KFactors {
  float d1[8], m1[8];
};
inline KFactors k_factors(uint16_t d, uint16_t dmin, const uint8_t* scales) {
  const KScales k = k_scales(scales);
  KFactors f{};
  for (int s = 0; s < 8; ++s) {
    f.d1[s] = f16_to_float(d) * static_cast<float>(k.scale[s]);
    f.m1[s] = f16_to_float(dmin) * static_cast<float>(k.min[s]);
  }
  return f;
}

// `blocks` blocks of `type` at `bytes` (any alignment) widened into their
// values. Returns the first block whose scales are not all finite (whose
// values are then not all finite), or `blocks` when there is none.
size_t widen_blocks(WeightType type, const char* bytes, size_t blocks, float* out);

// The first of `blocks` blocks of `type` whose F16 scales (and minimums)
// are not all finite, or `blocks`: the same answer as widen_blocks, reading
// only the scales.
size_t first_non_finite_block(WeightType type, const char* bytes, size_t blocks);

}  // namespace nextword
