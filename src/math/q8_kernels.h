// The kernel of math/q8_activations.h's products in 256-bit integer
// vectors (AVX2's vpmaddubsw and vpmaddwd), included by the AVX2 family and
// by the AVX-512 family, whose 32 vector registers hold more sums at once,
// and with NEXTWORD_Q8_VNNI by q8_vnni.cpp for CPUs with AVX-512 VNNI
// (vpdpbusd: the four-value sums in one instruction). All give the plain
// loop's bits.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "base/quant_blocks.h"
#include "math/fused_kernels.h"  // NEXTWORD_VECTOR_OP
#include "math/kernel_paths.h"
#include "math/q8_activations.h"

namespace nextword {
namespace {

// One row of A's 32-value blocks loaded once
// for four rows of B; each block's products of signed bytes as |w| times a
// with w's sign (vpmaddubsw: 2 x 128 x 127 never saturates 16 bits), pairs
// of those added (vpmaddwd) into 8 lanes of 4 values each.
template <WeightType T>
NEXTWORD_VECTOR_OP __m256i q8_weights(const char* row, int b) {
  if constexpr (T == WeightType::kQ8_0) {
    return _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(reinterpret_cast<const BlockQ8_0*>(row)[b].q));
  } else {
    const __m128i qs = _mm_loadu_si128(
        reinterpret_cast<const __m128i*>(reinterpret_cast<const BlockQ4_0*>(row)[b].qs));
    const __m128i low = _mm_set1_epi8(0xF);
    const __m256i n =
        _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(qs, 4), low), _mm_and_si128(qs, low));
    return _mm256_sub_epi8(n, _mm256_set1_epi8(8));
  }
}

template <WeightType T>
NEXTWORD_VECTOR_OP float q8_scale(const char* row, int b) {
  uint16_t h;
  if constexpr (T == WeightType::kQ8_0) {
    h = reinterpret_cast<const BlockQ8_0*>(row)[b].d;
  } else {
    h = reinterpret_cast<const BlockQ4_0*>(row)[b].d;
  }
  return _cvtsh_ss(h);  // exact, as f16_to_float
}

NEXTWORD_VECTOR_OP float q8_sum8(__m256 v) {
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}

// Block b's products of rows [0, RA) of A (q, d; lda apart) with rows
// [0, RB) of B, into acc[i][r]: each weight block decoded once for RA rows.
template <WeightType T, int RA, int RB>
NEXTWORD_VECTOR_OP void q8_step(__m256 (&acc)[RA][RB], const int8_t* q, const float* d, int lda,
                                const char* B, size_t row_bytes, int b) {
  [[maybe_unused]] const __m256i ones = _mm256_set1_epi16(1);  // vpmaddwd's pairs
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
    const __m256i w = q8_weights<T>(row, b);
    const __m256i magnitude = _mm256_abs_epi8(w);
    const float dw = q8_scale<T>(row, b);
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) {
#ifdef NEXTWORD_Q8_VNNI
      // The same four-value sums in one instruction.
      const __m256i p =
          _mm256_dpbusd_epi32(_mm256_setzero_si256(), magnitude, _mm256_sign_epi8(a[i], w));
#else
      const __m256i p =
          _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(a[i], w)), ones);
#endif
      acc[i][r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * da[i]), _mm256_cvtepi32_ps(p), acc[i][r]);
    }
  }
}

template <WeightType T, int RA, int RB>
NEXTWORD_HOT_LOOP void q8_rows(int blocks, const int8_t* q, const float* d, int lda, const char* B,
                               size_t row_bytes, float* C, int ldc) {
  __m256 acc[RA][RB];
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) acc[i][r] = _mm256_setzero_ps();
  }
  for (int b = 0; b < blocks; ++b) q8_step<T, RA, RB>(acc, q, d, lda, B, row_bytes, b);
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) C[static_cast<ptrdiff_t>(i) * ldc + r] = q8_sum8(acc[i][r]);
  }
}

template <WeightType T, int RA>
void q8_row_group(int N, int blocks, const int8_t* q, const float* d, int lda, const BlockRows& B,
                  float* C, int ldc) {
  constexpr int RB = RA == 1 ? 4 : 3;
  const char* rows = static_cast<const char*>(B.rows);
  int j = 0;
  for (; j + RB <= N; j += RB) {
    q8_rows<T, RA, RB>(blocks, q, d, lda, rows + static_cast<size_t>(j) * B.row_bytes, B.row_bytes,
                       C + j, ldc);
  }
  for (; j < N; ++j) {
    q8_rows<T, RA, 1>(blocks, q, d, lda, rows + static_cast<size_t>(j) * B.row_bytes, B.row_bytes,
                      C + j, ldc);
  }
}

template <WeightType T>
void q8_product_of(int M, int N, int K, const int8_t* q, const float* d, int lda,
                   const BlockRows& B, float* C, int ldc) {
  const int blocks = K / 32;
  int i = 0;
  for (; i + 4 <= M; i += 4) {
    q8_row_group<T, 4>(N, blocks, q + static_cast<ptrdiff_t>(i) * lda,
                       d + static_cast<ptrdiff_t>(i) * (lda / 32), lda, B,
                       C + static_cast<ptrdiff_t>(i) * ldc, ldc);
  }
  for (; i < M; ++i) {
    q8_row_group<T, 1>(N, blocks, q + static_cast<ptrdiff_t>(i) * lda,
                       d + static_cast<ptrdiff_t>(i) * (lda / 32), lda, B,
                       C + static_cast<ptrdiff_t>(i) * ldc, ldc);
  }
}

void q8_kernel_product(int M, int N, int K, const int8_t* q, const float* d, int lda,
                       const BlockRows& B, float* C, int ldc) {
  if (B.type == WeightType::kQ8_0) {
    return q8_product_of<WeightType::kQ8_0>(M, N, K, q, d, lda, B, C, ldc);
  }
  q8_product_of<WeightType::kQ4_0>(M, N, K, q, d, lda, B, C, ldc);
}

}  // namespace
}  // namespace nextword
