#include "base/weight_elements.h"

#include <cstring>

#include "base/finite.h"

namespace nextword {

bool widen_elements(WeightType type, const void* elements, size_t n, float* out) {
  const char* bytes = static_cast<const char*>(elements);
  switch (type) {
    case WeightType::kF32: std::memcpy(out, bytes, 4 * n); return all_finite(out, n);
    case WeightType::kF16: return f16_to_floats(bytes, n, out);
    case WeightType::kBF16: return bf16_to_floats(bytes, n, out);
    case WeightType::kQ8_0:
    case WeightType::kQ4_0:
    case WeightType::kQ4_1:
    case WeightType::kQ5_0:
    case WeightType::kQ5_1:
    case WeightType::kQ4_K:
    case WeightType::kQ5_K:
    case WeightType::kQ6_K: {
      const size_t blocks = n / static_cast<size_t>(block_shape(type).values);
      return widen_blocks(type, bytes, blocks, out) == blocks;
    }
  }
  return false;
}

}  // namespace nextword
