// The kernels of math/q8_activations.h's products, included by the AVX2
// family, by the AVX-512 family and, with NEXTWORD_Q8_VNNI, by q8_vnni.cpp
// for CPUs with AVX-512 VNNI (vpdpbusd: the four-value sums in one
// instruction): B's blocks read in place for a few rows of A, decoded once
// for many (q8_expanded.h). All give the plain loop's bits: even blocks'
// sums in lanes 0-7, odd blocks' in 8-15.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "math/q8_activations.h"
#include "math/q8_blocks.h"
#include "math/q8_expanded.h"

namespace nextword {
namespace {

// Blocks b and b + 1 (b alone if kOne) of rows [0, RA) of A (q, d; lda
// apart; sums, the blocks' sums of q, `blocks` apart) times rows [0, RB) of
// B, into acc[i][r]; Q4_1's and Q5_1's minimums into lane b % 8 of
// mins[i][r]. Each lane's scale is B's d times A's, as the plain loop's.
template <class L, WeightType T, int RA, int RB, bool kOne>
NEXTWORD_VECTOR_OP void q8_step(typename L::VF (&acc)[RA][RB], float (&mins)[RA][RB][8],
                                const int8_t* q, const float* d, const float* sums, int lda,
                                int blocks, const char* B, size_t row_bytes, int b) {
  constexpr int kBlocks = kOne ? 1 : 2;
  typename L::VI a[RA];
  typename L::VF da[RA];
  float da1[RA][2];
#pragma GCC unroll 4
  for (int i = 0; i < RA; ++i) {
    const int8_t* row = q + static_cast<ptrdiff_t>(i) * lda + 32 * b;
    for (int k = 0; k < kBlocks; ++k) da1[i][k] = d[static_cast<ptrdiff_t>(i) * (lda / 32) + b + k];
    if constexpr (kOne) {
      a[i] = L::join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)),
                     _mm256_setzero_si256());
      da[i] = L::pair(da1[i][0], 0);
    } else {
      a[i] = L::load(row);
      da[i] = L::pair(da1[i][0], da1[i][1]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r) {
    const char* row = B + static_cast<size_t>(r) * row_bytes;
    // B's rows two groups on, from memory while these are multiplied (a
    // row of 576 values is a few cache lines: too short a stream for the
    // CPU's own prefetching to be ahead).
    _mm_prefetch(row + 2 * RB * row_bytes + sizeof(Q8Block32<T>) * static_cast<size_t>(b),
                 _MM_HINT_T0);
    const auto* block = reinterpret_cast<const Q8Block32<T>*>(row) + b;
    const typename L::VI w =
        L::join(q8_weights<T>(row, b), kOne ? _mm256_setzero_si256() : q8_weights<T>(row, b + 1));
    const typename L::VF dw =
        L::pair(_cvtsh_ss(block[0].d), kOne ? 0.0f : _cvtsh_ss(block[kBlocks - 1].d));
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) {
      typename L::VI p;
      if constexpr (q8_minimum<T>) {
        p = L::dot(w, a[i]);
        for (int k = 0; k < kBlocks; ++k) {
          const float sum = sums[static_cast<ptrdiff_t>(i) * blocks + b + k];
          float& min = mins[i][r][(b + k) % 8];
          min = std::fma(-_cvtsh_ss(block[k].m) * da1[i][k], sum, min);
        }
      } else {
        p = L::dot_signed(w, a[i]);
      }
      if constexpr (kOne) {
        acc[i][r] = L::fma_even(L::mul(dw, da[i]), p, acc[i][r]);
      } else {
        acc[i][r] = L::fma(L::mul(dw, da[i]), p, acc[i][r]);
      }
    }
  }
}

// Sub-blocks s and s + 1 of the current super-blocks times rows [0, RA)
// of A; scale[i][r]: the factors times A's d (Q6_K: 16 of them).
template <class L, WeightType T, int RA, int RB, int s>
NEXTWORD_VECTOR_OP void q8_k_step(typename L::VF (&acc)[RA][RB], const typename L::VI (&a)[RA][4],
                                  const char* const (&blocks)[RB], size_t row_bytes,
                                  const float (&scale)[RA][RB][16]) {
#pragma GCC unroll 4
  for (int r = 0; r < RB; ++r) {
    // The rows two groups on, as the 32-value blocks do.
    _mm_prefetch(blocks[r] + 2 * RB * row_bytes + sizeof(Q8KBlock<T>) * s / 8, _MM_HINT_T0);
    const typename L::VI w =
        L::join(q8_k_weights<T, s>(blocks[r]), q8_k_weights<T, s + 1>(blocks[r]));
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) {
      if constexpr (T == WeightType::kQ6_K) {
        acc[i][r] = L::fma(L::template quad_of<2 * s>(scale[i][r]), L::dot_signed(w, a[i][s / 2]),
                           acc[i][r]);
      } else {
        acc[i][r] = L::fma(L::template pair_of<s>(scale[i][r]), L::dot(w, a[i][s / 2]), acc[i][r]);
      }
    }
  }
}

template <class L, WeightType T, int RA, int RB, int... S>
NEXTWORD_VECTOR_OP void q8_k_steps(typename L::VF (&acc)[RA][RB], const typename L::VI (&a)[RA][4],
                                   const char* const (&blocks)[RB], size_t row_bytes,
                                   const float (&scale)[RA][RB][16],
                                   std::integer_sequence<int, S...>) {
  (q8_k_step<L, T, RA, RB, 2 * S>(acc, a, blocks, row_bytes, scale), ...);
}

// Rows [0, RA) of A (q, d and the block sums, `sums`, blocks apart) times
// rows [0, RB) of B, super-block after super-block: acc as q8_step's, and
// the minimums' products in 8 lanes (lane s: sub-block s's), subtracted
// from the sum at the end.
template <class L, WeightType T, int RA, int RB>
NEXTWORD_HOT_LOOP void q8_k_rows(int blocks, const int8_t* q, const float* d, const float* sums,
                                 int lda, const char* B, size_t row_bytes, float* C, int ldc) {
  typename L::VF acc[RA][RB];
  __m256 mins[RA][RB];
  q8_zero<L>(acc, mins);
  for (int super = 0; super < blocks / 8; ++super) {
    typename L::VI a[RA][4];
    alignas(32) float scale[RA][RB][16];
    const char* block[RB];
    Q8KFactors f[RB];
    for (int r = 0; r < RB; ++r) {
      block[r] =
          B + static_cast<size_t>(r) * row_bytes + sizeof(Q8KBlock<T>) * static_cast<size_t>(super);
      f[r] = q8_k_factors<T>(block[r]);
    }
    for (int i = 0; i < RA; ++i) {
      const ptrdiff_t at = static_cast<ptrdiff_t>(i) * lda + 256 * super;
      for (int s = 0; s < 4; ++s) a[i][s] = L::load(q + at + 64 * s);
      const __m256 da = _mm256_loadu_ps(d + static_cast<ptrdiff_t>(i) * (lda / 32) + 8 * super);
      const __m256 sum = _mm256_loadu_ps(sums + static_cast<ptrdiff_t>(i) * blocks + 8 * super);
      for (int r = 0; r < RB; ++r) {
        if constexpr (T == WeightType::kQ6_K) {
          // Scales 2k and 2k + 1 both take block k's d.
          const __m256 lo = _mm256_permutevar8x32_ps(da, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
          const __m256 hi = _mm256_permutevar8x32_ps(da, _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7));
          _mm256_store_ps(scale[i][r], _mm256_mul_ps(f[r].scale[0], lo));
          _mm256_store_ps(scale[i][r] + 8, _mm256_mul_ps(f[r].scale[1], hi));
        } else {
          _mm256_store_ps(scale[i][r], _mm256_mul_ps(f[r].scale[0], da));
          mins[i][r] = _mm256_fmadd_ps(_mm256_mul_ps(f[r].min, da), sum, mins[i][r]);
        }
      }
    }
    q8_k_steps<L, T, RA, RB>(acc, a, block, row_bytes, scale, std::make_integer_sequence<int, 4>());
  }
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) {
      const float c = L::sum(acc[i][r]);
      C[static_cast<ptrdiff_t>(i) * ldc + r] = T == WeightType::kQ6_K ? c : c - q8_sum8(mins[i][r]);
    }
  }
}

template <class L, WeightType T, int RA, int RB>
NEXTWORD_HOT_LOOP void q8_rows(int blocks, const int8_t* q, const float* d, const float* sums,
                               int lda, const char* B, size_t row_bytes, float* C, int ldc) {
  if constexpr (q8_k_type<T>) {
    q8_k_rows<L, T, RA, RB>(blocks, q, d, sums, lda, B, row_bytes, C, ldc);
  } else {
    typename L::VF acc[RA][RB];
    float mins[RA][RB][8] = {};
    for (int i = 0; i < RA; ++i) {
      for (int r = 0; r < RB; ++r) acc[i][r] = L::zero();
    }
    int b = 0;
    for (; b + 2 <= blocks; b += 2) {
      q8_step<L, T, RA, RB, false>(acc, mins, q, d, sums, lda, blocks, B, row_bytes, b);
    }
    if (b < blocks)
      q8_step<L, T, RA, RB, true>(acc, mins, q, d, sums, lda, blocks, B, row_bytes, b);
    for (int i = 0; i < RA; ++i) {
      for (int r = 0; r < RB; ++r) {
        const float c = L::sum(acc[i][r]);
        C[static_cast<ptrdiff_t>(i) * ldc + r] =
            q8_minimum<T> ? c - q8_sum8(_mm256_loadu_ps(mins[i][r])) : c;
      }
    }
  }
}

// One row of A times B's rows, one at a time (read from memory at 17 GB/s,
// against 9 four at a time: generation 10-80% faster), the pair of blocks
// in two 256-bit vectors (fewer instructions than one 512-bit vector,
// where memory sets the pace).
template <WeightType T>
void q8_row(int N, int blocks, const int8_t* q, const float* d, const float* sums,
            const BlockRows& B, float* C) {
  const char* rows = static_cast<const char*>(B.rows);
  for (int j = 0; j < N; ++j) {
    q8_rows<Ymm2, T, 1, 1>(blocks, q, d, sums, 32 * blocks,
                           rows + static_cast<size_t>(j) * B.row_bytes, B.row_bytes, C + j, 0);
  }
}

// From this many rows of A on, B's blocks are decoded once for all of them.
constexpr int kQ8DecodedRows = 2;

template <WeightType T>
void q8_product_of(int M, int N, int K, const int8_t* q, const float* d, int lda,
                   const BlockRows& B, float* C, int ldc) {
  const int blocks = K / 32;
  // K-quants subtract minimums times each block's sum of q: those sums once.
  thread_local std::vector<float> sums;
  sums.resize(static_cast<size_t>(M) * static_cast<size_t>(blocks));
  if constexpr (q8_k_type<T> || q8_minimum<T>) {
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
  if (M >= kQ8DecodedRows) {
    return q8_decoded_product<T>(M, N, K, q, d, sums.data(), lda, B, C, ldc);
  }
  for (int i = 0; i < M; ++i) {
    q8_row<T>(
        N, blocks, q + static_cast<ptrdiff_t>(i) * lda, d + static_cast<ptrdiff_t>(i) * (lda / 32),
        sums.data() + static_cast<ptrdiff_t>(i) * blocks, B, C + static_cast<ptrdiff_t>(i) * ldc);
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
