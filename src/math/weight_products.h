// The products of activations with a model's weights, whatever form the
// weights take (base/weight_view.h): floats, F16 halves in the math's
// layout, or a GGUF file's rows (of outputs or of words) in float32, F16,
// BF16 or Q8_0.
#pragma once

#include <span>

#include "base/weight_view.h"

namespace nextword {

// C[M, N] = A[M, K] op(B), op(B) = B [K, N] or, with transpose_B, B^T for B
// [N, K]; ldb is B's row length in the math's layout. Under Threading::kBlas
// (training) one OpenBLAS call on the floats. Under kRows (everything that
// prints results) the kernels of math/row_products.h, whose rows do not
// depend on the rows beside them, shared by the OpenMP threads when there is
// enough work: so a phrase gives the same bits alone, in a batch, on any
// thread and in any process (tests/unit/layers_test.cpp). B's halves are
// read in place of its floats (the same bits), a matrix held as rows of
// outputs by the transposed product of its rows, and rows of words as the
// transposed product reads them (op(B) = B^T) or else as floats.
void weight_product(bool transpose_B, int M, int N, int K, const float* A, int lda, WeightView B,
                    int ldb, float* C, int ldc);

// One of several products of the same A: C[M, N] = A[M, K] B, B [K, N]
// (ldb N), C's rows ldc apart.
struct WeightPart {
  WeightView B;
  int N = 0;
  float* C = nullptr;
  int ldc = 0;
};

// weight_product(false, M, part.N, K, A, lda, part.B, part.N, part.C,
// part.ldc) for each part, the same bits; where the threads would share the
// columns of each (few rows: generation), they share those of all the parts
// in one parallel region, one wait for the threads instead of one a product
// (a layer's q, k and v; its gate and up).
void weight_products(int M, int K, const float* A, int lda, std::span<const WeightPart> parts);

}  // namespace nextword
