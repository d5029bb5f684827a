#include "base/finite.h"

#include <bit>
#include <cmath>
#include <cstdint>

namespace nextword {

bool all_finite(const float* x, size_t n) {
  uint32_t inf_or_nan = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto bits = std::bit_cast<uint32_t>(x[i]);
    inf_or_nan |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return inf_or_nan == 0;
}

size_t first_non_finite(const float* x, size_t n) {
  if (all_finite(x, n)) return n;
  size_t i = 0;
  while (std::isfinite(x[i])) ++i;
  return i;
}

}  // namespace nextword
