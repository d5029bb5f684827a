#include "math/layers.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/random.h"
#include "base/threading.h"
#include "base/weight_elements.h"
#include "math/kernels.h"
#include "math/row_products.h"
#include "math/training_products.h"
#include "math/weight_products.h"

namespace nextword {
namespace {

// Queries of a head computed together (a causal block reads keys up to its last).
constexpr int kQueryBlock = 32;

// 0.5 v (1 + tanh(u)) = v / (1 + e^(-2u)), the GELU with one exp.
NEXTWORD_VECTOR_CLONES void gelu_block(float* x, size_t n, float c, float cubic) {
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = v / (1.0f + fast_exp(-2.0f * c * (v + cubic * v * v * v)));
  }
}

NEXTWORD_VECTOR_CLONES void rmsnorm_row(float* y, const float* x, const float* weight, int d,
                                        float eps) {
  const double rstd = rms_rstd(x, d, eps);
  for (int j = 0; j < d; ++j) y[j] = static_cast<float>(x[j] * rstd) * weight[j];
}

NEXTWORD_VECTOR_CLONES void swiglu_block(float* H, const float* G, const float* U, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float sigmoid = 1.0f / (1.0f + fast_exp(-G[i]));
    H[i] = silu_of(G[i], sigmoid) * U[i];
  }
}

// Elements [at, at + n) of a dropout mask, given `base` = the mask's base ^
// at (for_element_blocks' pieces start at multiples of 4,096 and are no
// longer, so at + i = at ^ i): u = the top 24 of splitmix64(base ^ i)'s bits
// / 2^24, in [0, 1); dropped where u < p. The 24 bits go through int32 on their way to
// float (exact either way) because a vector unsigned 64-bit conversion needs
// AVX512DQ: so the AVX-512 and AVX2 clones vectorize the whole loop.
NEXTWORD_VECTOR_CLONES void dropout_block(float* mask, size_t n, uint64_t base, float p,
                                          float keep) {
  for (size_t i = 0; i < n; ++i) {
    const auto bits = static_cast<int32_t>(splitmix64(base ^ i) >> 40);
    const float u = static_cast<float>(bits) * 0x1p-24f;
    mask[i] = u < p ? 0.0f : keep;
  }
}

NEXTWORD_VECTOR_CLONES void layernorm_row(float* y, const float* x, const float* weight,
                                          const float* bias, int d, float eps) {
  const auto [mean, rstd] = row_statistics(x, d, eps);
  for (int j = 0; j < d; ++j) {
    y[j] = static_cast<float>((x[j] - mean) * rstd) * weight[j] + bias[j];
  }
}

// out[t] += b for each of T rows ld_out apart (nothing when b is null).
void add_bias(float* out, const float* b, int T, int n, int ld_out) {
  if (b == nullptr) return;
  for (int t = 0; t < T; ++t) {
    float* row = out + area(t, ld_out);
    for (int j = 0; j < n; ++j) row[j] += b[j];
  }
}
}  // namespace

void matmul_forward(float* out, const float* in, WeightView W, const float* b, int T, int m, int n,
                    int ld_out) {
  if (ld_out == 0) ld_out = n;
  weight_product(false, T, n, m, in, m, W, n, out, ld_out);
  add_bias(out, b, T, n, ld_out);
}

void matmuls_forward(std::span<const MatmulPart> parts, const float* in, int T, int m) {
  std::vector<WeightPart> products;
  for (const MatmulPart& p : parts) products.push_back({p.W, p.n, p.out, p.ld_out});
  weight_products(T, m, in, m, products);
  for (const MatmulPart& p : parts) add_bias(p.out, p.b, T, p.n, p.ld_out);
}

void embedding_forward(float* X, WeightView E, const int* ids, int T, int d) {
  const auto width = static_cast<size_t>(d);
  if (E.rows() != nullptr && !E.output_rows()) {
    const char* rows = static_cast<const char*>(E.rows());
    for (int t = 0; t < T; ++t) {
      const size_t at = element_bytes(E.type(), static_cast<size_t>(ids[t]) * width);
      widen_elements(E.type(), rows + at, width, X + static_cast<size_t>(t) * width);
    }
    return;
  }
  const float* floats = E;
  for (int t = 0; t < T; ++t) {
    const float* e = floats + static_cast<size_t>(ids[t]) * width;
    float* x = X + static_cast<size_t>(t) * width;
    for (size_t j = 0; j < width; ++j) x[j] = e[j];
  }
}

void position_forward(float* X, const float* P, int T, int d) { accumulate(X, P, area(T, d)); }

void sinusoid_forward(float* X, int T, int d, int first) {
  for (int p = first; p < first + T; ++p) {
    float* x = X + static_cast<size_t>(p - first) * static_cast<size_t>(d);
    for (int j = 0; j < d; ++j) {
      const int two_i = j - j % 2;
      const double angle = p / std::pow(10000.0, static_cast<double>(two_i) / d);
      x[j] += static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
}

void layernorm_forward(float* out, const float* in, const float* weight, const float* bias, int T,
                       int d, float eps) {
#pragma omp parallel for schedule(static) if (area(T, d) >= kParallelRows)
  for (int t = 0; t < T; ++t) {
    layernorm_row(out + area(t, d), in + area(t, d), weight, bias, d, eps);
  }
}

void rmsnorm_forward(float* out, const float* in, const float* weight, int T, int d, float eps) {
#pragma omp parallel for schedule(static) if (area(T, d) >= kParallelRows)
  for (int t = 0; t < T; ++t) rmsnorm_row(out + area(t, d), in + area(t, d), weight, d, eps);
}

const float* rope_cos_sin(int positions, int d_k, const Rotary& rotary) {
  struct Table {
    int d_k = 0;
    float theta = 0;
    std::vector<float> factors;  // empty: none
    std::vector<float> values;   // [positions, d_k/2, 2]
  };
  thread_local Table table;
  const int half = d_k / 2;
  const float* factors = rotary.factors;
  const bool same_factors = factors == nullptr
                                ? table.factors.empty()
                                : table.factors.size() == static_cast<size_t>(half) &&
                                      std::equal(factors, factors + half, table.factors.begin());
  if (table.d_k != d_k || table.theta != rotary.theta || !same_factors) {
    table = {d_k, rotary.theta, {}, {}};
    if (factors != nullptr) table.factors.assign(factors, factors + half);
  }
  for (auto p = static_cast<int>(table.values.size() / area(half, 2)); p < positions; ++p) {
    for (int i = 0; i < half; ++i) {
      double angle = p * std::pow(static_cast<double>(rotary.theta), -2.0 * i / d_k);
      if (factors != nullptr) angle /= static_cast<double>(factors[i]);
      table.values.push_back(static_cast<float>(std::cos(angle)));
      table.values.push_back(static_cast<float>(std::sin(angle)));
    }
  }
  return table.values.data();
}

void rope_forward(float* x, int T, int ld, int n_heads, int d_k, const Rotary& rotary, int first) {
  turn_pairs(x, T, ld, n_heads, d_k, rotary, first, false);
}

void head_rmsnorm_forward(float* x, float* rstd, int T, int ld, int ld_rstd, int n_heads, int d_k,
                          float eps) {
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < n_heads; ++i) {
      float* block = x + area(t, ld) + area(i, d_k);
      const double r = rms_rstd(block, d_k, eps);
      for (int j = 0; j < d_k; ++j) block[j] = static_cast<float>(block[j] * r);
      if (rstd != nullptr) rstd[area(t, ld_rstd) + static_cast<size_t>(i)] = static_cast<float>(r);
    }
  }
}

void swiglu_forward(float* H, const float* G, const float* U, size_t n) {
  for_element_blocks(n,
                     [&](size_t at, size_t count) { swiglu_block(H + at, G + at, U + at, count); });
}

NEXTWORD_VECTOR_CLONES double log_sum_exp(const float* x, int n) {
  const float max = max_of(x, n);
  if (max == -std::numeric_limits<float>::infinity() ||
      max == std::numeric_limits<float>::infinity()) {
    return max;
  }
  constexpr int kChunk = 256;
  float e[kChunk];
  double sum = 0.0;
  for (int j = 0; j < n; j += kChunk) {
    const int m = std::min(kChunk, n - j);
    for (int k = 0; k < m; ++k) e[k] = fast_exp(x[j + k] - max);
    sum += sum_of(e, m);
  }
  return static_cast<double>(max) + std::log(sum);
}

NEXTWORD_VECTOR_CLONES double exact_log_sum_exp(const float* x, int n) {
  const float max = max_of(x, n);
  if (std::isinf(max)) return max;
  const auto m = static_cast<double>(max);
  // Chunks of exponentials (a loop that vectorizes), each summed in kLanes
  // running sums in a fixed order.
  constexpr int kChunk = 256;
  double e[kChunk];
  double lanes[kLanes] = {};
  for (int j = 0; j < n; j += kChunk) {
    const int count = std::min(kChunk, n - j);
    for (int k = 0; k < count; ++k) e[k] = exact_exp(static_cast<double>(x[j + k]) - m);
    for (int k = 0; k < count; ++k) lanes[k % kLanes] += e[k];
  }
  double sum = 0.0;
  for (const double lane : lanes) sum += lane;
  return m + std::log(sum);
}

NEXTWORD_VECTOR_CLONES double exp_sum_row(float* x, int n) {
  const float max = max_of(x, n);
  for (int j = 0; j < n; ++j) x[j] = fast_exp(x[j] - max);
  return sum_of(x, n);
}

NEXTWORD_VECTOR_CLONES void scale_add_log_row(float* x, int n, float scale, const float* u,
                                              float base) {
  for (int j = 0; j < n; ++j) x[j] = fast_log(scale * x[j] + base * u[j]);
}

NEXTWORD_VECTOR_CLONES double softmax_forward(float* row, int n) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float max = max_of(row, n);
  if (max == kInf) {
    // Overflowed scores: the infinite ones share the mass, as in the limit.
    for (int j = 0; j < n; ++j) row[j] = row[j] == kInf ? 0.0f : -kInf;
    max = 0.0f;
  }
  for (int j = 0; j < n; ++j) row[j] = row[j] == -kInf ? 0.0f : fast_exp(row[j] - max);
  const double sum = sum_of(row, n);
  const auto inverse = static_cast<float>(1.0 / sum);
  for (int j = 0; j < n; ++j) row[j] *= inverse;
  return static_cast<double>(max) + std::log(sum);
}

void attention_forward(float* heads, float* A, const float* Q, const float* K, const float* V,
                       int T, int n_heads, int n_kv_heads, int d_k, int d_v, float scale,
                       bool causal, const float* mask, float* A_dropped, int ld_qkv) {
  const int v_width = n_heads * d_v, group = n_heads / n_kv_heads;
  const int q_ld = ld_qkv > 0 ? ld_qkv : n_heads * d_k;
  const int k_ld = ld_qkv > 0 ? ld_qkv : n_kv_heads * d_k;
  const int v_ld = ld_qkv > 0 ? ld_qkv : n_kv_heads * d_v;
  const auto TT = static_cast<size_t>(T) * static_cast<size_t>(T);
  // Under Threading::kRows (results) the products of math/row_products.h, so
  // that query q's row is the same bits whatever the other queries and
  // whatever OpenBLAS would pick on this CPU; training keeps OpenBLAS.
  const bool rows = fixed_row_blocks();
  for (int i = 0; i < n_heads; ++i) {
    float* A_i = A + static_cast<size_t>(i) * TT;
    const auto q_column = static_cast<size_t>(i) * static_cast<size_t>(d_k);
    const auto k_column = static_cast<size_t>(i / group) * static_cast<size_t>(d_k);
    const auto v_column = static_cast<size_t>(i / group) * static_cast<size_t>(d_v);
    const auto head_column = static_cast<size_t>(i) * static_cast<size_t>(d_v);
    // A_i = Q_i K_i^T * scale; a causal block of queries needs the keys up
    // to its last query only (the rest of its rows is zeroed below): half
    // the products of a long context.
    if (rows) {
      for (int q0 = 0; q0 < T; q0 += kQueryBlock) {
        const int queries = std::min(kQueryBlock, T - q0), keys = causal ? q0 + queries : T;
        float* block = A_i + area(q0, T);
        row_product_transposed(queries, keys, d_k, Q + area(q0, q_ld) + q_column, q_ld,
                               K + k_column, k_ld, block, T);
        for (int q = 0; q < queries; ++q) {
          for (int k = 0; k < keys; ++k) block[area(q, T) + static_cast<size_t>(k)] *= scale;
        }
      }
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, d_k, scale, Q + q_column, q_ld,
                  K + k_column, k_ld, 0.0f, A_i, T);
    }
    for (int q = 0; q < T; ++q) {
      float* row = A_i + static_cast<size_t>(q) * static_cast<size_t>(T);
      if (causal) {
        // The softmax of the keys up to q alone, so that a row is the same
        // bits whatever keys come after it (a longer window, a cache).
        softmax_forward(row, q + 1);
        std::fill(row + q + 1, row + T, 0.0f);
      } else {
        softmax_forward(row, T);
      }
    }
    const float* A_used = A_i;
    if (mask != nullptr) {
      float* dropped = A_dropped + static_cast<size_t>(i) * TT;
      const float* mask_i = mask + static_cast<size_t>(i) * TT;
      for (size_t j = 0; j < TT; ++j) dropped[j] = A_i[j] * mask_i[j];
      A_used = dropped;
    }
    // head_i = A_i V_i, into its columns of the concatenation
    if (rows) {
      // Likewise a causal block's weights past its last query are 0: leaving
      // them out leaves each sum as it was.
      for (int q0 = 0; q0 < T; q0 += kQueryBlock) {
        const int queries = std::min(kQueryBlock, T - q0), keys = causal ? q0 + queries : T;
        row_product(queries, d_v, keys, A_used + area(q0, T), T, V + v_column, v_ld,
                    heads + area(q0, v_width) + head_column, v_width);
      }
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, d_v, T, 1.0f, A_used, T,
                  V + v_column, v_ld, 0.0f, heads + head_column, v_width);
    }
  }
}

void attention_extend(float* heads, const float* Q, int ld_q, const float* K, int ld_k,
                      const float* V, int ld_v, int first, int n, int n_heads, int n_kv_heads,
                      int d_k, int d_v, float scale, float* scores) {
  const int v_width = n_heads * d_v, group = n_heads / n_kv_heads;
  for (int r = 0; r < n; ++r) {
    const int keys = first + r + 1;
    for (int i = 0; i < n_heads; ++i) {
      const auto q_column = static_cast<size_t>(i) * static_cast<size_t>(d_k);
      const auto k_column = static_cast<size_t>(i / group) * static_cast<size_t>(d_k);
      const auto v_column = static_cast<size_t>(i / group) * static_cast<size_t>(d_v);
      row_product_transposed(1, keys, d_k, Q + area(r, ld_q) + q_column, ld_q, K + k_column, ld_k,
                             scores, keys);
      for (int k = 0; k < keys; ++k) scores[k] *= scale;
      softmax_forward(scores, keys);
      row_product(1, d_v, keys, scores, keys, V + v_column, ld_v,
                  heads + area(r, v_width) + static_cast<size_t>(i) * static_cast<size_t>(d_v),
                  v_width);
    }
  }
}

void gelu_forward(float* x, size_t n) {
  for_element_blocks(
      n, [&](size_t at, size_t count) { gelu_block(x + at, count, kGeluC, kGeluCubic); });
}

void relu_forward(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu2_forward(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] * x[i] : 0.0f;
}

void residual_forward(float* out, const float* X, const float* O, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = X[i] + O[i];
}

void accumulate(float* y, const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

void classifier_forward(float* logits, const float* Z, WeightView C, const float* c, int N, int d,
                        int V, int ld_out) {
  if (ld_out == 0) ld_out = V;
  weight_product(true, N, V, d, Z, d, C, d, logits, ld_out);
  if (c == nullptr) return;
  for (int t = 0; t < N; ++t) {
    float* row = logits + area(t, ld_out);
    for (int j = 0; j < V; ++j) row[j] += c[j];
  }
}

void log_softmax_forward(float* row, int n) {
  const auto normalizer = static_cast<float>(log_sum_exp(row, n));
  for (int j = 0; j < n; ++j) row[j] -= normalizer;
}

void dropout_mask(float* mask, size_t n, float p, uint64_t seed) {
  const float keep = 1.0f / (1.0f - p);
  const uint64_t base = splitmix64(seed);
  for_element_blocks(
      n, [&](size_t at, size_t count) { dropout_block(mask + at, count, base ^ at, p, keep); });
}

void dropout_forward(float* x, const float* mask, size_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
  for (size_t i = 0; i < n; ++i) x[i] *= mask[i];
}

double crossentropy_forward_backward(float* logits, const int* targets, int N, int V, float scale) {
  std::vector<double> losses(static_cast<size_t>(N));
#pragma omp parallel for schedule(static) if (area(N, V) >= kParallelRows)
  for (int t = 0; t < N; ++t) {
    float* row = logits + area(t, V);
    const int target = targets[t];
    // -ln softmax(row)[target] = logsumexp(row) - row[target], exact even
    // where the probability underflows float32.
    const double target_logit = row[target];
    losses[static_cast<size_t>(t)] = softmax_forward(row, V) - target_logit;
    for (int j = 0; j < V; ++j) row[j] *= scale;
    row[target] -= scale;
  }
  double loss = 0.0;  // summed in order, so the total does not depend on threads
  for (double l : losses) loss += l;
  return loss;
}

double distillation_forward_backward(float* logits, const float* teacher, const int* targets, int N,
                                     int V, float weight, float tau, float scale) {
  std::vector<double> losses(static_cast<size_t>(N));
#pragma omp parallel for schedule(static) if (area(N, V) >= kParallelRows)
  for (int t = 0; t < N; ++t) {
    float* row = logits + area(t, V);
    const float* teacher_row = teacher + area(t, V);
    thread_local std::vector<float> p, q;  // softmax(logits / tau), softmax(teacher / tau)
    p.resize(static_cast<size_t>(V));
    q.resize(static_cast<size_t>(V));
    for (int j = 0; j < V; ++j) {
      p[static_cast<size_t>(j)] = row[j] / tau;
      q[static_cast<size_t>(j)] = teacher_row[j] / tau;
    }
    const double log_z_student = softmax_forward(p.data(), V);
    const double log_z_teacher = softmax_forward(q.data(), V);
    // KL(q || p) = sum_j q_j (log q_j - log p_j), log q_j = teacher_j / tau - log_z_teacher
    double kl = 0.0;
    for (int j = 0; j < V; ++j) {
      const double qj = q[static_cast<size_t>(j)];
      if (qj > 0.0) {
        kl += qj * ((teacher_row[j] / tau - log_z_teacher) - (row[j] / tau - log_z_student));
      }
    }
    const int target = targets[t];
    const double target_logit = row[target];
    const double ce = softmax_forward(row, V) - target_logit;  // row is softmax(logits) now
    losses[static_cast<size_t>(t)] = (1.0 - weight) * ce + weight * tau * tau * kl;
    const float hard = (1.0f - weight) * scale, soft = weight * tau * scale;
    for (int j = 0; j < V; ++j) {
      row[j] = hard * row[j] + soft * (p[static_cast<size_t>(j)] - q[static_cast<size_t>(j)]);
    }
    row[target] -= hard;
  }
  double loss = 0.0;  // summed in order, so the total does not depend on threads
  for (double l : losses) loss += l;
  return loss;
}

}  // namespace nextword
