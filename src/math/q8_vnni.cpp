// math/q8_kernels.h with AVX-512 VNNI's vpdpbusd, for the AVX-512 family on
// CPUs that have it (q8_activations.cpp asks the CPU). Built with
// -mavx512vnni besides the AVX-512 family's flags (CMakeLists.txt).
// GCC 12's AVX-512 intrinsics warn of their own _mm512_undefined_ps() (see
// fused_avx512.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define NEXTWORD_Q8_VNNI
#include "math/q8_kernels.h"

namespace nextword::vnni {

void q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda, const BlockRows& B,
                float* C, int ldc) {
  q8_kernel_product(M, N, K, q, d, lda, B, C, ldc);
}

}  // namespace nextword::vnni
