// The kernel of math/q8_activations.h's products in 256-bit integer
// vectors (AVX2's vpmaddubsw and vpmaddwd), included by the AVX2 family and
// by the AVX-512 family, whose 32 vector registers hold more sums at once,
// and with NEXTWORD_Q8_VNNI by q8_vnni.cpp for CPUs with AVX-512 VNNI
// (vpdpbusd: the four-value sums in one instruction). All give the plain
// loop's bits.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/quant_blocks.h"
#include "math/block_kernels.h"  // word_of
#include "math/fused_kernels.h"  // NEXTWORD_VECTOR_OP
#include "math/kernel_paths.h"
#include "math/q8_activations.h"

namespace nextword {
namespace {

// Blocks of 32 values (Q4_0 .. Q8_0): a row of A's blocks loaded once for
// several rows of B. Signed values go in as |w| times a with w's sign
// (vpmaddubsw: 2 x 128 x 127 never saturates 16 bits), unsigned ones
// (Q4_1, Q5_1: 0 .. 31) as they are; pairs of those added (vpmaddwd) into 8
// lanes of 4 values each.
template <WeightType T>
using Q8Block32 = std::conditional_t<
    T == WeightType::kQ8_0, BlockQ8_0,
    std::conditional_t<
        T == WeightType::kQ4_0, BlockQ4_0,
        std::conditional_t<T == WeightType::kQ4_1, BlockQ4_1,
                           std::conditional_t<T == WeightType::kQ5_0, BlockQ5_0, BlockQ5_1>>>>;
template <WeightType T>
constexpr bool q8_minimum = T == WeightType::kQ4_1 || T == WeightType::kQ5_1;

// Bit j of x as byte j: 0x10 where set, else 0.
NEXTWORD_VECTOR_OP __m256i q8_fifth_bits(uint32_t x) {
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(x)),
      _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                          _mm256_set1_epi8(0x10));
}

template <WeightType T>
NEXTWORD_VECTOR_OP __m256i q8_weights(const char* row, int b) {
  const auto& block = reinterpret_cast<const Q8Block32<T>*>(row)[b];
  if constexpr (T == WeightType::kQ8_0) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block.q));
  } else {
    const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.qs));
    const __m128i low = _mm_set1_epi8(0xF);
    __m256i n = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(qs, 4), low), _mm_and_si128(qs, low));
    if constexpr (T == WeightType::kQ5_0 || T == WeightType::kQ5_1) {
      n = _mm256_or_si256(n, q8_fifth_bits(word_of(block.qh)));
    }
    if constexpr (T == WeightType::kQ4_0) return _mm256_sub_epi8(n, _mm256_set1_epi8(8));
    if constexpr (T == WeightType::kQ5_0) return _mm256_sub_epi8(n, _mm256_set1_epi8(16));
    return n;
  }
}

// Unsigned bytes u times signed bytes a, four at a time into 8 lanes.
NEXTWORD_VECTOR_OP __m256i q8_dot(__m256i u, __m256i a) {
#ifdef NEXTWORD_Q8_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, a);  // in one instruction
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, a), _mm256_set1_epi16(1));
#endif
}

NEXTWORD_VECTOR_OP float q8_sum8(__m256 v) {
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}

// Block b's products of rows [0, RA) of A (q, d; lda apart; sums, the
// blocks' sums of q, `blocks` apart) with rows [0, RB) of B, into
// acc[i][r]; Q4_1's and Q5_1's minimums into lane b % 8 of mins[i][r].
template <WeightType T, int RA, int RB>
NEXTWORD_VECTOR_OP void q8_step(__m256 (&acc)[RA][RB], float (&mins)[RA][RB][8], const int8_t* q,
                                const float* d, const float* sums, int lda, int blocks,
                                const char* B, size_t row_bytes, int b) {
  __m256i a[RA];
  float da[RA];
#pragma GCC unroll 4
  for (int i = 0; i < RA; ++i) {
    a[i] = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(q + static_cast<ptrdiff_t>(i) * lda + 32 * b));
    da[i] = d[static_cast<ptrdiff_t>(i) * (lda / 32) + b];
  }
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r) {
    const char* row = B + static_cast<size_t>(r) * row_bytes;
    // B's rows two groups on, from memory while these are multiplied (a
    // row of 576 values is a few cache lines: too short a stream for the
    // CPU's own prefetching to be ahead).
    _mm_prefetch(row + 2 * RB * row_bytes + sizeof(Q8Block32<T>) * static_cast<size_t>(b),
                 _MM_HINT_T0);
    const __m256i w = q8_weights<T>(row, b);
    const auto& block = reinterpret_cast<const Q8Block32<T>*>(row)[b];
    const float dw = _cvtsh_ss(block.d);  // exact, as f16_to_float
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) {
      __m256i p;
      if constexpr (q8_minimum<T>) {
        p = q8_dot(w, a[i]);
        const float sum = sums[static_cast<ptrdiff_t>(i) * blocks + b];
        mins[i][r][b % 8] = std::fma(-_cvtsh_ss(block.m) * da[i], sum, mins[i][r][b % 8]);
      } else {
        p = q8_dot(_mm256_abs_epi8(w), _mm256_sign_epi8(a[i], w));
      }
      acc[i][r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * da[i]), _mm256_cvtepi32_ps(p), acc[i][r]);
    }
  }
}

// K-quants: activation block b is sub-block s = b % 8 of super-block b / 8
// (Q6_K: its sub-blocks 2s and 2s + 1, lanes 0-3 and 4-7).
template <WeightType T>
constexpr bool q8_k_type =
    T == WeightType::kQ4_K || T == WeightType::kQ5_K || T == WeightType::kQ6_K;
template <WeightType T>
using Q8KBlock =
    std::conditional_t<T == WeightType::kQ4_K, BlockQ4_K,
                       std::conditional_t<T == WeightType::kQ5_K, BlockQ5_K, BlockQ6_K>>;

// A super-block's scales times 8 activation blocks' d, lane s (Q6_K: two
// vectors, lanes 2s and 2s + 1 each with block s's d), and Q4_K's or
// Q5_K's minimums times d, lane s: the same products as the plain loop's.
struct Q8KFactors {
  alignas(32) float scale[16];
  __m256 min;
};

template <WeightType T>
NEXTWORD_VECTOR_OP Q8KFactors q8_k_factors(const char* block, __m256 da) {
  const auto& b = *reinterpret_cast<const Q8KBlock<T>*>(block);
  const auto widen8 = [](const void* bytes) {  // 8 bytes as floats
    return _mm_loadl_epi64(static_cast<const __m128i*>(bytes));
  };
  Q8KFactors f;
  if constexpr (T == WeightType::kQ6_K) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(b.d));
    for (int h = 0; h < 2; ++h) {
      const __m256 sc = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(widen8(b.scales + 8 * h)));
      const __m256 pairs = _mm256_permutevar8x32_ps(da, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
      const __m256 da2 =
          h == 0 ? pairs : _mm256_permutevar8x32_ps(da, _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7));
      _mm256_store_ps(f.scale + 8 * h, _mm256_mul_ps(_mm256_mul_ps(d, sc), da2));
    }
    f.min = _mm256_setzero_ps();
  } else {
    const KScales k = k_scales(b.scales);
    const __m256 sc = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(widen8(k.scale)));
    const __m256 m = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(widen8(k.min)));
    _mm256_store_ps(f.scale, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(b.d)), sc), da));
    f.min = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(b.dmin)), m), da);
  }
  return f;
}

// Sub-block s's 32 values: Q4_K and Q5_K unsigned (0 .. 31), Q6_K signed.
template <WeightType T, int s>
NEXTWORD_VECTOR_OP __m256i q8_k_weights(const char* block) {
  const __m256i low4 = _mm256_set1_epi8(0xF);
  const auto load = [](const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  };
  const auto& b = *reinterpret_cast<const Q8KBlock<T>*>(block);
  if constexpr (T == WeightType::kQ6_K) {
    constexpr int half = s / 4, j = s % 4;
    const __m256i low = load(b.ql + 64 * half + 32 * (j % 2));
    const __m256i nibble =
        j >= 2 ? _mm256_and_si256(_mm256_srli_epi16(low, 4), low4) : _mm256_and_si256(low, low4);
    const __m256i top =
        _mm256_and_si256(_mm256_srli_epi16(load(b.qh + 32 * half), 2 * j), _mm256_set1_epi8(3));
    return _mm256_sub_epi8(_mm256_or_si256(nibble, _mm256_slli_epi16(top, 4)),
                           _mm256_set1_epi8(32));
  } else {
    const __m256i bytes = load(b.qs + 32 * (s / 2));
    __m256i w = s % 2 != 0 ? _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4)
                           : _mm256_and_si256(bytes, low4);
    if constexpr (T == WeightType::kQ5_K) {
      const __m256i bit = _mm256_and_si256(_mm256_srli_epi16(load(b.qh), s), _mm256_set1_epi8(1));
      w = _mm256_or_si256(w, _mm256_slli_epi16(bit, 4));
    }
    return w;
  }
}

// The sums of the 8 blocks of 32 values at q, lane b (exact integers).
NEXTWORD_VECTOR_OP __m256 q8_block_sums(const int8_t* q) {
  __m256i v[8];
  for (int b = 0; b < 8; ++b) {
    v[b] = q8_dot(_mm256_set1_epi8(1),
                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * b)));
  }
  const __m256i h01 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i h45 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_permute2x128_si256(h01, h45, 0x20),
                                             _mm256_permute2x128_si256(h01, h45, 0x31)));
}

// Sub-block s of the current super-blocks times rows [0, RA) of A.
template <WeightType T, int RA, int RB, int s>
NEXTWORD_VECTOR_OP void q8_k_step(__m256 (&acc)[RA][RB], const __m256i (&a)[RA][8],
                                  const char* const (&blocks)[RB], size_t row_bytes,
                                  const Q8KFactors (&f)[RA][RB]) {
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r) {
    // The rows two groups on, as the first 32-value blocks do.
    _mm_prefetch(blocks[r] + 2 * RB * row_bytes + sizeof(Q8KBlock<T>) * s / 8, _MM_HINT_T0);
    const __m256i w = q8_k_weights<T, s>(blocks[r]);
    [[maybe_unused]] const __m256i magnitude = _mm256_abs_epi8(w);
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) {
      if constexpr (T == WeightType::kQ6_K) {
        const __m256i p = q8_dot(magnitude, _mm256_sign_epi8(a[i][s], w));
        const __m256 scale = _mm256_set_m128(_mm_broadcast_ss(&f[i][r].scale[2 * s + 1]),
                                             _mm_broadcast_ss(&f[i][r].scale[2 * s]));
        acc[i][r] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(p), acc[i][r]);
      } else {
        const __m256i p = q8_dot(w, a[i][s]);
        acc[i][r] = _mm256_fmadd_ps(_mm256_broadcast_ss(&f[i][r].scale[s]), _mm256_cvtepi32_ps(p),
                                    acc[i][r]);
      }
    }
  }
}

template <WeightType T, int RA, int RB, int... S>
NEXTWORD_VECTOR_OP void q8_k_steps(__m256 (&acc)[RA][RB], const __m256i (&a)[RA][8],
                                   const char* const (&blocks)[RB], size_t row_bytes,
                                   const Q8KFactors (&f)[RA][RB],
                                   std::integer_sequence<int, S...>) {
  (q8_k_step<T, RA, RB, S>(acc, a, blocks, row_bytes, f), ...);
}

// Rows [0, RA) of A (q, d and the block sums, `sums`, blocks apart) times
// rows [0, RB) of B, super-block after super-block: acc as q8_step's, and
// the minimums' products in 8 lanes (lane s: sub-block s's), subtracted
// from the sum at the end.
template <WeightType T, int RA, int RB>
NEXTWORD_HOT_LOOP void q8_k_rows(int blocks, const int8_t* q, const float* d, const float* sums,
                                 int lda, const char* B, size_t row_bytes, float* C, int ldc) {
  __m256 acc[RA][RB], mins[RA][RB];
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) acc[i][r] = mins[i][r] = _mm256_setzero_ps();
  }
  for (int super = 0; super < blocks / 8; ++super) {
    __m256i a[RA][8];
    Q8KFactors f[RA][RB];
    const char* block[RB];
    for (int r = 0; r < RB; ++r) {
      block[r] =
          B + static_cast<size_t>(r) * row_bytes + sizeof(Q8KBlock<T>) * static_cast<size_t>(super);
    }
    for (int i = 0; i < RA; ++i) {
      const ptrdiff_t at = static_cast<ptrdiff_t>(i) * lda + 256 * super;
      for (int s = 0; s < 8; ++s) {
        a[i][s] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + at + 32 * s));
      }
      const __m256 da = _mm256_loadu_ps(d + static_cast<ptrdiff_t>(i) * (lda / 32) + 8 * super);
      for (int r = 0; r < RB; ++r) {
        f[i][r] = q8_k_factors<T>(block[r], da);
        if constexpr (T != WeightType::kQ6_K) {
          const __m256 sum = _mm256_loadu_ps(sums + static_cast<ptrdiff_t>(i) * blocks + 8 * super);
          mins[i][r] = _mm256_fmadd_ps(f[i][r].min, sum, mins[i][r]);
        }
      }
    }
    q8_k_steps<T, RA, RB>(acc, a, block, row_bytes, f, std::make_integer_sequence<int, 8>());
  }
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) {
      const float c = q8_sum8(acc[i][r]);
      C[static_cast<ptrdiff_t>(i) * ldc + r] = T == WeightType::kQ6_K ? c : c - q8_sum8(mins[i][r]);
    }
  }
}

template <WeightType T, int RA, int RB>
NEXTWORD_HOT_LOOP void q8_rows(int blocks, const int8_t* q, const float* d, const float* sums,
                               int lda, const char* B, size_t row_bytes, float* C, int ldc) {
  if constexpr (q8_k_type<T>) {
    q8_k_rows<T, RA, RB>(blocks, q, d, sums, lda, B, row_bytes, C, ldc);
  } else {
    __m256 acc[RA][RB];
    float mins[RA][RB][8] = {};
    for (int i = 0; i < RA; ++i) {
      for (int r = 0; r < RB; ++r) acc[i][r] = _mm256_setzero_ps();
    }
    for (int b = 0; b < blocks; ++b) {
      q8_step<T, RA, RB>(acc, mins, q, d, sums, lda, blocks, B, row_bytes, b);
    }
    for (int i = 0; i < RA; ++i) {
      for (int r = 0; r < RB; ++r) {
        const float c = q8_sum8(acc[i][r]);
        C[static_cast<ptrdiff_t>(i) * ldc + r] =
            q8_minimum<T> ? c - q8_sum8(_mm256_loadu_ps(mins[i][r])) : c;
      }
    }
  }
}

template <WeightType T, int RA>
void q8_row_group(int N, int blocks, const int8_t* q, const float* d, const float* sums, int lda,
                  const BlockRows& B, float* C, int ldc) {
  // One row of A takes B's rows one at a time: read from memory at 17
  // against 9 GB/s (Q8_0, four at a time), generation 10-80% faster.
  constexpr int RB = RA != 1 ? 3 : 1;
  const char* rows = static_cast<const char*>(B.rows);
  int j = 0;
  for (; j + RB <= N; j += RB) {
    q8_rows<T, RA, RB>(blocks, q, d, sums, lda, rows + static_cast<size_t>(j) * B.row_bytes,
                       B.row_bytes, C + j, ldc);
  }
  for (; j < N; ++j) {
    q8_rows<T, RA, 1>(blocks, q, d, sums, lda, rows + static_cast<size_t>(j) * B.row_bytes,
                      B.row_bytes, C + j, ldc);
  }
}

template <WeightType T>
void q8_product_of(int M, int N, int K, const int8_t* q, const float* d, int lda,
                   const BlockRows& B, float* C, int ldc) {
  const int blocks = K / 32;
  // K-quants subtract minimums times each block's sum of q: those sums once.
  thread_local std::vector<float> sums;
  if constexpr (q8_k_type<T> || q8_minimum<T>) {
    sums.resize(static_cast<size_t>(M) * static_cast<size_t>(blocks));
    for (int i = 0; i < M; ++i) {
      float* row_sums = sums.data() + static_cast<ptrdiff_t>(i) * blocks;
      const int8_t* row = q + static_cast<ptrdiff_t>(i) * lda;
      int b = 0;
      for (; b + 8 <= blocks; b += 8) _mm256_storeu_ps(row_sums + b, q8_block_sums(row + 32 * b));
      for (; b < blocks; ++b) {
        const __m256i lanes =
            q8_dot(_mm256_set1_epi8(1),
                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 32 * b)));
        alignas(32) int32_t v[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(v), lanes);
        row_sums[b] = static_cast<float>(v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]);
      }
    }
  }
  int i = 0;
  for (; i + 4 <= M; i += 4) {
    q8_row_group<T, 4>(N, blocks, q + static_cast<ptrdiff_t>(i) * lda,
                       d + static_cast<ptrdiff_t>(i) * (lda / 32),
                       sums.data() + static_cast<ptrdiff_t>(i) * blocks, lda, B,
                       C + static_cast<ptrdiff_t>(i) * ldc, ldc);
  }
  for (; i < M; ++i) {
    q8_row_group<T, 1>(N, blocks, q + static_cast<ptrdiff_t>(i) * lda,
                       d + static_cast<ptrdiff_t>(i) * (lda / 32),
                       sums.data() + static_cast<ptrdiff_t>(i) * blocks, lda, B,
                       C + static_cast<ptrdiff_t>(i) * ldc, ldc);
  }
}

void q8_kernel_product(int M, int N, int K, const int8_t* q, const float* d, int lda,
                       const BlockRows& B, float* C, int ldc) {
  switch (B.type) {
    case WeightType::kQ8_0: return q8_product_of<WeightType::kQ8_0>(M, N, K, q, d, lda, B, C, ldc);
    case WeightType::kQ4_K: return q8_product_of<WeightType::kQ4_K>(M, N, K, q, d, lda, B, C, ldc);
    case WeightType::kQ5_K: return q8_product_of<WeightType::kQ5_K>(M, N, K, q, d, lda, B, C, ldc);
    case WeightType::kQ6_K: return q8_product_of<WeightType::kQ6_K>(M, N, K, q, d, lda, B, C, ldc);
    case WeightType::kQ4_1: return q8_product_of<WeightType::kQ4_1>(M, N, K, q, d, lda, B, C, ldc);
    case WeightType::kQ5_0: return q8_product_of<WeightType::kQ5_0>(M, N, K, q, d, lda, B, C, ldc);
    case WeightType::kQ5_1: return q8_product_of<WeightType::kQ5_1>(M, N, K, q, d, lda, B, C, ldc);
    default: return q8_product_of<WeightType::kQ4_0>(M, N, K, q, d, lda, B, C, ldc);
  }
}

}  // namespace
}  // namespace nextword
