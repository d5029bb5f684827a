// The two 16-bit floats a weights.safetensors may hold (data/FORMAT.md):
// IEEE 754 binary16 ("F16": 1 sign, 5 exponent, 10 mantissa bits) and
// bfloat16 ("BF16": the upper half of a float32). Plain portable C++, no
// F16C: bits in, bits out.
//
// Widening (half -> float32) is exact for every bit pattern, subnormals and
// signed zeros included; inf stays inf and NaN stays NaN. Narrowing (float32
// -> half) rounds to nearest, ties to even; a finite value too large for the
// half becomes inf (F16: |x| >= 65520, BF16: |x| >= 0x1.fep127 + half an ulp),
// which callers test with is_inf_f16 / is_inf_bf16. F16 keeps its
// subnormals; what is below half the smallest one (2^-25) becomes a signed 0.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace nextword {

// Branch-free (masks, not ifs), so that a loop of it runs as vector code.
constexpr float f16_to_float(uint16_t h) {
  const uint32_t bits = uint32_t{h & 0x7fffu} << 13;  // exponent, mantissa in float32 place
  const uint32_t exponent = bits & (0x1fu << 23);
  const uint32_t normal = bits + ((127u - 15u) << 23);  // the exponent rebiased
  // Zero and subnormals, m * 2^-24: exactly 2^-14 (1 + m/1024) - 2^-14, which
  // never makes a float32 subnormal (so flush-to-zero modes cannot change it).
  const uint32_t small =
      std::bit_cast<uint32_t>(std::bit_cast<float>(normal + (1u << 23)) - 0x1p-14f);
  const uint32_t inf_nan = 0u - static_cast<uint32_t>(exponent == 0x1fu << 23);
  const uint32_t tiny = 0u - static_cast<uint32_t>(exponent == 0);
  const uint32_t magnitude = normal + (inf_nan & ((128u - 16u) << 23));  // all exponent bits set
  return std::bit_cast<float>((magnitude & ~tiny) | (small & tiny) | (uint32_t{h & 0x8000u} << 16));
}

constexpr float bf16_to_float(uint16_t h) { return std::bit_cast<float>(uint32_t{h} << 16); }

constexpr uint16_t float_to_f16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) {  // NaN: quiet, keeping the top of its payload
    return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  }
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (a >= 0x38800000u) {                                              // >= 2^-14: a normal half
    uint32_t r = a - ((127u - 15u) << 23);
    r += 0xfffu + ((r >> 13) & 1u);  // round the 13 dropped bits to nearest even
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  if (a <= 0x33000000u) return sign;  // <= 2^-25: rounds to (signed) zero
  // A subnormal half m * 2^-24: m = the 24-bit significand shifted right by
  // 126 - exponent (14 .. 24 bits), rounded to nearest even. m may reach
  // 0x400, which is the smallest normal half's encoding, as it should.
  const uint32_t shift = 126u - (a >> 23);
  const uint32_t significand = (a & 0x7fffffu) | 0x800000u;
  uint32_t m = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (m & 1u) != 0)) ++m;
  return static_cast<uint16_t>(sign | m);
}

constexpr uint16_t float_to_bf16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

constexpr bool is_inf_f16(uint16_t h) { return (h & 0x7fffu) == 0x7c00u; }
constexpr bool is_inf_bf16(uint16_t h) { return (h & 0x7fffu) == 0x7f80u; }

// n little-endian halves at `bytes` (any alignment) into n floats; returns
// whether they are all finite (no inf, no NaN).
bool f16_to_floats(const char* bytes, size_t n, float* out);
bool bf16_to_floats(const char* bytes, size_t n, float* out);
// One of the two, as `bf16` says (else F16).
bool halves_to_floats(const char* bytes, bool bf16, size_t n, float* out);

// The index of the first of n little-endian halves at `bytes` that is inf or
// NaN, or n; the test of all n runs as vector code.
size_t first_non_finite_half(const char* bytes, bool bf16, size_t n);

// n floats into n little-endian halves at `bytes`. Returns n when every value
// fits, else the index of the first that became inf (the rest are written).
size_t floats_to_f16(const float* x, size_t n, char* bytes);
size_t floats_to_bf16(const float* x, size_t n, char* bytes);

}  // namespace nextword
