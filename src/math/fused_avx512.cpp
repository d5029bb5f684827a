// The AVX-512 family of kernels (math/kernel_paths.h): fused_kernels.h's
// products in 16-float vectors, six rows by 64 columns of C in registers.
// Built with -mavx512f -mavx512bw -mavx512vl -mfma -mf16c (CMakeLists.txt); called only on a CPU
// that has them. GCC 12's AVX-512 intrinsics start some results from _mm512_undefined_ps(), a
// self-initialized variable that -Wmaybe-uninitialized (and, inlined deeper, -Wuninitialized)
// reports wherever they are inlined (GCC bug 105593, fixed in GCC 13): nothing here is
// uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include "math/block_kernels.h"
#include "math/q8_kernels.h"

namespace nextword {
namespace {

struct Avx512 {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static constexpr int kRows = 6;
  static constexpr int kDotRows = 4;
  template <int R>
  static constexpr int width() {
    return R == 1 ? 12 : 4;  // one row: twelve chains keep both FMA units busy
  }
  NEXTWORD_VECTOR_OP static V zero() { return _mm512_setzero_ps(); }
  NEXTWORD_VECTOR_OP static V broadcast(float x) { return _mm512_set1_ps(x); }
  NEXTWORD_VECTOR_OP static Mask first(int n) { return static_cast<Mask>((1u << n) - 1u); }
  NEXTWORD_VECTOR_OP static V load(const float* p) { return _mm512_loadu_ps(p); }
  NEXTWORD_VECTOR_OP static V load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  // Sixteen IEEE halves widened (vcvtph2ps: exact); masked, the halves
  // past the mask are neither read nor anything but +0.
  NEXTWORD_VECTOR_OP static V load(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  NEXTWORD_VECTOR_OP static V load(const uint16_t* p, Mask m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
  // Sixteen bfloat16 widened (their bits shifted up 16: exact).
  NEXTWORD_VECTOR_OP static V load(const Bf16* p) {
    return from_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  NEXTWORD_VECTOR_OP static V load(const Bf16* p, Mask m) {
    return from_bf16(_mm256_maskz_loadu_epi16(m, p));
  }
  NEXTWORD_VECTOR_OP static V from_bf16(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  NEXTWORD_VECTOR_OP static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  NEXTWORD_VECTOR_OP static void store(float* p, V v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
  NEXTWORD_VECTOR_OP static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  NEXTWORD_VECTOR_OP static V fmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }
  NEXTWORD_VECTOR_OP static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  // The integers of ggml's blocks (math/block_kernels.h), sixteen lanes.
  using VI = __m512i;
  NEXTWORD_VECTOR_OP static VI bytes(const uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  NEXTWORD_VECTOR_OP static VI signed_bytes(const int8_t* p) {
    return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  template <int N>
  NEXTWORD_VECTOR_OP static VI srl(VI v) {
    return _mm512_srli_epi32(v, N);
  }
  template <int N>
  NEXTWORD_VECTOR_OP static VI sll(VI v) {
    return _mm512_slli_epi32(v, N);
  }
  NEXTWORD_VECTOR_OP static VI and_(VI v, int mask) {
    return _mm512_and_si512(v, _mm512_set1_epi32(mask));
  }
  NEXTWORD_VECTOR_OP static VI or_(VI a, VI b) { return _mm512_or_si512(a, b); }
  NEXTWORD_VECTOR_OP static VI add(VI v, int c) {
    return _mm512_add_epi32(v, _mm512_set1_epi32(c));
  }
  NEXTWORD_VECTOR_OP static V to_float(VI v) { return _mm512_cvtepi32_ps(v); }
  NEXTWORD_VECTOR_OP static VI lanes_of_bits(uint32_t w, int x) {
    return _mm512_maskz_set1_epi32(static_cast<__mmask16>(w), x);
  }
  NEXTWORD_VECTOR_OP static float sum(V v) {
    const __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    const __m256 eight = _mm256_add_ps(_mm512_castps512_ps256(v), high);
    const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
    const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
    return _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)));
  }
  NEXTWORD_VECTOR_OP static void sum4(V v0, V v1, V v2, V v3, float* out) {
    // [eight(v0) | eight(v1)], [eight(v2) | eight(v3)]: lanes l + l + 8.
    const V e01 =
        _mm512_add_ps(_mm512_shuffle_f32x4(v0, v1, 0x44), _mm512_shuffle_f32x4(v0, v1, 0xEE));
    const V e23 =
        _mm512_add_ps(_mm512_shuffle_f32x4(v2, v3, 0x44), _mm512_shuffle_f32x4(v2, v3, 0xEE));
    // [four(v0) | four(v1) | four(v2) | four(v3)]: lanes l + l + 4.
    const V f =
        _mm512_add_ps(_mm512_shuffle_f32x4(e01, e23, 0x88), _mm512_shuffle_f32x4(e01, e23, 0xDD));
    // lanes l + l + 2, then l + l + 1, in each 128 bits.
    const V t = _mm512_add_ps(f, _mm512_permute_ps(f, 0x4E));
    const V o = _mm512_add_ps(t, _mm512_permute_ps(t, 0xB1));
    const __m512i first_lanes = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    _mm_storeu_ps(out, _mm512_castps512_ps128(_mm512_permutexvar_ps(first_lanes, o)));
  }
};

}  // namespace

namespace avx512 {

void product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
             int ldc) {
  fused_product<Avx512>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                        float* C, int ldc) {
  fused_product_transposed<Avx512>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb, float* C,
             int ldc) {
  fused_product<Avx512>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product_transposed(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb,
                        float* C, int ldc) {
  fused_product_transposed<Avx512>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product_transposed(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb,
                        float* C, int ldc) {
  fused_product_transposed<Avx512>(M, N, K, A, lda, B, ldb, C, ldc);
}

void product_transposed(int M, int N, int K, const float* A, int lda, const BlockRows& B, float* C,
                        int ldc) {
  block_product_transposed<Avx512>(M, N, K, A, lda, B.type, B.rows, B.row_bytes, C, ldc);
}

void q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda, const BlockRows& B,
                float* C, int ldc) {
  q8_kernel_product(M, N, K, q, d, lda, B, C, ldc);
}

}  // namespace avx512
}  // namespace nextword
