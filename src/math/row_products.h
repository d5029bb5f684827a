// Matrix products whose every row is the same bits whatever rows are
// computed beside it: the products of everything that prints results
// (Threading::kRows, base/threading.h).
//
// OpenBLAS 0.3.21 picks its kernels and their order of sums from the whole
// call's shape, and on some CPUs from a row's place in the call: on the AMD
// EPYC machines this project now runs on (OpenBLAS's Haswell kernels), a row
// of a 4-row call already differs from the same row alone. So a phrase's
// last digits would depend on the phrases that shared its batch, its thread
// and its process. Here each element is summed over k = 0 .. K-1 in order,
// one rounded multiply and one rounded add at a time (this file is built
// with -ffp-contract=off), in the same order whatever M, the rows' places or
// the threads: the result of a row depends on that row and the weights alone.
#pragma once

namespace nextword {

// C[M, N] = A[M, K] B[K, N]; rows of A, B and C are lda, ldb, ldc floats apart.
void row_product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                 int ldc);

// C[M, N] = A[M, K] B[N, K]^T, each element a dot product of a row of A and
// a row of B, summed in kLanes lanes (k mod kLanes) that are then added in a
// fixed order.
void row_product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                            float* C, int ldc);

}  // namespace nextword
