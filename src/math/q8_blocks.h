// What math/q8_activations.h's kernels read of a block of B, in 256-bit
// integer vectors (a block's 32 values as bytes; its scales and minimum),
// and the lanes of a pair of blocks' sums: two 256-bit vectors (Ymm2: the
// AVX2 family, and one row of A in every family) or one 512-bit vector
// (Zmm: the AVX-512 family). Included by q8_kernels.h and q8_expanded.h.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "base/quant_blocks.h"
#include "math/block_kernels.h"  // word_of
#include "math/fused_kernels.h"  // NEXTWORD_VECTOR_OP

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

// A pair of activation blocks' lanes: the even block's 8 sums and the odd
// one's, as two 256-bit vectors (Ymm2) or one 512-bit vector (Zmm).
struct Ymm2 {
  struct VI {
    __m256i v[2];
  };
  struct VF {
    __m256 v[2];
  };
  NEXTWORD_VECTOR_OP static VF zero() { return {{_mm256_setzero_ps(), _mm256_setzero_ps()}}; }
  NEXTWORD_VECTOR_OP static VI load(const int8_t* q) {
    return {{_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)),
             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32))}};
  }
  NEXTWORD_VECTOR_OP static VI join(__m256i even, __m256i odd) { return {{even, odd}}; }
  // Lanes [x0 x 8 | x1 x 8]; of x[k] and x[k + 1]; of x[k] .. x[k + 3] four
  // lanes each.
  NEXTWORD_VECTOR_OP static VF pair(float x0, float x1) {
    return {{_mm256_set1_ps(x0), _mm256_set1_ps(x1)}};
  }
  template <int k>
  NEXTWORD_VECTOR_OP static VF pair_of(const float* x) {
    return {{_mm256_broadcast_ss(x + k), _mm256_broadcast_ss(x + k + 1)}};
  }
  template <int k>
  NEXTWORD_VECTOR_OP static VF quad_of(const float* x) {
    const auto two = [](const float* y) {
      return _mm256_set_m128(_mm_broadcast_ss(y + 1), _mm_broadcast_ss(y));
    };
    return {{two(x + k), two(x + k + 2)}};
  }
  NEXTWORD_VECTOR_OP static VF mul(VF x, VF y) {
    return {{_mm256_mul_ps(x.v[0], y.v[0]), _mm256_mul_ps(x.v[1], y.v[1])}};
  }
  // Unsigned u times signed a; signed w times a as |w| times a with w's sign.
  NEXTWORD_VECTOR_OP static VI dot(VI u, VI a) {
    return {{q8_dot(u.v[0], a.v[0]), q8_dot(u.v[1], a.v[1])}};
  }
  NEXTWORD_VECTOR_OP static VI dot_signed(VI w, VI a) {
    return {{q8_dot(_mm256_abs_epi8(w.v[0]), _mm256_sign_epi8(a.v[0], w.v[0])),
             q8_dot(_mm256_abs_epi8(w.v[1]), _mm256_sign_epi8(a.v[1], w.v[1]))}};
  }
  // acc + scale p; fma_even: the even block's lanes only.
  NEXTWORD_VECTOR_OP static VF fma(VF scale, VI p, VF acc) {
    return {{_mm256_fmadd_ps(scale.v[0], _mm256_cvtepi32_ps(p.v[0]), acc.v[0]),
             _mm256_fmadd_ps(scale.v[1], _mm256_cvtepi32_ps(p.v[1]), acc.v[1])}};
  }
  NEXTWORD_VECTOR_OP static VF fma_even(VF scale, VI p, VF acc) {
    return {{_mm256_fmadd_ps(scale.v[0], _mm256_cvtepi32_ps(p.v[0]), acc.v[0]), acc.v[1]}};
  }
  NEXTWORD_VECTOR_OP static float sum(VF acc) { return q8_sum8(_mm256_add_ps(acc.v[0], acc.v[1])); }
};

#ifdef __AVX512F__
struct Zmm {
  using VI = __m512i;
  using VF = __m512;
  NEXTWORD_VECTOR_OP static VF zero() { return _mm512_setzero_ps(); }
  NEXTWORD_VECTOR_OP static VI load(const int8_t* q) { return _mm512_loadu_si512(q); }
  NEXTWORD_VECTOR_OP static VI join(__m256i even, __m256i odd) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(even), odd, 1);
  }
  NEXTWORD_VECTOR_OP static __m512i spread(int lane, int n) {  // lanes / n: lane + that
    alignas(64) int32_t index[16];
    for (int l = 0; l < 16; ++l) index[l] = lane + l / n;
    return _mm512_load_si512(index);
  }
  NEXTWORD_VECTOR_OP static VF pair(float x0, float x1) {
    return _mm512_permutexvar_ps(
        spread(0, 8), _mm512_castps128_ps512(_mm_unpacklo_ps(_mm_set_ss(x0), _mm_set_ss(x1))));
  }
  template <int k>
  NEXTWORD_VECTOR_OP static VF quad_of(const float* x) {
    return _mm512_permutexvar_ps(spread(k % 8, 4),
                                 _mm512_castps256_ps512(_mm256_loadu_ps(x + k / 8 * 8)));
  }
  NEXTWORD_VECTOR_OP static VF mul(VF x, VF y) { return _mm512_mul_ps(x, y); }
  NEXTWORD_VECTOR_OP static VI dot(VI u, VI a) {
#ifdef NEXTWORD_Q8_VNNI
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, a);
#else
    return _mm512_madd_epi16(_mm512_maddubs_epi16(u, a), _mm512_set1_epi16(1));
#endif
  }
  NEXTWORD_VECTOR_OP static VI dot_signed(VI w, VI a) {
    // No vpsignb in 512 bits: a negated where w is negative (|a| <= 127).
    const __m512i signed_a =
        _mm512_mask_sub_epi8(a, _mm512_movepi8_mask(w), _mm512_setzero_si512(), a);
    return dot(_mm512_abs_epi8(w), signed_a);
  }
  NEXTWORD_VECTOR_OP static VF fma(VF scale, VI p, VF acc) {
    return _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(p), acc);
  }
  NEXTWORD_VECTOR_OP static VF fma_even(VF scale, VI p, VF acc) {
    return _mm512_mask3_fmadd_ps(scale, _mm512_cvtepi32_ps(p), acc, 0x00FF);
  }
  NEXTWORD_VECTOR_OP static float sum(VF acc) {
    return q8_sum8(
        _mm256_add_ps(_mm512_castps512_ps256(acc),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1))));
  }
};
// 32 registers: 4 rows of A by 4 rows of B.
using Q8Lanes = Zmm;
constexpr int kQ8RowsA = 4, kQ8RowsB = 4;
#else
// 16 registers (a pair of blocks in two): 2 rows of A by 2 rows of B.
using Q8Lanes = Ymm2;
constexpr int kQ8RowsA = 2, kQ8RowsB = 2;
#endif

// Sums and minimums' sums of RA rows of A by RB rows of B, all zero.
template <class L, int RA, int RB>
NEXTWORD_VECTOR_OP void q8_zero(typename L::VF (&acc)[RA][RB], __m256 (&mins)[RA][RB]) {
  for (int i = 0; i < RA; ++i) {
    for (int r = 0; r < RB; ++r) {
      acc[i][r] = L::zero();
      mins[i][r] = _mm256_setzero_ps();
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

// A super-block's scales for 8 activation blocks (Q6_K: 16, one for each
// 16 values) and Q4_K's or Q5_K's minimums, before A's d: d sc and dmin m,
// exact, as the plain loop's.
struct Q8KFactors {
  __m256 scale[2];
  __m256 min;
};

template <WeightType T>
NEXTWORD_VECTOR_OP Q8KFactors q8_k_factors(const char* block) {
  const auto& b = *reinterpret_cast<const Q8KBlock<T>*>(block);
  const auto widen8 = [](const void* bytes) {  // 8 bytes
    return _mm_loadl_epi64(static_cast<const __m128i*>(bytes));
  };
  Q8KFactors f;
  if constexpr (T == WeightType::kQ6_K) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(b.d));
    for (int h = 0; h < 2; ++h) {
      f.scale[h] =
          _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(widen8(b.scales + 8 * h))));
    }
    f.min = _mm256_setzero_ps();
  } else {
    const KScales k = k_scales(b.scales);
    f.scale[0] = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(b.d)),
                               _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(widen8(k.scale))));
    f.scale[1] = _mm256_setzero_ps();
    f.min = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(b.dmin)),
                          _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(widen8(k.min))));
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

}  // namespace
}  // namespace nextword
