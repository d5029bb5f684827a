// The forward math of the model, one plain function per formula.
//
// Everything is row-major float32: a matrix [T, n] is T rows of n floats, a
// row per word of the phrase. Matrix products go through OpenBLAS (CBLAS).
// These are the formulas of the attention article; the shapes are in the
// comments so each line can be checked against it.
#pragma once

#include <cstddef>

namespace nextword {

// out[T, n] = in[T, m] W[m, n] (+ b[n] on every row, when b is not null)
void matmul_forward(float* out, const float* in, const float* W, const float* b, int T, int m,
                    int n);

// out[n] = M[n, m] x[m] (+ b[n])  -- the classifier on one context vector
void matvec_forward(float* out, const float* M, const float* x, const float* b, int n, int m);

// X[T, d] = E[ids[t]] for each t
void embedding_forward(float* X, const float* E, const int* ids, int T, int d);

// X[T, d] += P[0..T-1]  (learned positions)
void position_forward(float* X, const float* P, int T, int d);

// X[T, d] += PE[0..T-1], PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same)
void sinusoid_forward(float* X, int T, int d);

// out[T, d] = (in - mean) / sqrt(var + eps) * weight + bias, per row, with the
// biased variance. `out` may equal `in`.
void layernorm_forward(float* out, const float* in, const float* weight, const float* bias, int T,
                       int d, float eps);

// row[n] = softmax(row); entries of -inf get probability 0. Stable for any
// finite input (the maximum is subtracted first).
void softmax_forward(float* row, int n);

// Scaled dot-product attention for every head (h heads, row-major):
//   Q[T, h*d_k], K[T, h*d_k], V[T, h*d_v]
//   A[h, T, T]: A_i = softmax_rows(Q_i K_i^T * scale + M), M = -inf above
//               the diagonal when causal
//   heads[T, h*d_v]: head_i = A_i V_i, written to columns i*d_v.. (the concat)
void attention_forward(float* heads, float* A, const float* Q, const float* K, const float* V,
                       int T, int n_heads, int d_k, int d_v, float scale, bool causal);

// x[n] = gelu(x), the tanh approximation used by GPT-2
void gelu_forward(float* x, size_t n);

// x[n] = max(x, 0)
void relu_forward(float* x, size_t n);

// X[n] += O[n]
void residual_forward(float* X, const float* O, size_t n);

}  // namespace nextword
