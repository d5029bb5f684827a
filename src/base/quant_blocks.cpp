#include "base/quant_blocks.h"

#include <cstring>

#include "base/vector_clones.h"

namespace nextword {
namespace {

// The q of value j of a block of 32: its nibble (low nibbles are values
// 0-15, high ones 16-31), with the fifth bit from `high` when given.
constexpr int nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4; }
uint32_t word(const uint8_t* qh) {
  uint32_t w = 0;
  std::memcpy(&w, qh, sizeof w);
  return w;
}
constexpr int fifth_bit(uint32_t high, int j) { return static_cast<int>((high >> j) & 1u) << 4; }

void widen(const BlockQ4_0& b, float* out) {
  const float d = f16_to_float(b.d);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(nibble(b.qs, j) - 8) * d;
}
void widen(const BlockQ4_1& b, float* out) {
  const float d = f16_to_float(b.d), m = f16_to_float(b.m);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(nibble(b.qs, j)) * d + m;
}
void widen(const BlockQ5_0& b, float* out) {
  const float d = f16_to_float(b.d);
  const uint32_t high = word(b.qh);
  for (int j = 0; j < 32; ++j) {
    out[j] = static_cast<float>((nibble(b.qs, j) | fifth_bit(high, j)) - 16) * d;
  }
}
void widen(const BlockQ5_1& b, float* out) {
  const float d = f16_to_float(b.d), m = f16_to_float(b.m);
  const uint32_t high = word(b.qh);
  for (int j = 0; j < 32; ++j) {
    out[j] = static_cast<float>(nibble(b.qs, j) | fifth_bit(high, j)) * d + m;
  }
}
void widen(const BlockQ8_0& b, float* out) {
  const float d = f16_to_float(b.d);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(b.q[j]) * d;
}
// Q4_K and Q5_K: sub-block s's value l from run s / 2's byte l, its nibble
// by s's parity, its fifth bit (Q5_K) bit s of qh[l].
template <class Block>
void widen_k(const Block& b, const uint8_t* qh, float* out) {
  const KFactors f = k_factors(b.d, b.dmin, b.scales);
  for (int s = 0; s < 8; ++s) {
    for (int l = 0; l < 32; ++l) {
      int q = (b.qs[32 * (s / 2) + l] >> (4 * (s % 2))) & 0xF;
      if (qh != nullptr) q |= ((qh[l] >> s) & 1) << 4;
      out[32 * s + l] = static_cast<float>(q) * f.d1[s] - f.m1[s];
    }
  }
}
void widen(const BlockQ4_K& b, float* out) { widen_k(b, nullptr, out); }
void widen(const BlockQ5_K& b, float* out) { widen_k(b, b.qh, out); }
void widen(const BlockQ6_K& b, float* out) {
  const float d = f16_to_float(b.d);
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t low = b.ql[64 * h + l + (j % 2 != 0 ? 32 : 0)];
        const int q = (j >= 2 ? low >> 4 : low & 0xF) | ((b.qh[32 * h + l] >> (2 * j)) & 3) << 4;
        const float scale = d * static_cast<float>(b.scales[8 * h + l / 16 + 2 * j]);
        out[128 * h + 32 * j + l] = static_cast<float>(q - 32) * scale;
      }
    }
  }
}

constexpr bool finite(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }  // not inf or NaN
bool finite_scales(const BlockQ4_0& b) { return finite(b.d); }
bool finite_scales(const BlockQ5_0& b) { return finite(b.d); }
bool finite_scales(const BlockQ8_0& b) { return finite(b.d); }
bool finite_scales(const BlockQ6_K& b) { return finite(b.d); }
bool finite_scales(const BlockQ4_1& b) { return finite(b.d) && finite(b.m); }
bool finite_scales(const BlockQ5_1& b) { return finite(b.d) && finite(b.m); }
bool finite_scales(const BlockQ4_K& b) { return finite(b.d) && finite(b.dmin); }
bool finite_scales(const BlockQ5_K& b) { return finite(b.d) && finite(b.dmin); }

// Each block copied out first: a file's blocks may lie at any address.
template <class Block>
NEXTWORD_VECTOR_CLONES size_t widen_all(const char* bytes, size_t blocks, float* out) {
  size_t bad = blocks;
  constexpr size_t kValues = sizeof(Block) >= 144 ? kSuperBlock : kQ8Block;
  for (size_t i = 0; i < blocks; ++i) {
    Block b;
    std::memcpy(&b, bytes + i * sizeof(Block), sizeof(Block));
    widen(b, out + i * kValues);
    if (bad == blocks && !finite_scales(b)) bad = i;
  }
  return bad;
}

template <class Block>
size_t first_bad(const char* bytes, size_t blocks) {
  for (size_t i = 0; i < blocks; ++i) {
    Block b;
    std::memcpy(&b, bytes + i * sizeof(Block), sizeof(Block));
    if (!finite_scales(b)) return i;
  }
  return blocks;
}

// `action.template operator()<Block>()` for the block struct of `type`.
template <class Action>
size_t on_block_type(WeightType type, Action action) {
  switch (type) {
    case WeightType::kQ4_0: return action.template operator()<BlockQ4_0>();
    case WeightType::kQ4_1: return action.template operator()<BlockQ4_1>();
    case WeightType::kQ5_0: return action.template operator()<BlockQ5_0>();
    case WeightType::kQ5_1: return action.template operator()<BlockQ5_1>();
    case WeightType::kQ8_0: return action.template operator()<BlockQ8_0>();
    case WeightType::kQ4_K: return action.template operator()<BlockQ4_K>();
    case WeightType::kQ5_K: return action.template operator()<BlockQ5_K>();
    case WeightType::kQ6_K: return action.template operator()<BlockQ6_K>();
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16: break;
  }
  return 0;
}

}  // namespace

size_t widen_blocks(WeightType type, const char* bytes, size_t blocks, float* out) {
  return on_block_type(type, [&]<class Block>() { return widen_all<Block>(bytes, blocks, out); });
}

size_t first_non_finite_block(WeightType type, const char* bytes, size_t blocks) {
  return on_block_type(type, [&]<class Block>() { return first_bad<Block>(bytes, blocks); });
}

}  // namespace nextword
