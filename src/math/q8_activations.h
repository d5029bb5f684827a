// Products whose activations are rounded to 8 bits a block, as ggml's q8_0
// does, for weights in Q8_0 and Q4_0 blocks: integer products of the
// block's values, one float scale a block. A choice for a whole run
// (set_q8_activations), never a call's: every product of those weights
// then takes it, whatever its rows, so a row's bits still do not depend on
// the rows beside it.
//
// The row of A, K values, becomes blocks of 32: d = max |a| / 127 rounded
// to a half (as ggml stores it), q = a times the unrounded d's inverse,
// rounded to the nearest integer, ties to even (as ggml's AVX code does).
// A block holding a value that is not finite gets d NaN and q 0, so the
// products it meets are NaN in every family. For weight row w with
// block scales dw, the product is, in every kernel family, these bits:
//   p[b][l] = sum of w q over values 4l .. 4l+3 of block b (exact integers)
//   acc[l] = fma(dw[b] * d[b], float(p[b][l]), acc[l]), block after block
//   c = sum8(acc), adding lanes l and l + 4, then l and l + 2, then 0 and 1
// so the AVX2 family's 8-lane integer sums and the plain loop agree.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/weight_elements.h"

namespace nextword {

void set_q8_activations(bool on);
bool q8_activations();
// Whether q8 products take weights of this type, and whether its values
// have a minimum subtracted (Q4_K, Q5_K).
bool q8_type(WeightType type);
bool q8_has_min(WeightType type);

// Row x (K values, a multiple of 32) in q8_0 blocks: q[K] and d[K / 32],
// in the family in force (each the same bits).
void round_to_q8(const float* x, int K, int8_t* q, float* d);
void plain_round_to_q8(const float* x, int K, int8_t* q, float* d);
namespace avx2 {
void round_to_q8(const float* x, int K, int8_t* q, float* d);
}  // namespace avx2

// C = A B^T for rows of A already rounded (q, d as round_to_q8's, lda
// values apart), B's rows in blocks of a q8_type.
void plain_q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda,
                      const BlockRows& B, float* C, int ldc);
namespace avx2 {
void q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda, const BlockRows& B,
                float* C, int ldc);
}  // namespace avx2
namespace avx512 {
void q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda, const BlockRows& B,
                float* C, int ldc);
}  // namespace avx512
namespace vnni {
void q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda, const BlockRows& B,
                float* C, int ldc);
}  // namespace vnni

// The family in force (math/kernel_paths.h), each the plain loop's bits.
void q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda, const BlockRows& B,
                float* C, int ldc);

}  // namespace nextword
