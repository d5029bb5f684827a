// The backward math of math/layers.h (training): each *_backward adds into
// the gradients it is given.
#include <cblas.h>

#include <algorithm>

#include "math/kernels.h"
#include "math/layers.h"
#include "math/training_products.h"

namespace nextword {

void residual_backward(float* dX, float* dO, const float* d_out, size_t n) {
  accumulate(dX, d_out, n);
  accumulate(dO, d_out, n);
}

// Multiplying by the mask is its own derivative.
void dropout_backward(float* dx, const float* mask, size_t n) { dropout_forward(dx, mask, n); }

namespace {
// db[n] += sum over rows of d_out[T, n] (rows ld floats apart; 0: n)
void column_sums(float* db, const float* d_out, int T, int n, int ld = 0) {
  if (db == nullptr) return;
  if (ld == 0) ld = n;
  for (int t = 0; t < T; ++t) {
    const float* row = d_out + area(t, ld);
    for (int j = 0; j < n; ++j) db[j] += row[j];
  }
}
}  // namespace

void matmul_backward(float* d_in, float* dW, float* db, const float* d_out, const float* in,
                     const float* W, int T, int m, int n) {
  if (d_in != nullptr) training_product(false, true, T, m, n, d_out, n, W, n, 1.0f, d_in, m);
  training_product(true, false, m, n, T, in, m, d_out, n, 1.0f, dW, n);
  column_sums(db, d_out, T, n);
}

void classifier_backward(float* dZ, float* dC, float* dc, const float* dlogits, const float* Z,
                         const float* C, int N, int d, int V, int ld) {
  if (ld == 0) ld = V;
  if (dZ != nullptr) training_product(false, false, N, d, V, dlogits, ld, C, d, 1.0f, dZ, d);
  training_product(true, false, V, d, N, dlogits, ld, Z, d, 1.0f, dC, d);
  column_sums(dc, dlogits, N, V, ld);
}

void embedding_backward(float* dE, const float* dX, const int* ids, int T, int d) {
  for (int t = 0; t < T; ++t) {
    float* e = dE + area(ids[t], d);
    const float* x = dX + area(t, d);
    for (int j = 0; j < d; ++j) e[j] += x[j];
  }
}

void position_backward(float* dP, const float* dX, int T, int d) { accumulate(dP, dX, area(T, d)); }

void layernorm_backward(float* d_in, float* d_weight, float* d_bias, const float* d_out,
                        const float* in, const float* weight, int T, int d, float eps) {
  // d_in: rows are independent.
#pragma omp parallel for schedule(static) if (area(T, d) >= kParallelRows)
  for (int t = 0; t < T; ++t) {
    const float* x = in + area(t, d);
    const float* dy = d_out + area(t, d);
    float* dx = d_in + area(t, d);
    const auto [mean, rstd] = row_statistics(x, d, eps);
    // dnorm = dy * weight; dx = rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm))
    double dnorm_mean = 0.0, dnorm_norm_mean = 0.0;
    for (int j = 0; j < d; ++j) {
      const double dnorm = static_cast<double>(dy[j]) * weight[j];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * (x[j] - mean) * rstd;
    }
    dnorm_mean /= d;
    dnorm_norm_mean /= d;
    for (int j = 0; j < d; ++j) {
      const double norm = (x[j] - mean) * rstd;
      const double dnorm = static_cast<double>(dy[j]) * weight[j];
      dx[j] += static_cast<float>(rstd * (dnorm - dnorm_mean - norm * dnorm_norm_mean));
    }
  }
  // d_weight, d_bias: sums over rows, in row order (the same at any thread count).
  for (int t = 0; t < T; ++t) {
    const float* x = in + area(t, d);
    const float* dy = d_out + area(t, d);
    const auto [mean, rstd] = row_statistics(x, d, eps);
    for (int j = 0; j < d; ++j) {
      d_weight[j] += static_cast<float>((x[j] - mean) * rstd) * dy[j];
      d_bias[j] += dy[j];
    }
  }
}

void rmsnorm_backward(float* d_in, float* d_weight, const float* d_out, const float* in,
                      const float* weight, int T, int d, float eps) {
  // d_in: rows are independent. With n = x rstd and dn = dy * weight,
  // dx = rstd * (dn - n * mean(dn * n)).
#pragma omp parallel for schedule(static) if (area(T, d) >= kParallelRows)
  for (int t = 0; t < T; ++t) {
    const float* x = in + area(t, d);
    const float* dy = d_out + area(t, d);
    float* dx = d_in + area(t, d);
    const double rstd = rms_rstd(x, d, eps);
    double dnorm_norm_mean = 0.0;
    for (int j = 0; j < d; ++j) dnorm_norm_mean += static_cast<double>(dy[j]) * weight[j] * x[j];
    dnorm_norm_mean *= rstd / d;
    for (int j = 0; j < d; ++j) {
      const double norm = x[j] * rstd;
      const double dnorm = static_cast<double>(dy[j]) * weight[j];
      dx[j] += static_cast<float>(rstd * (dnorm - norm * dnorm_norm_mean));
    }
  }
  // d_weight: sums over rows, in row order (the same at any thread count).
  for (int t = 0; t < T; ++t) {
    const float* x = in + area(t, d);
    const float* dy = d_out + area(t, d);
    const double rstd = rms_rstd(x, d, eps);
    for (int j = 0; j < d; ++j) d_weight[j] += static_cast<float>(x[j] * rstd) * dy[j];
  }
}

void rope_backward(float* dx, int T, int ld, int n_heads, int d_k, const Rotary& rotary,
                   int first) {
  turn_pairs(dx, T, ld, n_heads, d_k, rotary, first, true);
}

void head_rmsnorm_backward(float* dy, const float* y, const float* rstd, int T, int ld_d, int ld_y,
                           int ld_rstd, int n_heads, int d_k) {
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < n_heads; ++i) {
      float* d = dy + area(t, ld_d) + area(i, d_k);
      const float* out = y + area(t, ld_y) + area(i, d_k);
      const double r = rstd[area(t, ld_rstd) + static_cast<size_t>(i)];
      double mean = 0.0;
      for (int j = 0; j < d_k; ++j) mean += static_cast<double>(d[j]) * out[j];
      mean /= d_k;
      for (int j = 0; j < d_k; ++j) d[j] = static_cast<float>(r * (d[j] - out[j] * mean));
    }
  }
}

void swiglu_backward(float* dG, float* dU, const float* dH, const float* G, const float* U,
                     size_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
  for (size_t i = 0; i < n; ++i) {
    const float sigmoid = 1.0f / (1.0f + std::exp(-G[i]));
    const float dh = dH[i];
    dU[i] = dh * silu_of(G[i], sigmoid);
    dG[i] = dh * U[i] * silu_derivative(G[i], sigmoid);
  }
}

void attention_backward(float* dQ, float* dK, float* dV, float* dS, const float* d_heads,
                        const float* A, const float* mask, const float* A_dropped, const float* Q,
                        const float* K, const float* V, int T, int n_heads, int n_kv_heads, int d_k,
                        int d_v, float scale, int ld_qkv) {
  const int q_width = n_heads * d_k, heads_width = n_heads * d_v, group = n_heads / n_kv_heads;
  const int k_width = n_kv_heads * d_k, v_width = n_kv_heads * d_v;
  const int q_ld = ld_qkv > 0 ? ld_qkv : q_width, k_ld = ld_qkv > 0 ? ld_qkv : k_width;
  const int v_ld = ld_qkv > 0 ? ld_qkv : v_width;
  const size_t TT = area(T, T);
  for (int i = 0; i < n_heads; ++i) {
    const float* A_i = A + static_cast<size_t>(i) * TT;
    const float* A_used = mask != nullptr ? A_dropped + static_cast<size_t>(i) * TT : A_i;
    const auto q_column = static_cast<size_t>(i) * static_cast<size_t>(d_k);
    const auto k_column = static_cast<size_t>(i / group) * static_cast<size_t>(d_k);
    const auto v_column = static_cast<size_t>(i / group) * static_cast<size_t>(d_v);
    const auto head_column = static_cast<size_t>(i) * static_cast<size_t>(d_v);
    // The group's first query head writes its kv head's dK and dV, the others add to them.
    const float kv_beta = i % group == 0 ? 0.0f : 1.0f;
    // head_i = A_i V_i:  dA_i = dhead_i V_i^T;  dV_i = A_i^T dhead_i
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, d_v, 1.0f, d_heads + head_column,
                heads_width, V + v_column, v_ld, 0.0f, dS, T);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, d_v, T, 1.0f, A_used, T,
                d_heads + head_column, heads_width, kv_beta, dV + v_column, v_width);
    if (mask != nullptr) dropout_backward(dS, mask + static_cast<size_t>(i) * TT, TT);
    // A = softmax(S) by rows: dS = A * (dA - sum_k A dA), times the scale of S = Q K^T * scale.
    // Masked entries have A = 0, so they get no gradient.
    for (int q = 0; q < T; ++q) {
      const float* a = A_i + area(q, T);
      float* ds = dS + area(q, T);
      double dot = 0.0;
      for (int k = 0; k < T; ++k) dot += static_cast<double>(a[k]) * ds[k];
      for (int k = 0; k < T; ++k) ds[k] = a[k] * (ds[k] - static_cast<float>(dot)) * scale;
    }
    // S_i = Q_i K_i^T:  dQ_i = dS K_i;  dK_i = dS^T Q_i
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, d_k, T, 1.0f, dS, T, K + k_column,
                k_ld, 0.0f, dQ + q_column, q_width);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, d_k, T, 1.0f, dS, T, Q + q_column, q_ld,
                kv_beta, dK + k_column, k_width);
  }
}

namespace {

// With s = 1 / (1 + e^(-2u)), u = kGeluC (v + kGeluCubic v^3): gelu(v) = v s
// (the forward's one exp), and since 0.5 (1 + tanh u) = s and
// 1 - tanh^2 u = 4 s (1 - s), gelu'(v) = s + 2 v s (1 - s) kGeluC (1 + 3 kGeluCubic v^2).
NEXTWORD_VECTOR_CLONES void gelu_backward_block(float* dx, const float* x, const float* dy,
                                                size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float s = 1.0f / (1.0f + fast_exp(-2.0f * kGeluC * (v + kGeluCubic * v * v * v)));
    const float grad = s + 2.0f * v * s * (1.0f - s) * kGeluC * (1.0f + 3.0f * kGeluCubic * v * v);
    dx[i] = dy[i] * grad;
  }
}

}  // namespace

void gelu_backward(float* dx, const float* x, const float* dy, size_t n) {
  for_element_blocks(
      n, [&](size_t at, size_t count) { gelu_backward_block(dx + at, x + at, dy + at, count); });
}

void relu_backward(float* dx, const float* x, const float* dy, size_t n) {
  for (size_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

void relu2_backward(float* dx, const float* x, const float* dy, size_t n) {
  for (size_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f ? 2.0f * x[i] * dy[i] : 0.0f;
}

}  // namespace nextword
