// The products of activations with a model's weights, whatever form the
// weights take (base/weight_view.h): floats, F16 halves in the math's
// layout, or a GGUF file's rows (of outputs or of words) in float32, F16,
// BF16 or Q8_0.
#pragma once

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

}  // namespace nextword
