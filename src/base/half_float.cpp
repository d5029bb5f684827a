#include "base/half_float.h"

#include <cstring>

#include "base/vector_clones.h"

namespace nextword {
namespace {

uint16_t load(const char* bytes, size_t i) {
  uint16_t h = 0;
  std::memcpy(&h, bytes + 2 * i, 2);  // little-endian, as safetensors.cpp asserts
  return h;
}

void store(char* bytes, size_t i, uint16_t h) { std::memcpy(bytes + 2 * i, &h, 2); }

// One pass widens and tests (a value's exponent bits all set: inf or NaN),
// in vector code: a separate finite check of the widened floats would read
// every layer's weights a second time at every start. Inlined into each
// clone below.
template <bool kBf16>
[[gnu::always_inline]] inline bool widen(const char* bytes, size_t n, float* out) {
  constexpr uint16_t kExponent = kBf16 ? 0x7f80u : 0x7c00u;
  uint32_t inf_or_nan = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = load(bytes, i);
    out[i] = kBf16 ? bf16_to_float(h) : f16_to_float(h);
    inf_or_nan |= static_cast<uint32_t>((h & kExponent) == kExponent);
  }
  return inf_or_nan == 0;
}

}  // namespace

NEXTWORD_VECTOR_CLONES bool f16_to_floats(const char* bytes, size_t n, float* out) {
  return widen<false>(bytes, n, out);
}

NEXTWORD_VECTOR_CLONES bool bf16_to_floats(const char* bytes, size_t n, float* out) {
  return widen<true>(bytes, n, out);
}

bool halves_to_floats(const char* bytes, bool bf16, size_t n, float* out) {
  return (bf16 ? bf16_to_floats : f16_to_floats)(bytes, n, out);
}

NEXTWORD_VECTOR_CLONES size_t first_non_finite_half(const char* bytes, bool bf16, size_t n) {
  const uint16_t exponent = bf16 ? 0x7f80u : 0x7c00u;
  uint32_t inf_or_nan = 0;
  for (size_t i = 0; i < n; ++i) {
    inf_or_nan |= static_cast<uint32_t>((load(bytes, i) & exponent) == exponent);
  }
  if (inf_or_nan == 0) return n;
  size_t i = 0;
  while ((load(bytes, i) & exponent) != exponent) ++i;
  return i;
}

size_t floats_to_f16(const float* x, size_t n, char* bytes) {
  size_t first_inf = n;
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = float_to_f16(x[i]);
    if (is_inf_f16(h) && first_inf == n) first_inf = i;
    store(bytes, i, h);
  }
  return first_inf;
}

size_t floats_to_bf16(const float* x, size_t n, char* bytes) {
  size_t first_inf = n;
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = float_to_bf16(x[i]);
    if (is_inf_bf16(h) && first_inf == n) first_inf = i;
    store(bytes, i, h);
  }
  return first_inf;
}

}  // namespace nextword
