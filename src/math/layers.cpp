#include "math/layers.h"

#include <cblas.h>

#include <cmath>
#include <limits>

namespace nextword {

void matmul_forward(float* out, const float* in, const float* W, const float* b, int T, int m,
                    int n) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, n, m, 1.0f, in, m, W, n, 0.0f, out, n);
  if (b == nullptr) return;
  for (int t = 0; t < T; ++t) {
    float* row = out + static_cast<size_t>(t) * static_cast<size_t>(n);
    for (int j = 0; j < n; ++j) row[j] += b[j];
  }
}

void matvec_forward(float* out, const float* M, const float* x, const float* b, int n, int m) {
  cblas_sgemv(CblasRowMajor, CblasNoTrans, n, m, 1.0f, M, m, x, 1, 0.0f, out, 1);
  if (b == nullptr) return;
  for (int i = 0; i < n; ++i) out[i] += b[i];
}

void embedding_forward(float* X, const float* E, const int* ids, int T, int d) {
  const auto width = static_cast<size_t>(d);
  for (int t = 0; t < T; ++t) {
    const float* e = E + static_cast<size_t>(ids[t]) * width;
    float* x = X + static_cast<size_t>(t) * width;
    for (size_t j = 0; j < width; ++j) x[j] = e[j];
  }
}

void position_forward(float* X, const float* P, int T, int d) {
  residual_forward(X, P, static_cast<size_t>(T) * static_cast<size_t>(d));
}

void sinusoid_forward(float* X, int T, int d) {
  for (int p = 0; p < T; ++p) {
    float* x = X + static_cast<size_t>(p) * static_cast<size_t>(d);
    for (int j = 0; j < d; ++j) {
      const int two_i = j - j % 2;
      const double angle = p / std::pow(10000.0, static_cast<double>(two_i) / d);
      x[j] += static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
}

void layernorm_forward(float* out, const float* in, const float* weight, const float* bias, int T,
                       int d, float eps) {
  for (int t = 0; t < T; ++t) {
    const float* x = in + static_cast<size_t>(t) * static_cast<size_t>(d);
    float* y = out + static_cast<size_t>(t) * static_cast<size_t>(d);
    // Accumulate in double: rows can be long and values far from zero.
    double mean = 0.0;
    for (int j = 0; j < d; ++j) mean += x[j];
    mean /= d;
    double var = 0.0;
    for (int j = 0; j < d; ++j) var += (x[j] - mean) * (x[j] - mean);
    var /= d;
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int j = 0; j < d; ++j) {
      y[j] = static_cast<float>((x[j] - mean) * rstd) * weight[j] + bias[j];
    }
  }
}

void softmax_forward(float* row, int n) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float max = -kInf;
  for (int j = 0; j < n; ++j) max = std::fmax(max, row[j]);
  if (max == kInf) {
    // Overflowed scores: the infinite ones share the mass, as in the limit.
    for (int j = 0; j < n; ++j) row[j] = row[j] == kInf ? 0.0f : -kInf;
    max = 0.0f;
  }
  double sum = 0.0;
  for (int j = 0; j < n; ++j) {
    row[j] = row[j] == -kInf ? 0.0f : std::exp(row[j] - max);
    sum += row[j];
  }
  const auto inverse = static_cast<float>(1.0 / sum);
  for (int j = 0; j < n; ++j) row[j] *= inverse;
}

void attention_forward(float* heads, float* A, const float* Q, const float* K, const float* V,
                       int T, int n_heads, int d_k, int d_v, float scale, bool causal) {
  const int qk_width = n_heads * d_k, v_width = n_heads * d_v;
  const auto TT = static_cast<size_t>(T) * static_cast<size_t>(T);
  for (int i = 0; i < n_heads; ++i) {
    float* A_i = A + static_cast<size_t>(i) * TT;
    const auto qk_column = static_cast<size_t>(i) * static_cast<size_t>(d_k);
    const auto v_column = static_cast<size_t>(i) * static_cast<size_t>(d_v);
    // A_i = Q_i K_i^T * scale
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, d_k, scale, Q + qk_column, qk_width,
                K + qk_column, qk_width, 0.0f, A_i, T);
    for (int q = 0; q < T; ++q) {
      float* row = A_i + static_cast<size_t>(q) * static_cast<size_t>(T);
      if (causal) {
        for (int k = q + 1; k < T; ++k) row[k] = -std::numeric_limits<float>::infinity();
      }
      softmax_forward(row, T);
    }
    // head_i = A_i V_i, into its columns of the concatenation
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, d_v, T, 1.0f, A_i, T, V + v_column,
                v_width, 0.0f, heads + v_column, v_width);
  }
}

void gelu_forward(float* x, size_t n) {
  const float c = std::sqrt(2.0f / static_cast<float>(M_PI));
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
  }
}

void relu_forward(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void residual_forward(float* X, const float* O, size_t n) {
  for (size_t i = 0; i < n; ++i) X[i] += O[i];
}

}  // namespace nextword
