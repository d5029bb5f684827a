// The forward math of the model, one plain function per formula.
//
// Everything is row-major float32: a matrix [T, n] is T rows of n floats, a
// row per word of the phrase. Matrix products go through OpenBLAS (CBLAS)
// when training (Threading::kBlas) and through our own kernels
// (math/row_products.h) for everything that prints results, whose rows are
// the same bits however they are batched and threaded.
// These are the formulas of the attention article; the shapes are in the
// comments so each line can be checked against it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/weight_view.h"

namespace nextword {

// Floats in a [rows, cols] matrix, computed in size_t.
inline size_t area(int rows, int cols) {
  return static_cast<size_t>(rows) * static_cast<size_t>(cols);
}

// Windows are attended to in parallel only when there is enough work (N*T
// scores per head) to pay for waking the threads.
constexpr size_t kParallelAttention = 1 << 14;

// out[T, n] = in[T, m] W[m, n] (+ b[n] on every row, when b is not null).
// Rows of `out` are ld_out floats apart (0: n), so a product can fill some
// columns of a wider matrix.
// W's halves, when it has them, are read in place of its floats (the same
// bits) under Threading::kRows.
void matmul_forward(float* out, const float* in, WeightView W, const float* b, int T, int m, int n,
                    int ld_out = 0);

// matmul_forward of several weights on the same in[T, m], the same bits:
// part p fills out_p[T, n_p] (rows ld_out apart). With few rows the
// threads share all the parts' columns at once (math/weight_products.h).
struct MatmulPart {
  float* out;
  WeightView W;
  const float* b;
  int n;
  int ld_out;
};
void matmuls_forward(std::span<const MatmulPart> parts, const float* in, int T, int m);

// X[T, d] = E[ids[t]] for each t; E's rows of words in another type (a
// GGUF file's, base/weight_view.h) widened as they are copied, one row a
// token, the whole never widened.
void embedding_forward(float* X, WeightView E, const int* ids, int T, int d);

// X[T, d] += P[0..T-1]  (learned positions)
void position_forward(float* X, const float* P, int T, int d);

// X[T, d] += PE[first..first+T-1], PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same)
void sinusoid_forward(float* X, int T, int d, int first = 0);

// out[T, d] = (in - mean) / sqrt(var + eps) * weight + bias, per row, with the
// biased variance. `out` may equal `in`.
void layernorm_forward(float* out, const float* in, const float* weight, const float* bias, int T,
                       int d, float eps);

// out[T, d] = in / sqrt(mean(in^2) + eps) * weight, per row (RMSNorm, no
// bias, no mean subtracted). `out` may equal `in`.
void rmsnorm_forward(float* out, const float* in, const float* weight, int T, int d, float eps);

// Rotary position embedding (RoFormer; pairs as in llama2.c): in each of the
// How rotary positions turn a head's columns (data/FORMAT.md, "Rotary
// positions"): pair i is the columns (2i, 2i+1) (llama2.c's and Llama's
// GGUF files' pairing), or (i, i + d_k/2) with `halves` (GPT-NeoX's, Qwen2's);
// it turns by the angle p * theta^(-2i/d_k) / factors[i] (Llama 3's
// frequency factors; 1 when factors is null).
struct Rotary {
  float theta = 10000.0f;
  bool halves = false;
  const float* factors = nullptr;  // d_k/2 of them, or null
};

// n_heads column blocks of d_k columns of x[T, ld], pair i of row t turns
// by the angle (first + t) * theta^(-2i/d_k) / factor_i:
//   x[a] = x[a] cos - x[b] sin
//   x[b] = x[a] sin + x[b] cos      (a, b the pair's columns)
// In place; d_k is even. Each element's result depends on its row's position
// and its own pair only.
void rope_forward(float* x, int T, int ld, int n_heads, int d_k, const Rotary& rotary,
                  int first = 0);

// QK-norm without a gain: each of the n_heads blocks of d_k columns of
// x[T, ld] divided by its root mean square, x / sqrt(mean(x^2) + eps), in
// place. rstd[T, ld_rstd] (may be null) keeps each block's 1 / that root for
// the backward pass. A rotation of a block's pairs keeps its root mean
// square, so this commutes with rope_forward.
void head_rmsnorm_forward(float* x, float* rstd, int T, int ld, int ld_rstd, int n_heads, int d_k,
                          float eps);

// H[n] = silu(G[n]) * U[n], silu(g) = g / (1 + e^-g): the gated unit of SwiGLU,
// G the gate's and U the up projection's output.
void swiglu_forward(float* H, const float* G, const float* U, size_t n);

// row[n] = softmax(row); entries of -inf get probability 0. Stable for any
// finite input (the maximum is subtracted first). Returns ln sum_j e^row[j]
// (of the input), the normalizer that cross-entropy needs.
double softmax_forward(float* row, int n);

// ln sum_j e^x[j], what softmax_forward returns, without touching x.
double log_sum_exp(const float* x, int n);
// The same in double throughout (exact_exp): to about 1e-15, where
// log_sum_exp's float exponentials hold to about 1e-7.
double exact_log_sum_exp(const float* x, int n);
// x[i] = e^(x[i] - max x); returns their sum (in double, sum_of's order).
double exp_sum_row(float* x, int n);
// x[i] = ln(scale x[i] + base u[i]) (fast_log: -FLT_MAX for 0): with
// exp_sum_row, ln of a softmax weighted and added to another distribution u.
void scale_add_log_row(float* x, int n, float scale, const float* u, float base);

// Scaled dot-product attention for every head (h heads, row-major), query
// head i reading key/value head i / (h / kv) (grouped-query attention when
// kv < h):
//   Q[T, h*d_k], K[T, kv*d_k], V[T, kv*d_v]
//   A[h, T, T]: A_i = softmax_rows(Q_i K_i^T * scale + M), M = -inf above
//               the diagonal when causal (K_i, V_i: those of kv head i / (h / kv))
//   heads[T, h*d_v]: head_i = A_i V_i, written to columns i*d_v.. (the concat)
// With a dropout `mask` [h, T, T] (training), heads are (A * mask) V and
// A_dropped receives A * mask; A itself stays the softmax output.
// With ld_qkv > 0, rows of Q, K and V are ld_qkv floats apart: they are
// column blocks of one [T, ld_qkv] matrix, the output of the fused QKV product.
void attention_forward(float* heads, float* A, const float* Q, const float* K, const float* V,
                       int T, int n_heads, int n_kv_heads, int d_k, int d_v, float scale,
                       bool causal, const float* mask = nullptr, float* A_dropped = nullptr,
                       int ld_qkv = 0);

// Causal attention of n new queries against a cache of keys and values
// (h query heads, kv key/value heads, as in attention_forward): query r is
// at position first + r and sees keys 0 .. first + r.
//   Q[n, ld_q], K[first + n, ld_kv_k], V[first + n, ld_kv_v] (Q and K turned
//   by rotary positions already, when the model has them)
//   heads[n, h*d_v]: head_i of each query, written to columns i*d_v..
// Every row is the same bits as the row of that query in attention_forward
// under Threading::kRows over the whole window: the products of
// math/row_products.h, the softmax of the keys up to the query. `scores` is
// scratch of first + n floats.
void attention_extend(float* heads, const float* Q, int ld_q, const float* K, int ld_k,
                      const float* V, int ld_v, int first, int n, int n_heads, int n_kv_heads,
                      int d_k, int d_v, float scale, float* scores);

// x[n] = gelu(x), the tanh approximation used by GPT-2
void gelu_forward(float* x, size_t n);

// x[n] = max(x, 0)
void relu_forward(float* x, size_t n);
// x = max(x, 0)^2: squared ReLU (So et al. 2021, Primer).
void relu2_forward(float* x, size_t n);

// out[n] = X[n] + O[n]: the residual connection around a block whose output
// is O. `out` may be X.
void residual_forward(float* out, const float* X, const float* O, size_t n);

// y[n] += x[n]
void accumulate(float* y, const float* x, size_t n);

// logits[N, V] = Z[N, d] C[V, d]^T (+ c[V] on every row): the classifier on N
// context vectors at once. Rows of `logits` are ld_out floats apart (0: V),
// so that the products of the adaptive softmax can fill columns of one row.
// C's halves, when it has them, are read as matmul_forward reads W's.
void classifier_forward(float* logits, const float* Z, WeightView C, const float* c, int N, int d,
                        int V, int ld_out = 0);

// row[n] = ln softmax(row) = row - ln sum_j e^row[j], in place.
void log_softmax_forward(float* row, int n);

// mask[n] = 0 with probability p, else 1 / (1 - p). The mask is a pure
// function of (seed, index), so it does not depend on the thread count.
void dropout_mask(float* mask, size_t n, float p, uint64_t seed);

// x[n] *= mask[n]
void dropout_forward(float* x, const float* mask, size_t n);

// For each of N rows: probs = softmax(logits), loss -= log probs[target];
// then the row becomes d loss / d logits = (probs - onehot(target)) * scale.
// Returns the summed loss (before scaling).
double crossentropy_forward_backward(float* logits, const int* targets, int N, int V, float scale);

// Distillation (Hinton et al. 2015) for each of N rows: with p_S = softmax(logits / tau)
// and p_T = softmax(teacher / tau),
//   loss = (1 - w) * (-log softmax(logits)[target]) + w * tau^2 * KL(p_T || p_S);
// then the row becomes d loss / d logits, times `scale`:
//   (1 - w) (softmax(logits) - onehot(target)) + w tau (p_S - p_T).
// Returns the summed loss (before scaling). `teacher` is [N, V] and left as it is.
double distillation_forward_backward(float* logits, const float* teacher, const int* targets, int N,
                                     int V, float weight, float tau, float scale);

// ---- Backward passes (training).
//
// As in llm.c, each *_backward adds (+=) into the gradients it is given, so a
// tensor used twice (the tied embedding) collects both parts. A null gradient
// pointer means "not needed" (an absent bias, or the input of the first layer).

// out = in W + b:  d_in[T, m] += d_out W^T;  dW[m, n] += in^T d_out;  db[n] += sum_t d_out[t]
void matmul_backward(float* d_in, float* dW, float* db, const float* d_out, const float* in,
                     const float* W, int T, int m, int n);

// logits = Z C^T + c:  dZ[N, d] += dlogits C;  dC[V, d] += dlogits^T Z;  dc += column sums.
// Rows of dlogits are ld floats apart (0: V). dZ may be null (not needed).
void classifier_backward(float* dZ, float* dC, float* dc, const float* dlogits, const float* Z,
                         const float* C, int N, int d, int V, int ld = 0);

// dE[ids[t]] += dX[t]
void embedding_backward(float* dE, const float* dX, const int* ids, int T, int d);

// dP[0..T-1] += dX
void position_backward(float* dP, const float* dX, int T, int d);

// Through out = layernorm(in): d_in += ..., d_weight += ..., d_bias += ...
// (mean and variance are recomputed from `in`).
void layernorm_backward(float* d_in, float* d_weight, float* d_bias, const float* d_out,
                        const float* in, const float* weight, int T, int d, float eps);

// Through rmsnorm_forward: d_in += ..., d_weight += ... (the scale is
// recomputed from `in`).
void rmsnorm_backward(float* d_in, float* d_weight, const float* d_out, const float* in,
                      const float* weight, int T, int d, float eps);

// Through rope_forward: dx turned back by the same angles (the rotation's
// transpose), in place.
void rope_backward(float* dx, int T, int ld, int n_heads, int d_k, const Rotary& rotary,
                   int first = 0);

// Through head_rmsnorm_forward, in place: each block of dy[T, ld_d] becomes
// d loss / d x = rstd (dy - y mean(dy y)), y[T, ld_y] the forward's output.
void head_rmsnorm_backward(float* dy, const float* y, const float* rstd, int T, int ld_d, int ld_y,
                           int ld_rstd, int n_heads, int d_k);

// Through swiglu_forward: dG[n] = dH U silu'(G), dU[n] = dH silu(G) (written).
void swiglu_backward(float* dG, float* dU, const float* dH, const float* G, const float* U,
                     size_t n);

// Through attention_forward for one window (h query heads, kv key/value
// heads). dQ, dK, dV are written, not added to; a kv head's dK and dV sum
// over the query heads that read it. dS is scratch of [T, T]. `mask` and A_dropped are those of the
// forward pass (both null without dropout); ld_qkv is as there.
void attention_backward(float* dQ, float* dK, float* dV, float* dS, const float* d_heads,
                        const float* A, const float* mask, const float* A_dropped, const float* Q,
                        const float* K, const float* V, int T, int n_heads, int n_kv_heads, int d_k,
                        int d_v, float scale, int ld_qkv = 0);

// dx[n] = dy[n] * act'(x[n]), x the input of the activation (in place on dy allowed)
void gelu_backward(float* dx, const float* x, const float* dy, size_t n);
void relu_backward(float* dx, const float* x, const float* dy, size_t n);
// dx = dy 2 max(x, 0), x the input of relu2_forward.
void relu2_backward(float* dx, const float* x, const float* dy, size_t n);

// Through out = X + O:  dX[n] += d_out;  dO[n] += d_out
void residual_backward(float* dX, float* dO, const float* d_out, size_t n);

// dx[n] *= mask[n]
void dropout_backward(float* dx, const float* mask, size_t n);

}  // namespace nextword
