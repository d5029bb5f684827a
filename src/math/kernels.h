// What the forward (layers.cpp) and backward (layers_backward.cpp) math of
// math/layers.h share: reductions over a row, a row's mean and deviation,
// GELU's constants, e^x for loops that vectorize, and how much work is worth
// waking the threads for.
// Inline, so that the vectorized clones of layers.cpp inline them too.
#pragma once

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "base/vector_clones.h"  // layers.cpp and row_products.cpp are built without fused
#include "math/layers.h"         // Rotary
                                 // multiply-adds, so there each clone gives the same bits

namespace nextword {

// Row loops over this many floats are worth spreading over the threads.
constexpr size_t kParallelRows = 1 << 14;
// Element loops this long are worth spreading over the threads.
constexpr size_t kParallelElements = 1 << 15;

// e^x in float32 with a relative error of about 1e-7 (Cephes' expf: x = n
// ln 2 + r, a degree-6 polynomial for e^r, then 2^n from its exponent bits);
// 0 below -87, where e^x is under float's smallest normal, and infinity
// above 88.72, where it overflows (in between, e^88). Unlike std::exp it has
// no calls or branches, so loops of it vectorize (built with
// -fno-trapping-math, see CMakeLists.txt): with std::tanh, GELU's tanh is
// a large share of a batched forward pass.
inline float fast_exp(float x_in) {
  float x = x_in < -87.0f ? -87.0f : x_in;  // so that 2^n stays a normal float
  x = x > 88.0f ? 88.0f : x;
  // n = round(x / ln 2): adding 1.5 * 2^23 leaves n in the low mantissa bits.
  const float shifted = x * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  float r = x - n * 0.693359375f;
  r -= n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  const uint32_t bits = (std::bit_cast<uint32_t>(shifted) - 0x4B400000u + 127u) << 23;
  const float value =
      x_in > 88.72f ? std::numeric_limits<float>::infinity() : e * std::bit_cast<float>(bits);
  return x_in < -87.0f ? 0.0f : value;
}

// e^x in double to about 1 ulp, written to vectorize: x = n ln 2 + r with
// |r| <= ln(2)/2, e^r by its Taylor series to r^13 (the rest below 1e-17
// relative), times 2^n. x below -708 gives 0 (x above 709 is not asked for).
inline double exact_exp(double x_in) {
  const double x = x_in < -708.0 ? -708.0 : (x_in > 709.0 ? 709.0 : x_in);
  // n = round(x / ln 2): adding 1.5 * 2^52 leaves n in the low mantissa bits.
  constexpr double kShift = 6755399441055744.0;
  const double shifted = x * 1.4426950408889634 + kShift;
  const double n = shifted - kShift;
  const double r = (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // 2^n from the same bits, in integers (no double-to-integer conversion).
  const uint64_t bits = (std::bit_cast<uint64_t>(shifted) - std::bit_cast<uint64_t>(kShift) + 1023u)
                        << 52;
  return x_in < -708.0 ? 0.0 : p * std::bit_cast<double>(bits);
}

// ln x as a float for x > 0 (Cephes' logf, written to vectorize): x = m 2^e
// with m in [sqrt(1/2), sqrt(2)), ln m by a polynomial in m - 1. Zero,
// subnormal and negative x give -FLT_MAX.
inline float fast_log(float x_in) {
  const uint32_t bits = std::bit_cast<uint32_t>(x_in);
  float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 127);
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);  // in [1, 2)
  const bool high = m > 1.41421356f;
  m = high ? m * 0.5f : m;
  e = high ? e + 1.0f : e;
  const float f = m - 1.0f, z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y += e * -2.12194440e-4f;
  y -= 0.5f * z;
  const float value = f + y + e * 0.693359375f;
  return x_in >= 1.17549435e-38f ? value : -std::numeric_limits<float>::max();
}

// Runs block(at, count) over [0, n) in pieces of 4,096 elements, spread over
// the threads when there are at least kParallelElements: the element loops'
// vectorized clones are called per piece, outside OpenMP's outlined loop.
template <class Block>
void for_element_blocks(size_t n, Block block) {
  constexpr size_t kBlock = 4096;
  const size_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
  for (size_t b = 0; b < blocks; ++b) block(b * kBlock, std::min(kBlock, n - b * kBlock));
}

// Runs rows(begin, end) on each OpenMP thread for its share of [0, n), in
// order of thread: the split of the products of everything that prints.
template <class Rows>
void on_thread_rows(int n, Rows rows) {
#pragma omp parallel
  {
    const int id = omp_get_thread_num(), count = omp_get_num_threads();
    rows(static_cast<int>(int64_t{n} * id / count),
         static_cast<int>(int64_t{n} * (id + 1) / count));
  }
}

// gelu(v) = 0.5 v (1 + tanh(kGeluC (v + kGeluCubic v^3)))
inline const float kGeluC = std::sqrt(2.0f / static_cast<float>(M_PI));
constexpr float kGeluCubic = 0.044715f;

// Reductions in eight independent lanes, so that they vectorize without
// reordering any single chain of additions.
constexpr int kLanes = 8;

inline double sum_of(const float* x, int n) {
  double lane[kLanes] = {};
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] += x[j + k];
  }
  double total = 0.0;
  for (int k = 0; k < kLanes; ++k) total += lane[k];
  for (; j < n; ++j) total += x[j];
  return total;
}

inline double squared_deviation(const float* x, int n, double mean) {
  double lane[kLanes] = {};
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] += (x[j + k] - mean) * (x[j + k] - mean);
  }
  double total = 0.0;
  for (int k = 0; k < kLanes; ++k) total += lane[k];
  for (; j < n; ++j) total += (x[j] - mean) * (x[j] - mean);
  return total;
}

inline float max_of(const float* x, int n) {
  float lane[kLanes];
  for (float& m : lane) m = -std::numeric_limits<float>::infinity();
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] = x[j + k] > lane[k] ? x[j + k] : lane[k];
  }
  float m = lane[0];
  for (int k = 1; k < kLanes; ++k) m = lane[k] > m ? lane[k] : m;
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

struct RowStatistics {
  double mean, rstd;  // rstd = 1 / sqrt(biased variance + eps)
};

// Accumulated in double: rows can be long and values far from zero.
inline RowStatistics row_statistics(const float* x, int d, float eps) {
  const double mean = sum_of(x, d) / d;
  const double var = squared_deviation(x, d, mean) / d;
  return {mean, 1.0 / std::sqrt(var + eps)};
}

// 1 / sqrt(mean(x^2) + eps), RMSNorm's scale of a row, accumulated in double.
inline double rms_rstd(const float* x, int d, float eps) {
  return 1.0 / std::sqrt(squared_deviation(x, d, 0.0) / d + eps);
}

// Rotary positions' cos and sin: [positions, d_k/2, 2], entry (p, i) the cos
// and sin of p * theta^(-2i/d_k) / factor_i (factor_i = 1 without factors),
// computed in double and kept per thread for the rotation last asked for
// (layers.cpp), so that a row's angles are the same bits whatever the pass
// they are used in.
const float* rope_cos_sin(int positions, int d_k, const Rotary& rotary);

// Turns the pairs of columns of each of the n_heads heads of d_k columns of
// x[T, ld] (pair i: columns (2i, 2i+1), or (i, i + d_k/2) with
// rotary.halves) by the angles of rotary positions first .. first+T-1
// (rope_cos_sin), or back by the same angles (the rotation's transpose).
inline void turn_pairs(float* x, int T, int ld, int n_heads, int d_k, const Rotary& rotary,
                       int first, bool back) {
  const float* angles = rope_cos_sin(first + T, d_k, rotary);
  const int half = d_k / 2;
  // Pair i's columns: i * step and i * step + other.
  const int step = rotary.halves ? 1 : 2, other = rotary.halves ? half : 1;
  for (int t = 0; t < T; ++t) {
    const float* cs = angles + static_cast<size_t>(first + t) * static_cast<size_t>(2 * half);
    for (int h = 0; h < n_heads; ++h) {
      float* head = x + static_cast<size_t>(t) * static_cast<size_t>(ld) +
                    static_cast<size_t>(h) * static_cast<size_t>(d_k);
      for (int i = 0; i < half; ++i) {
        const float c = cs[2 * i], s = back ? -cs[2 * i + 1] : cs[2 * i + 1];
        float* pair = head + i * step;
        const float x0 = pair[0], x1 = pair[other];
        pair[0] = x0 * c - x1 * s;
        pair[other] = x0 * s + x1 * c;
      }
    }
  }
}

// silu(g) = g * sigmoid(g) and its derivative sigmoid(g) (1 + g (1 - sigmoid(g))),
// from sigmoid(g) = 1 / (1 + e^-g).
inline float silu_of(float g, float sigmoid) { return g * sigmoid; }
inline float silu_derivative(float g, float sigmoid) {
  return sigmoid * (1.0f + g * (1.0f - sigmoid));
}

}  // namespace nextword
