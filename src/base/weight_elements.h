// The elements a weights file may hold a tensor in besides float32, as the
// products read them in place (math/row_products.h) and as any other reader
// gets them widened: IEEE halves (F16, base/half_float.h), bfloat16 (BF16)
// and ggml's Q8_0 blocks (data/FORMAT.md, "GGUF files").
//
// Every widening is exact: a BF16's float is its bits shifted up 16; a
// Q8_0 element is q d, q an int8 and d an IEEE half, and the product of an
// 8-bit and an 11-bit significand fits float32's 24 bits, so float(q) *
// float(d), rounded once, is q d exactly. So a product that widens its
// elements in registers gives the same bits as the product of the floats
// widened first.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/half_float.h"
#include "base/weight_view.h"

namespace nextword {

// A bfloat16, by type (a uint16_t is an IEEE half to the products).
struct Bf16 {
  uint16_t bits;
};

// ggml's block_q8_0: 32 elements q[i] d, d an IEEE half, 34 bytes.
constexpr int kQ8Block = 32;
struct BlockQ8_0 {
  uint16_t d;
  int8_t q[kQ8Block];
};
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 2, "ggml's block_q8_0");

constexpr float widen(uint16_t h) { return f16_to_float(h); }
constexpr float widen(Bf16 h) { return bf16_to_float(h.bits); }
constexpr float q8_0_element(const BlockQ8_0& b, int i) {
  return static_cast<float>(b.q[i]) * f16_to_float(b.d);
}

// Q8_0 rows read from element `at` on: what the products take for B where
// they take a const float* (B + n is n elements on), so that one kernel is
// written for every element type.
struct Q8Elements {
  const BlockQ8_0* blocks = nullptr;
  size_t at = 0;
  Q8Elements operator+(size_t n) const { return {blocks, at + n}; }
  const BlockQ8_0& block() const { return blocks[at / kQ8Block]; }
  int lane() const { return static_cast<int>(at % kQ8Block); }  // within its block
};

// The bytes of n elements of `type` (n whole blocks for Q8_0).
constexpr size_t element_bytes(WeightType type, size_t n) {
  return type == WeightType::kF32    ? 4 * n
         : type == WeightType::kQ8_0 ? n / kQ8Block * sizeof(BlockQ8_0)
                                     : 2 * n;
}

// n elements of `type` at `elements` (any alignment; n whole blocks for
// Q8_0) widened into n floats. Returns whether they are all finite.
bool widen_elements(WeightType type, const void* elements, size_t n, float* out);

}  // namespace nextword
