// math/q8_activations.h's products for many rows of A at once, included by
// q8_kernels.h: a stretch of B's rows is decoded once into what every
// q8 product reads of a block (its 32 values as signed bytes, the scale of
// its lanes 0-3 and 4-7, its minimum), and all rows of A run on that, in
// tiles of rows of A by rows of B. The same sums in the same order as the
// blocks read in place, so the same bits: decoding is exact.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "math/q8_blocks.h"

namespace nextword {
namespace {

// A stretch of n rows of B decoded: w (K values a row), scale (2 a block:
// lanes 0-3, lanes 4-7) and min (1 a block) for the types with one.
struct Q8Decoded {
  std::vector<int8_t> w;
  std::vector<float> scale, min;
};

template <WeightType T>
NEXTWORD_VECTOR_OP void q8_decode_row(const char* row, int blocks, int8_t* w, float* scale,
                                      float* min) {
  if constexpr (q8_k_type<T>) {
    for (int super = 0; super < blocks / 8; ++super) {
      const char* block = row + sizeof(Q8KBlock<T>) * static_cast<size_t>(super);
      int8_t* values = w + 256 * super;
      [&]<int... S>(std::integer_sequence<int, S...>) {
        (_mm256_storeu_si256(reinterpret_cast<__m256i*>(values + 32 * S),
                             q8_k_weights<T, S>(block)),
         ...);
      }
      (std::make_integer_sequence<int, 8>());
      const Q8KFactors f = q8_k_factors<T>(block);
      float* scales = scale + 16 * super;
      if constexpr (T == WeightType::kQ6_K) {
        _mm256_storeu_ps(scales, f.scale[0]);
        _mm256_storeu_ps(scales + 8, f.scale[1]);
      } else {
        // Sub-block s's scale for both halves of its block.
        const __m256 low = _mm256_unpacklo_ps(f.scale[0], f.scale[0]);
        const __m256 high = _mm256_unpackhi_ps(f.scale[0], f.scale[0]);
        _mm256_storeu_ps(scales, _mm256_permute2f128_ps(low, high, 0x20));
        _mm256_storeu_ps(scales + 8, _mm256_permute2f128_ps(low, high, 0x31));
        _mm256_storeu_ps(min + 8 * super, f.min);
      }
    }
  } else {
    const auto* block = reinterpret_cast<const Q8Block32<T>*>(row);
    for (int b = 0; b < blocks; ++b) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(w + 32 * b), q8_weights<T>(row, b));
      scale[2 * b] = scale[2 * b + 1] = _cvtsh_ss(block[b].d);
      if constexpr (q8_minimum<T>) min[b] = -_cvtsh_ss(block[b].m);
    }
  }
}

// The minimums' products of blocks [g, g + n), n <= 8, one lane each, of
// rows [0, RA) of A (d, lda / 32 apart; the blocks' sums, `blocks` apart)
// by rows [0, RB) of the decoded B's minimums (`blocks` apart); the lanes
// past n add 0 x 0, which leaves them as they are (never -0: they start at
// +0).
template <int RA, int RB>
NEXTWORD_VECTOR_OP void q8_decoded_mins(__m256 (&mins)[RA][RB], int g, int n, const float* d,
                                        int lda, const float* sums, int blocks, const float* min) {
  const __m256i mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int i = 0; i < RA; ++i) {
    const __m256 da = _mm256_maskload_ps(d + static_cast<ptrdiff_t>(i) * (lda / 32) + g, mask);
    const __m256 sum = _mm256_maskload_ps(sums + static_cast<ptrdiff_t>(i) * blocks + g, mask);
    for (int r = 0; r < RB; ++r) {
      const __m256 m = _mm256_maskload_ps(min + static_cast<ptrdiff_t>(r) * blocks + g, mask);
      mins[i][r] = _mm256_fmadd_ps(_mm256_mul_ps(m, da), sum, mins[i][r]);
    }
  }
}

// Rows [0, RA) of A (q, d and the blocks' sums, lda, lda / 32 and `blocks`
// apart) times rows [0, RB) of the decoded B (K values and 2 * blocks
// scales apart): the pairs of blocks as q8_step's, the minimums 8 blocks
// at a time in lanes b % 8, as the plain loop's.
template <class L, bool kSigned, bool kMin, int RA, int RB>
NEXTWORD_HOT_LOOP void q8_decoded_rows(int blocks, const int8_t* q, const float* d,
                                       const float* sums, int lda, const int8_t* w,
                                       const float* scale, const float* min, int K, float* C,
                                       int ldc) {
  typename L::VF acc[RA][RB];
  __m256 mins[RA][RB];
  q8_zero<L>(acc, mins);
  const auto a_row = [&](int i) { return q + static_cast<ptrdiff_t>(i) * lda; };
  const auto d_row = [&](int i) { return d + static_cast<ptrdiff_t>(i) * (lda / 32); };
  const auto w_row = [&](int r) { return w + static_cast<ptrdiff_t>(r) * K; };
  const auto scale_row = [&](int r) { return scale + static_cast<ptrdiff_t>(r) * 2 * blocks; };
  const auto step = [&]<bool kOne>(int b) {
    typename L::VI a[RA];
    typename L::VF da[RA];
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) {
      if constexpr (kOne) {
        a[i] = L::join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a_row(i) + 32 * b)),
                       _mm256_setzero_si256());
        da[i] = L::pair(d_row(i)[b], 0);
      } else {
        a[i] = L::load(a_row(i) + 32 * b);
        da[i] = L::pair(d_row(i)[b], d_row(i)[b + 1]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < RB; ++r) {
      const typename L::VI values =
          kOne ? L::join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w_row(r) + 32 * b)),
                         _mm256_setzero_si256())
               : L::load(w_row(r) + 32 * b);
      const typename L::VF dw = L::template quad_of<0>(scale_row(r) + 2 * b);
#pragma GCC unroll 4
      for (int i = 0; i < RA; ++i) {
        const typename L::VI p = kSigned ? L::dot_signed(values, a[i]) : L::dot(values, a[i]);
        acc[i][r] = kOne ? L::fma_even(L::mul(dw, da[i]), p, acc[i][r])
                         : L::fma(L::mul(dw, da[i]), p, acc[i][r]);
      }
    }
  };
  const auto min_step = [&](int g, int n) {
    q8_decoded_mins<RA, RB>(mins, g, n, d, lda, sums, blocks, min);
  };
  int b = 0;
  for (; b + 2 <= blocks; b += 2) {
    step.template operator()<false>(b);
    if (kMin && (b + 2) % 8 == 0) min_step(b - 6, 8);
  }
  if (b < blocks) step.template operator()<true>(b);
  if (kMin && blocks % 8 != 0) min_step(blocks / 8 * 8, blocks % 8);
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) {
      const float c = L::sum(acc[i][r]);
      C[static_cast<ptrdiff_t>(i) * ldc + r] = kMin ? c - q8_sum8(mins[i][r]) : c;
    }
  }
}

// q8_decoded_rows for AVX2's 16 registers: the even blocks in one pass over
// K and the odd ones in a second, so that each (i, r) keeps one 256-bit sum
// a pass (the pair form's two, beside the pair's values and scales, left
// some sums on the stack in the loop: a 16-row word-search step 8-13% slower
// on a Zen 1 core), and the minimums in a third. The same sums in the same
// order as q8_decoded_rows<Ymm2>: lanes of the even blocks, of the odd ones,
// added at the end.
template <bool kSigned, bool kMin, int RA, int RB>
NEXTWORD_HOT_LOOP void q8_decoded_rows_by_parity(int blocks, const int8_t* q, const float* d,
                                                 const float* sums, int lda, const int8_t* w,
                                                 const float* scale, const float* min, int K,
                                                 float* C, int ldc) {
  const auto a_row = [&](int i) { return q + static_cast<ptrdiff_t>(i) * lda; };
  const auto d_row = [&](int i) { return d + static_cast<ptrdiff_t>(i) * (lda / 32); };
  const auto w_row = [&](int r) { return w + static_cast<ptrdiff_t>(r) * K; };
  const auto scale_row = [&](int r) { return scale + static_cast<ptrdiff_t>(r) * 2 * blocks; };
  __m256 parity_sums[2][RA][RB];
  for (int parity = 0; parity < 2; ++parity) {
    __m256 acc[RA][RB];
    for (int i = 0; i < RA; ++i) {
      for (int r = 0; r < RB; ++r) acc[i][r] = _mm256_setzero_ps();
    }
    for (int b = parity; b < blocks; b += 2) {
      __m256i a[RA];
#pragma GCC unroll 4
      for (int i = 0; i < RA; ++i) {
        a[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a_row(i) + 32 * b));
      }
#pragma GCC unroll 4
      for (int r = 0; r < RB; ++r) {
        const __m256i values =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w_row(r) + 32 * b));
        const float* lanes = scale_row(r) + 2 * b;  // of lanes 0-3, 4-7
        const __m256 dw = _mm256_set_m128(_mm_broadcast_ss(lanes + 1), _mm_broadcast_ss(lanes));
        const __m256i magnitudes = kSigned ? _mm256_abs_epi8(values) : values;
#pragma GCC unroll 4
        for (int i = 0; i < RA; ++i) {
          const __m256i p = q8_dot(magnitudes, kSigned ? _mm256_sign_epi8(a[i], values) : a[i]);
          acc[i][r] = _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(d_row(i)[b])),
                                      _mm256_cvtepi32_ps(p), acc[i][r]);
        }
      }
    }
    for (int i = 0; i < RA; ++i) {
      for (int r = 0; r < RB; ++r) parity_sums[parity][i][r] = acc[i][r];
    }
  }
  __m256 mins[RA][RB];
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) mins[i][r] = _mm256_setzero_ps();
  }
  if constexpr (kMin) {
    for (int g = 0; g < blocks; g += 8) {
      q8_decoded_mins<RA, RB>(mins, g, std::min(8, blocks - g), d, lda, sums, blocks, min);
    }
  }
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) {
      const float c = q8_sum8(_mm256_add_ps(parity_sums[0][i][r], parity_sums[1][i][r]));
      C[static_cast<ptrdiff_t>(i) * ldc + r] = kMin ? c - q8_sum8(mins[i][r]) : c;
    }
  }
}

// M rows of A (q, d, sums) times N rows of B in blocks of T, a stretch of
// B's rows decoded at a time.
template <WeightType T>
void q8_decoded_product(int M, int N, int K, const int8_t* q, const float* d, const float* sums,
                        int lda, const BlockRows& B, float* C, int ldc) {
  using L = Q8Lanes;
  constexpr bool kMin = q8_minimum<T> || T == WeightType::kQ4_K || T == WeightType::kQ5_K;
  constexpr bool kSigned = !kMin;  // the types with a minimum have values 0 .. 31
  // AVX2 by parity (q8_decoded_rows_by_parity), 4 rows of A by 2 of B (2 x 3,
  // 2 x 4 and 3 x 2 within 5% of it on a Zen 1 core, 1 x 4 8% slower).
  constexpr bool kByParity = std::is_same_v<L, Ymm2>;
  constexpr int RA = kByParity ? 4 : kQ8RowsA, RB = kByParity ? 2 : kQ8RowsB;
  const int blocks = K / 32;
  // About 64 KiB of decoded values at a time.
  const int stretch = std::max(RB, 65536 / K / RB * RB);
  thread_local Q8Decoded decoded;
  decoded.w.resize(static_cast<size_t>(stretch) * K);
  // + 8: quad_of reads a vector from a pair's first scale on.
  decoded.scale.resize(static_cast<size_t>(stretch) * 2 * blocks + 8);
  decoded.min.resize(kMin ? static_cast<size_t>(stretch) * blocks : 0);
  for (int j = 0; j < N; j += stretch) {
    const int n = std::min(stretch, N - j);
    for (int r = 0; r < n; ++r) {
      q8_decode_row<T>(static_cast<const char*>(B.rows) + static_cast<size_t>(j + r) * B.row_bytes,
                       blocks, decoded.w.data() + static_cast<ptrdiff_t>(r) * K,
                       decoded.scale.data() + static_cast<ptrdiff_t>(r) * 2 * blocks,
                       kMin ? decoded.min.data() + static_cast<ptrdiff_t>(r) * blocks : nullptr);
    }
    const auto rows = [&]<int ra, int rb>(int i, int r) {
      const int8_t* a = q + static_cast<ptrdiff_t>(i) * lda;
      const float* da = d + static_cast<ptrdiff_t>(i) * (lda / 32);
      const float* a_sums = sums + static_cast<ptrdiff_t>(i) * blocks;
      const int8_t* values = decoded.w.data() + static_cast<ptrdiff_t>(r) * K;
      const float* scales = decoded.scale.data() + static_cast<ptrdiff_t>(r) * 2 * blocks;
      const float* mins = kMin ? decoded.min.data() + static_cast<ptrdiff_t>(r) * blocks : nullptr;
      float* c = C + static_cast<ptrdiff_t>(i) * ldc + j + r;
      if constexpr (kByParity) {
        q8_decoded_rows_by_parity<kSigned, kMin, ra, rb>(blocks, a, da, a_sums, lda, values, scales,
                                                         mins, K, c, ldc);
      } else {
        q8_decoded_rows<L, kSigned, kMin, ra, rb>(blocks, a, da, a_sums, lda, values, scales, mins,
                                                  K, c, ldc);
      }
    };
    int i = 0;
    for (; i + RA <= M; i += RA) {
      int r = 0;
      for (; r + RB <= n; r += RB) rows.template operator()<RA, RB>(i, r);
      for (; r < n; ++r) rows.template operator()<RA, 1>(i, r);
    }
    for (; i < M; ++i) {
      int r = 0;
      for (; r + RB <= n; r += RB) rows.template operator()<1, RB>(i, r);
      for (; r < n; ++r) rows.template operator()<1, 1>(i, r);
    }
  }
}

}  // namespace
}  // namespace nextword
