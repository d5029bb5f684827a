#include "base/weight_elements.h"

#include <cstring>

#include "base/finite.h"
#include "base/vector_clones.h"

namespace nextword {
namespace {

// Blocks of Q8_0 widened, block by block; whether every scale is finite
// (an element is finite when its block's scale is).
NEXTWORD_VECTOR_CLONES bool q8_0_to_floats(const char* bytes, size_t blocks, float* out) {
  uint32_t inf_or_nan = 0;
  for (size_t b = 0; b < blocks; ++b) {
    const char* block = bytes + b * sizeof(BlockQ8_0);
    uint16_t d = 0;
    std::memcpy(&d, block, sizeof d);
    int8_t q[kQ8Block];
    std::memcpy(q, block + sizeof d, sizeof q);
    const float scale = f16_to_float(d);
    for (int i = 0; i < kQ8Block; ++i) out[b * kQ8Block + i] = static_cast<float>(q[i]) * scale;
    inf_or_nan |= static_cast<uint32_t>((d & 0x7c00u) == 0x7c00u);  // inf or NaN
  }
  return inf_or_nan == 0;
}

}  // namespace

bool widen_elements(WeightType type, const void* elements, size_t n, float* out) {
  const char* bytes = static_cast<const char*>(elements);
  switch (type) {
    case WeightType::kF32: std::memcpy(out, bytes, 4 * n); return all_finite(out, n);
    case WeightType::kF16: return f16_to_floats(bytes, n, out);
    case WeightType::kBF16: return bf16_to_floats(bytes, n, out);
    case WeightType::kQ8_0: return q8_0_to_floats(bytes, n / kQ8Block, out);
  }
  return false;
}

}  // namespace nextword
