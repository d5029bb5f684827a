// The AVX2 family of kernels (math/kernel_paths.h): fused_kernels.h's
// products in 8-float vectors, for a CPU with FMA but not AVX-512. Built with
// -mavx2 -mfma -mf16c (CMakeLists.txt); called only on a CPU that has them.
#include <immintrin.h>

#include <limits>

#include "math/block_kernels.h"
#include "math/q8_kernels.h"

namespace nextword {
namespace {

struct Avx2 {
  using V = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kRows = 6;
  static constexpr int kDotRows = 3;
  template <int R>
  static constexpr int width() {  // at most 12 of the 16 registers hold sums
    return R == 1 ? 8 : R == 2 ? 4 : R <= 4 ? 3 : 2;
  }
  NEXTWORD_VECTOR_OP static V zero() { return _mm256_setzero_ps(); }
  NEXTWORD_VECTOR_OP static V broadcast(float x) { return _mm256_set1_ps(x); }
  NEXTWORD_VECTOR_OP static Mask first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  NEXTWORD_VECTOR_OP static V load(const float* p) { return _mm256_loadu_ps(p); }
  NEXTWORD_VECTOR_OP static V load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  // Eight IEEE halves widened (F16C's vcvtph2ps: exact); masked, the
  // halves past the mask are neither read nor anything but +0.
  NEXTWORD_VECTOR_OP static V load(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  NEXTWORD_VECTOR_OP static V load(const uint16_t* p, Mask m) {
    return _mm256_cvtph_ps(masked_halves(p, m));
  }
  // Eight bfloat16 widened (their bits shifted up 16: exact).
  NEXTWORD_VECTOR_OP static V load(const Bf16* p) {
    return from_bf16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  NEXTWORD_VECTOR_OP static V load(const Bf16* p, Mask m) {
    return from_bf16(masked_halves(reinterpret_cast<const uint16_t*>(p), m));
  }
  // The mask's first n lanes as eight 16-bit lanes; the whole pairs of
  // halves among them by one masked 32-bit load (nothing past them read),
  // and an odd last half on its own.
  NEXTWORD_VECTOR_OP static __m128i masked_halves(const uint16_t* p, Mask m) {
    const __m128i lanes =
        _mm_packs_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    const __m128i pairs = _mm_srai_epi32(lanes, 16);
    __m128i h = _mm_maskload_epi32(reinterpret_cast<const int*>(p), pairs);
    const int n = __builtin_popcount(static_cast<unsigned>(_mm_movemask_epi8(lanes))) / 2;
    if (n % 2 != 0) {
      h = _mm_or_si128(h, _mm_and_si128(_mm_andnot_si128(pairs, lanes),
                                        _mm_set1_epi16(static_cast<int16_t>(p[n - 1]))));
    }
    return h;
  }
  NEXTWORD_VECTOR_OP static V from_bf16(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  NEXTWORD_VECTOR_OP static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  NEXTWORD_VECTOR_OP static void store(float* p, V v, Mask m) { _mm256_maskstore_ps(p, m, v); }
  NEXTWORD_VECTOR_OP static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  NEXTWORD_VECTOR_OP static V fmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }
  NEXTWORD_VECTOR_OP static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  // The integers of ggml's blocks (math/block_kernels.h), eight lanes.
  using VI = __m256i;
  NEXTWORD_VECTOR_OP static VI bytes(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  NEXTWORD_VECTOR_OP static VI signed_bytes(const int8_t* p) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  template <int N>
  NEXTWORD_VECTOR_OP static VI srl(VI v) {
    return _mm256_srli_epi32(v, N);
  }
  template <int N>
  NEXTWORD_VECTOR_OP static VI sll(VI v) {
    return _mm256_slli_epi32(v, N);
  }
  NEXTWORD_VECTOR_OP static VI and_(VI v, int mask) {
    return _mm256_and_si256(v, _mm256_set1_epi32(mask));
  }
  NEXTWORD_VECTOR_OP static VI or_(VI a, VI b) { return _mm256_or_si256(a, b); }
  NEXTWORD_VECTOR_OP static VI add(VI v, int c) {
    return _mm256_add_epi32(v, _mm256_set1_epi32(c));
  }
  NEXTWORD_VECTOR_OP static V to_float(VI v) { return _mm256_cvtepi32_ps(v); }
  NEXTWORD_VECTOR_OP static VI lanes_of_bits(uint32_t w, int x) {
    const VI bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const VI set =
        _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(w)), bits), bits);
    return _mm256_and_si256(set, _mm256_set1_epi32(x));
  }
  NEXTWORD_VECTOR_OP static float sum(V v) {
    const __m128 four = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
    return _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)));
  }
  NEXTWORD_VECTOR_OP static void sum4(V v0, V v1, V v2, V v3, float* out) {
    // [four(v0) | four(v1)], [four(v2) | four(v3)]: lanes l + l + 4.
    const V a =
        _mm256_add_ps(_mm256_permute2f128_ps(v0, v1, 0x20), _mm256_permute2f128_ps(v0, v1, 0x31));
    const V b =
        _mm256_add_ps(_mm256_permute2f128_ps(v2, v3, 0x20), _mm256_permute2f128_ps(v2, v3, 0x31));
    // lanes l + l + 2: [v0's two, v2's two | v1's two, v3's two].
    const V s = _mm256_add_ps(_mm256_shuffle_ps(a, b, 0x44), _mm256_shuffle_ps(a, b, 0xEE));
    // lanes l + l + 1: [v0, v2, . , . | v1, v3, . , .].
    const V o = _mm256_add_ps(_mm256_shuffle_ps(s, s, 0x88), _mm256_shuffle_ps(s, s, 0xDD));
    _mm_storeu_ps(out, _mm_unpacklo_ps(_mm256_castps256_ps128(o), _mm256_extractf128_ps(o, 1)));
  }
};

}  // namespace

namespace avx2 {

void product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
             int ldc) {
  fused_product<Avx2>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                        float* C, int ldc) {
  fused_product_transposed<Avx2>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb, float* C,
             int ldc) {
  fused_product<Avx2>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product_transposed(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb,
                        float* C, int ldc) {
  fused_product_transposed<Avx2>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product_transposed(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb,
                        float* C, int ldc) {
  fused_product_transposed<Avx2>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product_transposed(int M, int N, int K, const float* A, int lda, const BlockRows& B, float* C,
                        int ldc) {
  block_product_transposed<Avx2>(M, N, K, A, lda, B.type, B.rows, B.row_bytes, C, ldc);
}

void q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda, const BlockRows& B,
                float* C, int ldc) {
  q8_kernel_product(M, N, K, q, d, lda, B, C, ldc);
}

void round_to_q8(const float* x, int K, int8_t* q, float* d) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int b = 0; b < K / 32; ++b) {
    __m256 v[4], most = _mm256_setzero_ps();
    int finite = 0xFF;
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + 32 * b + 8 * k);
      const __m256 magnitude = _mm256_andnot_ps(sign, v[k]);
      // Ordered: false for NaN as for infinities.
      finite &= _mm256_movemask_ps(
          _mm256_cmp_ps(magnitude, _mm256_set1_ps(std::numeric_limits<float>::max()), _CMP_LE_OQ));
      most = _mm256_max_ps(most, magnitude);
    }
    if (finite != 0xFF) {  // as the plain loop: d NaN, q 0
      d[b] = std::numeric_limits<float>::quiet_NaN();
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * b), _mm256_setzero_si256());
      continue;
    }
    // The largest magnitude (max is exact in any order).
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(most), _mm256_extractf128_ps(most, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float scale = _mm_cvtss_f32(m4) / 127;
    const float inverse = scale != 0 ? 1 / scale : 0;
    d[b] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(scale), _MM_FROUND_TO_NEAREST_INT)));
    __m256i i32[4];
    for (int k = 0; k < 4; ++k) {
      i32[k] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[k], _mm256_set1_ps(inverse)),
                                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    // 32 -> 16 -> 8 bits (no value is outside -127 .. 127), lanes put back in order.
    const __m256i i16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(i32[0], i32[1]), 0xD8);
    const __m256i j16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(i32[2], i32[3]), 0xD8);
    const __m256i i8 = _mm256_permute4x64_epi64(_mm256_packs_epi16(i16, j16), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * b), i8);
  }
}

}  // namespace avx2
}  // namespace nextword
