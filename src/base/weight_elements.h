// The elements a weights file may hold a tensor in besides float32, as the
// products read them in place (math/row_products.h) and as any other reader
// gets them widened: IEEE halves (F16, base/half_float.h), bfloat16 (BF16)
// and ggml's quantized blocks (base/quant_blocks.h; data/FORMAT.md, "GGUF
// files").
//
// Every widening gives one float, the same however it is computed: a
// BF16's float is its bits shifted up 16, a block's values are
// quant_blocks.h's. So a product that widens its elements in registers
// gives the same bits as the product of the floats widened first.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/half_float.h"
#include "base/quant_blocks.h"
#include "base/weight_view.h"

namespace nextword {

// A bfloat16, by type (a uint16_t is an IEEE half to the products).
struct Bf16 {
  uint16_t bits;
};

constexpr float widen(uint16_t h) { return f16_to_float(h); }
constexpr float widen(Bf16 h) { return bf16_to_float(h.bits); }

// A matrix's rows of ggml's blocks of `type`, row_bytes apart (each row
// whole blocks): what the products read B as, in place.
struct BlockRows {
  WeightType type;
  const void* rows;
  size_t row_bytes;
};

// The bytes of n elements of `type` (n whole blocks of a block type).
constexpr size_t element_bytes(WeightType type, size_t n) {
  const BlockShape shape = block_shape(type);
  return n / static_cast<size_t>(shape.values) * static_cast<size_t>(shape.bytes);
}

// n elements of `type` at `elements` (any alignment; whole blocks of a
// block type) widened into n floats. Returns whether they are all finite.
bool widen_elements(WeightType type, const void* elements, size_t n, float* out);

}  // namespace nextword
