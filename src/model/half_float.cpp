#include "model/half_float.h"

#include <cstring>

namespace nextword {
namespace {

uint16_t load(const char* bytes, size_t i) {
  uint16_t h = 0;
  std::memcpy(&h, bytes + 2 * i, 2);  // little-endian, as safetensors.cpp asserts
  return h;
}

void store(char* bytes, size_t i, uint16_t h) { std::memcpy(bytes + 2 * i, &h, 2); }

}  // namespace

void f16_to_floats(const char* bytes, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = f16_to_float(load(bytes, i));
}

void bf16_to_floats(const char* bytes, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = bf16_to_float(load(bytes, i));
}

void halves_to_floats(const char* bytes, bool bf16, size_t n, float* out) {
  (bf16 ? bf16_to_floats : f16_to_floats)(bytes, n, out);
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
