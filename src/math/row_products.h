// Matrix products whose every row is the same bits whatever rows are
// computed beside it: the products of everything that prints results
// (Threading::kRows, base/threading.h).
//
// OpenBLAS 0.3.21 picks its kernels and their order of sums from the whole
// call's shape, and on some CPUs from a row's place in the call: on the AMD
// EPYC machines this project has run on (OpenBLAS's Haswell kernels), a row
// of a 4-row call already differs from the same row alone. So a phrase's
// last digits would depend on the phrases that shared its batch, its thread
// and its process. Here each element is summed in an order that depends on K
// alone, whatever M, the rows' places or the threads: the result of a row
// depends on that row and the weights alone. The order is that of the family
// of kernels in force (math/kernel_paths.h):
//   avx512, avx2  row_product: one chain of fused multiply-adds over k = 0 ..
//                 K-1 (the two families give the same bits);
//                 row_product_transposed: 16 (avx512) or 8 (avx2) lanes,
//                 lane l a chain of fmas over k = l, l + lanes, ..., the
//                 lanes then added halves first;
//   plain         one rounded multiply and one rounded add at a time (this
//                 file is built with -ffp-contract=off), over k in order, and
//                 for row_product_transposed in 16 lanes added halves first.
#pragma once

#include <cstdint>

#include "base/weight_elements.h"

namespace nextword {

// C[M, N] = A[M, K] B[K, N]; rows of A, B and C are lda, ldb, ldc floats apart.
void row_product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                 int ldc);

// C[M, N] = A[M, K] B[N, K]^T, each element a dot product of a row of A and
// a row of B, summed in lanes (k mod lanes) that are then added in a fixed
// order.
void row_product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                            float* C, int ldc);

// The same two products of B's IEEE halves (binary16, a weights file's
// F16), widened exactly as they are read: each element is the same bits as
// the product of B widened to floats first, in every family, with half the
// bytes of B to read.
void row_product(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb, float* C,
                 int ldc);
void row_product_transposed(int M, int N, int K, const float* A, int lda, const uint16_t* B,
                            int ldb, float* C, int ldc);

// The transposed product of B's rows in bfloat16 or in ggml's blocks
// (base/weight_elements.h: a GGUF file's projections, embedding and
// classifier), widened exactly as they are read: the same bits as the
// product of B widened to floats first, in every family. K is whole blocks.
void row_product_transposed(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb,
                            float* C, int ldc);
void row_product_transposed(int M, int N, int K, const float* A, int lda, const BlockRows& B,
                            float* C, int ldc);

}  // namespace nextword
