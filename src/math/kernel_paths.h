// The families of kernels that compute the products of prediction
// (math/row_products.h), one file per instruction set: fused_avx512.cpp,
// fused_avx2.cpp and the plain loops of row_products.cpp. One is chosen when
// the program starts: the best this CPU runs, or a lower one named by the
// environment variable NEXTWORD_KERNELS (plain, avx2, avx512), so that the
// tests cover every family on one machine.
//
// Within a family, an element of a product is summed in an order that depends
// on K alone, never on M, N, the rows computed beside it or the threads:
// however a product's rows are split, each gives the same bits. Between
// families the last bits may differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/weight_elements.h"

// The sanitizer build leaves the product loops, nearly all of a prediction's
// work, out of AddressSanitizer's and UndefinedBehaviorSanitizer's checks:
// instrumented, they make the split tests of that build many times slower.
// Their bounds are those of the products above them, which the rest of the
// build checks.
#if defined(__clang__)
#define NEXTWORD_HOT_LOOP __attribute__((no_sanitize("address", "undefined")))
#else
#define NEXTWORD_HOT_LOOP
#endif

namespace nextword {

enum class KernelPath { kPlain, kAvx2, kAvx512 };

// The family in force: on first use, NEXTWORD_KERNELS's if it is set (an
// Error with exit code kUsage if this CPU cannot run it or the name is not
// one), else the best this CPU runs.
KernelPath kernel_path();
// "plain", "avx2" or "avx512".
const char* kernel_path_name(KernelPath path);
// The families this CPU runs, lowest first.
std::vector<KernelPath> available_kernel_paths();
// For tests and benchmarks: the family from now on (one this CPU runs).
void set_kernel_path(KernelPath path);

// A buffer of this thread's of at least `floats` floats, kept for the next
// call: where the fused kernels copy a panel of B together.
float* kernel_scratch(size_t floats);

// The fused families' products, as row_product and row_product_transposed
// (math/row_products.h) describe them, B in floats or in IEEE halves, and
// the transposed product's also in bfloat16 and rows of ggml's blocks.
namespace avx2 {
void product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
             int ldc);
void product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                        float* C, int ldc);
void product(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb, float* C,
             int ldc);
void product_transposed(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb,
                        float* C, int ldc);
void product_transposed(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb,
                        float* C, int ldc);
void product_transposed(int M, int N, int K, const float* A, int lda, const BlockRows& B, float* C,
                        int ldc);
}  // namespace avx2
namespace avx512 {
void product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
             int ldc);
void product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                        float* C, int ldc);
void product(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb, float* C,
             int ldc);
void product_transposed(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb,
                        float* C, int ldc);
void product_transposed(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb,
                        float* C, int ldc);
void product_transposed(int M, int N, int K, const float* A, int lda, const BlockRows& B, float* C,
                        int ldc);
}  // namespace avx512

}  // namespace nextword
