// The fused families' transposed product of B's rows of ggml blocks
// (base/quant_blocks.h), after fused_kernels.h and in the same anonymous
// namespace, so each family gets its own copy in its own instructions.
//
// Each block's values are widened in registers, exactly (the same floats as
// widen_blocks), and multiplied with float32 activations in
// fused_kernels.h's order: lane l of a dot product the chain of fmas over k
// = l, l + kLanes, ... (a row is whole blocks, so whole vectors: no masked
// tail), the lanes then added as sum and sum4 add them. So the product is
// the same bits as fused_product_transposed of the widened rows, which is
// how the many-row products (a prompt, a batch) compute it: each stretch of
// B's rows widened once into floats, then the float kernel.
//
// Beyond fused_kernels.h's, S gives an integer vector VI of kLanes 32-bit
// lanes: bytes(p) (kLanes bytes zero-extended), signed_bytes(p), srl<n>,
// sll<n>, and_(v, mask), or_(a, b), add(v, c), to_float(v),
// lanes_of_bits(w, x) (lane i: x where bit i of w is set, else 0), and
// fmsub(a, b, c) = a b - c rounded once, mul(a, b): each family's own
// instructions (fused_avx2.cpp, fused_avx512.cpp), the same shape.
#pragma once

#include <immintrin.h>

#include <cstring>
#include <utility>

#include "base/quant_blocks.h"
#include "math/fused_kernels.h"

namespace nextword {
namespace {

// An F16's float, and 8 bytes times a float (exact: a 6- or 8-bit integer
// times an F16's 11-bit significand), for the blocks' scales: AVX2 and
// F16C, which both families have.
NEXTWORD_VECTOR_OP float half(uint16_t h) { return _cvtsh_ss(h); }
NEXTWORD_VECTOR_OP void scaled_bytes8(const uint8_t* p, float x, float* out) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  _mm256_storeu_ps(out,
                   _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), _mm256_set1_ps(x)));
}
NEXTWORD_VECTOR_OP void scaled_signed_bytes8(const int8_t* p, float x, float* out) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  _mm256_storeu_ps(out,
                   _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), _mm256_set1_ps(x)));
}

// ---- Decoders: D::values<E>(block, header), the kLanes values from value E
// of a block on (E a multiple of kLanes), as quant_blocks.cpp's widen.

// Q4_0, Q4_1, Q5_0 and Q5_1: q d + offset in one rounding, q the nibble
// (value E's: byte E's low one, or byte E - 16's high one) and, for Q5, 16
// above it bit E of the word qh; offset the minimum m (Q4_1, Q5_1) or -8 d
// (Q4_0) or -16 d (Q5_0), which gives (q - 8) d and (q - 16) d exactly, as
// q d and 8 d are.
inline uint32_t word_of(const uint8_t* qh) {
  uint32_t w = 0;
  std::memcpy(&w, qh, sizeof w);
  return w;
}

template <class S, class B, bool kFifth, bool kMinimum>
struct NibbleValues {
  using Block = B;
  static constexpr int kValues = kQ8Block;
  struct Header {
    float d, offset;
    uint32_t high;  // Q5's fifth bits
  };
  NEXTWORD_VECTOR_OP static Header header(const Block& b) {
    const float d = half(b.d);
    float offset = (kFifth ? -16.0f : -8.0f) * d;
    if constexpr (kMinimum) offset = half(b.m);
    uint32_t high = 0;
    if constexpr (kFifth) high = word_of(b.qh);
    return {d, offset, high};
  }
  template <int E>
  NEXTWORD_VECTOR_OP static typename S::V values(const Block& b, const Header& h) {
    const typename S::VI bytes = S::bytes(b.qs + E % 16);
    typename S::VI q = E >= 16 ? S::template srl<4>(bytes) : S::and_(bytes, 0xF);
    if constexpr (kFifth) q = S::or_(q, S::lanes_of_bits(h.high >> E, 16));
    return S::fma(S::to_float(q), S::broadcast(h.d), S::broadcast(h.offset));
  }
};
template <class S>
using Q4_0Values = NibbleValues<S, BlockQ4_0, false, false>;
template <class S>
using Q4_1Values = NibbleValues<S, BlockQ4_1, false, true>;
template <class S>
using Q5_0Values = NibbleValues<S, BlockQ5_0, true, false>;
template <class S>
using Q5_1Values = NibbleValues<S, BlockQ5_1, true, true>;

template <class S>
struct Q8_0Values {
  using Block = BlockQ8_0;
  static constexpr int kValues = kQ8Block;
  struct Header {
    float d;
  };
  NEXTWORD_VECTOR_OP static Header header(const Block& b) { return {half(b.d)}; }
  template <int E>
  NEXTWORD_VECTOR_OP static typename S::V values(const Block& b, const Header& h) {
    return S::mul(S::to_float(S::signed_bytes(b.q + E)), S::broadcast(h.d));
  }
};

// Q4_K and Q5_K: sub-block s = E / 32's nibbles in run s / 2, by s's parity;
// Q5_K's fifth bit, bit s of qh[E % 32 ...].
template <class S, class K, bool kFifth>
struct KValues {
  using Block = K;
  static constexpr int kValues = kSuperBlock;
  using Header = KFactors;
  // quant_blocks.h's k_factors, the scales and minimums widened and scaled
  // eight at a time.
  NEXTWORD_VECTOR_OP static Header header(const Block& b) {
    const KScales k = k_scales(b.scales);
    Header h;
    scaled_bytes8(k.scale, half(b.d), h.d1);
    scaled_bytes8(k.min, half(b.dmin), h.m1);
    return h;
  }
  template <int E>
  NEXTWORD_VECTOR_OP static typename S::V values(const Block& b, const Header& h) {
    constexpr int s = E / 32;
    const typename S::VI bytes = S::bytes(b.qs + 32 * (s / 2) + E % 32);
    typename S::VI q = s % 2 != 0 ? S::template srl<4>(bytes) : S::and_(bytes, 0xF);
    if constexpr (kFifth) {
      const typename S::VI bit = S::and_(S::template srl<s>(S::bytes(b.qh + E % 32)), 1);
      q = S::or_(q, S::template sll<4>(bit));
    }
    return S::fmsub(S::to_float(q), S::broadcast(h.d1[s]), S::broadcast(h.m1[s]));
  }
};
template <class S>
using Q4_KValues = KValues<S, BlockQ4_K, false>;
template <class S>
using Q5_KValues = KValues<S, BlockQ5_K, true>;

// Q6_K: value 128h + 32j + l from ql's nibble and qh's bits 2j, 2j + 1.
template <class S>
struct Q6_KValues {
  using Block = BlockQ6_K;
  static constexpr int kValues = kSuperBlock;
  struct Header {
    float scale[16];  // d times each int8 scale: exact
  };
  NEXTWORD_VECTOR_OP static Header header(const Block& b) {
    Header h;
    const float d = half(b.d);
    scaled_signed_bytes8(b.scales, d, h.scale);
    scaled_signed_bytes8(b.scales + 8, d, h.scale + 8);
    return h;
  }
  template <int E>
  NEXTWORD_VECTOR_OP static typename S::V values(const Block& b, const Header& h) {
    constexpr int half = E / 128, j = E % 128 / 32, l = E % 32;
    const typename S::VI low = S::bytes(b.ql + 64 * half + l + (j % 2 != 0 ? 32 : 0));
    const typename S::VI nibble = j >= 2 ? S::template srl<4>(low) : S::and_(low, 0xF);
    const typename S::VI top = S::and_(S::template srl<2 * j>(S::bytes(b.qh + 32 * half + l)), 3);
    const typename S::VI q = S::add(S::or_(nibble, S::template sll<4>(top)), -32);
    return S::mul(S::to_float(q), S::broadcast(h.scale[8 * half + l / 16 + 2 * j]));
  }
};

// ---- The products.

// acc[r][s] = fma(A[r, At ..], values At .. of block `blocks[s]`, acc[r][s]).
template <class S, class D, int At, int RA, int RB>
NEXTWORD_VECTOR_OP void block_step(typename S::V (&acc)[RA][RB], const float* A, int lda,
                                   const typename D::Block* const (&blocks)[RB],
                                   const typename D::Header (&headers)[RB]) {
  typename S::V a[RA];
#pragma GCC unroll 16
  for (int r = 0; r < RA; ++r) a[r] = S::load(A + offset(r, lda) + At);
#pragma GCC unroll 16
  for (int s = 0; s < RB; ++s) {
    const typename S::V w = D::template values<At>(*blocks[s], headers[s]);
#pragma GCC unroll 16
    for (int r = 0; r < RA; ++r) acc[r][s] = S::fma(a[r], w, acc[r][s]);
  }
}

// block_step for each vector E of the block, in order.
template <class S, class D, int RA, int RB, int... E>
NEXTWORD_VECTOR_OP void block_steps(typename S::V (&acc)[RA][RB], const float* A, int lda,
                                    const typename D::Block* const (&blocks)[RB],
                                    const typename D::Header (&headers)[RB],
                                    std::integer_sequence<int, E...>) {
  (block_step<S, D, E * S::kLanes>(acc, A, lda, blocks, headers), ...);
}

// Rows [0, RA) of A by rows [0, RB) of B (row_bytes apart), K values each.
template <class S, class D, int RA, int RB>
NEXTWORD_HOT_LOOP void block_rows(int K, const float* A, int lda, const char* B, size_t row_bytes,
                                  float* C, int ldc) {
  typename S::V acc[RA][RB];
  zero_sums<S>(acc);
  const int blocks = K / D::kValues;
  for (int i = 0; i < blocks; ++i) {
    const typename D::Block* block[RB];
    typename D::Header header[RB];
#pragma GCC unroll 16
    for (int s = 0; s < RB; ++s) {
      block[s] = reinterpret_cast<const typename D::Block*>(B + s * row_bytes) + i;
      header[s] = D::header(*block[s]);
    }
    block_steps<S, D>(acc, A + offset(i, D::kValues), lda, block, header,
                      std::make_integer_sequence<int, D::kValues / S::kLanes>());
  }
  store_sums<S>(acc, C, ldc);
}

template <class S, class D, int RA>
NEXTWORD_HOT_LOOP void block_row_group(int N, int K, const float* A, int lda, const char* B,
                                       size_t row_bytes, float* C, int ldc) {
  constexpr int RB = RA == 1 ? 8 : 4;  // as nt_rows: one row of A, eight chains
  int j = 0;
  for (; j + RB <= N; j += RB) {
    block_rows<S, D, RA, RB>(K, A, lda, B + offset(j, 1) * row_bytes, row_bytes, C + j, ldc);
  }
  for (; j < N; ++j) {
    block_rows<S, D, RA, 1>(K, A, lda, B + offset(j, 1) * row_bytes, row_bytes, C + j, ldc);
  }
}

// One row of blocks (K values) widened into floats, exactly as widen_blocks.
template <class S, class D, int... E>
NEXTWORD_VECTOR_OP void widen_block(const typename D::Block& b, float* out,
                                    std::integer_sequence<int, E...>) {
  const typename D::Header h = D::header(b);
  (S::store(out + E * S::kLanes, D::template values<E * S::kLanes>(b, h)), ...);
}

template <class S, class D>
void block_product_transposed(int M, int N, int K, const float* A, int lda, const char* B,
                              size_t row_bytes, float* C, int ldc) {
  constexpr int RA = S::kDotRows;
  // About 128 KiB of B's rows at a time, as they are read: widened floats,
  // or the blocks themselves.
  const size_t read_bytes = M >= kWidenedRows ? sizeof(float) * offset(K, 1) : row_bytes;
  const int stretch =
      smaller(N, static_cast<int>(131072 / (read_bytes > 0 ? read_bytes : 1)) / 4 * 4 + 4);
  const int blocks = K / D::kValues;
  for (int j = 0; j < N; j += stretch) {
    const int n = smaller(stretch, N - j);
    const char* b = B + offset(j, 1) * row_bytes;
    if (M >= kWidenedRows) {
      float* rows = kernel_scratch(offset(n, K));
      for (int r = 0; r < n; ++r) {
        const auto* row = reinterpret_cast<const typename D::Block*>(b + offset(r, 1) * row_bytes);
        for (int i = 0; i < blocks; ++i) {
          widen_block<S, D>(row[i], rows + offset(r, K) + offset(i, D::kValues),
                            std::make_integer_sequence<int, D::kValues / S::kLanes>());
        }
      }
      fused_product_transposed<S>(M, n, K, A, lda, static_cast<const float*>(rows), K, C + j, ldc);
      continue;
    }
    int i = 0;
    for (; i + RA <= M; i += RA) {
      block_row_group<S, D, RA>(n, K, A + offset(i, lda), lda, b, row_bytes, C + offset(i, ldc) + j,
                                ldc);
    }
    // Two rows left widen B's blocks once, not once each.
    for (; RA > 2 && i + 2 <= M; i += 2) {
      block_row_group<S, D, 2>(n, K, A + offset(i, lda), lda, b, row_bytes, C + offset(i, ldc) + j,
                               ldc);
    }
    for (; i < M; ++i) {
      block_row_group<S, D, 1>(n, K, A + offset(i, lda), lda, b, row_bytes, C + offset(i, ldc) + j,
                               ldc);
    }
  }
}

// C = A B^T, B rows of ggml blocks of `type`, row_bytes apart.
template <class S>
void block_product_transposed(int M, int N, int K, const float* A, int lda, WeightType type,
                              const void* rows, size_t row_bytes, float* C, int ldc) {
  const char* B = static_cast<const char*>(rows);
  switch (type) {
    case WeightType::kQ4_0:
      return block_product_transposed<S, Q4_0Values<S>>(M, N, K, A, lda, B, row_bytes, C, ldc);
    case WeightType::kQ4_1:
      return block_product_transposed<S, Q4_1Values<S>>(M, N, K, A, lda, B, row_bytes, C, ldc);
    case WeightType::kQ5_0:
      return block_product_transposed<S, Q5_0Values<S>>(M, N, K, A, lda, B, row_bytes, C, ldc);
    case WeightType::kQ5_1:
      return block_product_transposed<S, Q5_1Values<S>>(M, N, K, A, lda, B, row_bytes, C, ldc);
    case WeightType::kQ8_0:
      return block_product_transposed<S, Q8_0Values<S>>(M, N, K, A, lda, B, row_bytes, C, ldc);
    case WeightType::kQ4_K:
      return block_product_transposed<S, Q4_KValues<S>>(M, N, K, A, lda, B, row_bytes, C, ldc);
    case WeightType::kQ5_K:
      return block_product_transposed<S, Q5_KValues<S>>(M, N, K, A, lda, B, row_bytes, C, ldc);
    case WeightType::kQ6_K:
      return block_product_transposed<S, Q6_KValues<S>>(M, N, K, A, lda, B, row_bytes, C, ldc);
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16: break;
  }
}

}  // namespace
}  // namespace nextword
