#include "transformer/blocks.h"

#include <algorithm>

#include "math/layers.h"
#include "transformer/adaptive_softmax.h"

namespace nextword {
namespace {

void zero(std::vector<float>& v, size_t n) { v.assign(n, 0.0f); }

// d_in += d out / d in for out = norm(in), or d_in += d_out without a norm.
void norm_backward(float* d_in, float* d_weight, float* d_bias, const float* d_out, const float* in,
                   const float* weight, const Config& c, int rows) {
  switch (c.norm) {
    case Norm::kNone: accumulate(d_in, d_out, area(rows, c.d_model)); return;
    case Norm::kLayerNorm:
      layernorm_backward(d_in, d_weight, d_bias, d_out, in, weight, rows, c.d_model, c.norm_eps);
      return;
    case Norm::kRmsNorm:
      rmsnorm_backward(d_in, d_weight, d_out, in, weight, rows, c.d_model, c.norm_eps);
      return;
  }
}

// The config's rotary positions as the math turns them.
Rotary rotary(const Config& c) {
  return {c.rope_theta, c.rope_halves, c.rope_factors.empty() ? nullptr : c.rope_factors.data()};
}

// Row `row`'s QK-norm scales in a.qk_rstd, or null without QK-norm.
template <typename Activations>
auto qk_rstd_at(Activations& a, const Config& c, size_t row) {
  return c.qk_norm ? a.qk_rstd.data() + row * static_cast<size_t>(c.n_heads + c.kv_heads())
                   : nullptr;
}

// Back through position_qk: dQ [T, q] and dK [T, k] become d loss / d Q and K
// as the projections made them; QK is position_qk's output (rows ld apart).
void position_qk_backward(float* dQ, float* dK, const float* QK, int ld, const float* rstd, int T,
                          const Config& c) {
  if (c.qk_norm) {
    const int ld_rstd = c.n_heads + c.kv_heads();
    head_rmsnorm_backward(dQ, QK, rstd, T, c.q_width(), ld, ld_rstd, c.n_heads, c.d_k);
    head_rmsnorm_backward(dK, QK + c.q_width(), rstd + c.n_heads, T, c.k_width(), ld, ld_rstd,
                          c.kv_heads(), c.d_k);
  }
  if (c.positional == Positional::kRope) {
    rope_backward(dQ, T, c.q_width(), c.n_heads, c.d_k, rotary(c));
    rope_backward(dK, T, c.k_width(), c.kv_heads(), c.d_k, rotary(c));
  }
}

// Every place that drops out gets its own masks: site 4l+1 is layer l's
// attention weights, 4l+2 its attention branch, 4l+3 its feed-forward branch.
uint64_t site_seed(const Dropout& dropout, int l, int site) {
  return dropout.seed + static_cast<uint64_t>(l) * 4 + static_cast<uint64_t>(site);
}

// Back through out = X + O (or out = O): d X_in and d O from g.dX = d out.
// g.dX_in then holds d X's share, which the block adds to.
void residual_or_copy_backward(GradState& g, const Config& c) {
  zero(g.dX_in, g.dX.size());
  zero(g.dO, g.dX.size());
  if (c.residual) {
    residual_backward(g.dX_in.data(), g.dO.data(), g.dX.data(), g.dX.size());
  } else {
    accumulate(g.dO.data(), g.dX.data(), g.dX.size());
  }
}

}  // namespace

void residual_or_copy(float* out, const float* X, const float* O, size_t n, const Config& c) {
  if (c.residual) {
    residual_forward(out, X, O, n);
  } else {
    std::copy(O, O + n, out);
  }
}

void position_qk(float* Q, float* K, int ld, float* rstd, int T, int first, const Config& c) {
  if (c.positional == Positional::kRope) {
    rope_forward(Q, T, ld, c.n_heads, c.d_k, rotary(c), first);
    rope_forward(K, T, ld, c.kv_heads(), c.d_k, rotary(c), first);
  }
  if (c.qk_norm) {
    const int ld_rstd = c.n_heads + c.kv_heads();
    head_rmsnorm_forward(Q, rstd, T, ld, ld_rstd, c.n_heads, c.d_k, c.norm_eps);
    head_rmsnorm_forward(K, rstd == nullptr ? nullptr : rstd + c.n_heads, T, ld, ld_rstd,
                         c.kv_heads(), c.d_k, c.norm_eps);
  }
}

const float* norm_forward(float* U, const float* X, const float* weight, const float* bias,
                          const Config& c, int rows) {
  switch (c.norm) {
    case Norm::kNone: return X;
    case Norm::kLayerNorm:
      layernorm_forward(U, X, weight, bias, rows, c.d_model, c.norm_eps);
      break;
    case Norm::kRmsNorm: rmsnorm_forward(U, X, weight, rows, c.d_model, c.norm_eps); break;
  }
  return U;
}

void embed_forward(float* X, const Model& model, const int* ids, const Sequences& s) {
  const Config& c = model.config;
  const int d = c.d_model;
  model.weights.embedding_rows(ids, static_cast<size_t>(s.N()));
  embedding_forward(X, model.weights.embedding, ids, s.N(), d);
  for (int b = 0; b < s.B; ++b) {
    float* sequence = X + area(s.starts[static_cast<size_t>(b)], d);
    if (c.positional == Positional::kLearned)
      position_forward(sequence, model.weights.position, s.length(b), d);
    if (c.positional == Positional::kSinusoidal) sinusoid_forward(sequence, s.length(b), d);
  }
}

void embed_backward(const Gradients& G, const Model& model, const float* dX, const int* ids,
                    const Sequences& s) {
  const int d = model.config.d_model;
  if (model.config.positional == Positional::kLearned) {
    for (int b = 0; b < s.B; ++b) {
      position_backward(G.of(model.weights.position),
                        dX + area(s.starts[static_cast<size_t>(b)], d), s.length(b), d);
    }
  }
  embedding_backward(G.of(model.weights.embedding), dX, ids, s.N(), d);
}

void qkv_forward(float* QKV, const float* U, const Config& c, const LayerWeights& w, int N) {
  const int d = c.d_model, q = c.q_width(), k = c.k_width(), ld = c.qkv_width();
  if (N == 0) return;  // no rows: QKV may be an empty buffer's null, with no columns to offset
  if (w.w_qkv != nullptr) {
    matmul_forward(QKV, U, w.w_qkv, w.b_qkv, N, d, ld);
  } else {
    const MatmulPart parts[] = {{QKV, w.w_q, w.b_q, q, ld},
                                {QKV + q, w.w_k, w.b_k, k, ld},
                                {QKV + q + k, w.w_v, w.b_v, c.v_width(), ld}};
    matmuls_forward(parts, U, N, d);
  }
}

void attention_block_forward(const Config& c, const LayerWeights& w, int l, const Sequences& s,
                             LayerActivations& a, float* A, float* O, const Dropout& dropout) {
  const int N = s.N(), d = c.d_model, h = c.n_heads, q = c.q_width(), k = c.k_width();
  const int heads = c.heads_width();
  const bool drop = dropout.p > 0.0f;
  // [Q | K | V] = U [W_q | W_k | W_v] + b, U = norm1(X_in): one product with
  // the fused weights when they are there (Weights::fuse_qkv), else three
  // into the same columns.
  const float* U = norm_forward(a.U1.data(), a.X_in.data(), w.norm1_weight, w.norm1_bias, c, N);
  const int ld = c.qkv_width();
  float* Q = a.QKV.data();
  qkv_forward(Q, U, c, w, N);
  if (drop) dropout_mask(a.A_mask.data(), a.A_mask.size(), dropout.p, site_seed(dropout, l, 1));
  // heads = concat_i softmax(Q_i K_i^T * scale + M) V_i, per sequence; spread
  // over the threads when there is enough of it.
  const bool parallel =
      s.B > 1 && s.attention_size() / static_cast<size_t>(h) >= kParallelAttention;
#pragma omp parallel for schedule(static) if (parallel)
  for (int b = 0; b < s.B; ++b) {
    const auto row = static_cast<size_t>(s.starts[static_cast<size_t>(b)]);
    const size_t at = s.A_starts[static_cast<size_t>(b)];
    float* Q_b = Q + row * static_cast<size_t>(ld);
    position_qk(Q_b, Q_b + q, ld, qk_rstd_at(a, c, row), s.length(b), 0, c);
    attention_forward(a.heads.data() + row * heads, A + at, Q_b, Q_b + q, Q_b + q + k, s.length(b),
                      h, c.kv_heads(), c.d_k, c.d_v, c.attention_scale(), c.causal,
                      drop ? a.A_mask.data() + at : nullptr,
                      drop ? a.A_dropped.data() + at : nullptr, ld);
  }
  // O = drop(heads W_o + b_o); X_mid = X_in + O
  matmul_forward(O, a.heads.data(), w.w_o, w.b_o, N, heads, d);
  if (drop) {
    dropout_mask(a.O_mask.data(), area(N, d), dropout.p, site_seed(dropout, l, 2));
    dropout_forward(O, a.O_mask.data(), area(N, d));
  }
  residual_or_copy(a.X_mid.data(), a.X_in.data(), O, area(N, d), c);
}

void attention_block_backward(const Config& c, const LayerWeights& w, const Gradients& G,
                              const Sequences& s, const LayerActivations& a, const float* A,
                              float dropout, GradState& g) {
  const int B = s.B, T = s.T, N = s.N(), d = c.d_model, h = c.n_heads;
  const int q = c.q_width(), k = c.k_width(), v = c.v_width(), heads = c.heads_width();
  const bool drop = dropout > 0.0f;
  // X_mid = X_in + O, O = drop(heads W_o + b_o)
  residual_or_copy_backward(g, c);
  if (drop) dropout_backward(g.dO.data(), a.O_mask.data(), g.dO.size());
  zero(g.dheads, area(N, heads));
  matmul_backward(g.dheads.data(), G.of(w.w_o), G.of(w.b_o), g.dO.data(), a.heads.data(), w.w_o, N,
                  heads, d);
  // head_i = A_i V_i, A_i = softmax(Q_i K_i^T * scale), per window
  g.dQ.resize(area(N, q));
  g.dK.resize(area(N, k));
  g.dV.resize(area(N, v));
  g.dS.resize(static_cast<size_t>(B) * area(T, T));
  const size_t attention = static_cast<size_t>(h) * area(T, T);
  const auto ld = static_cast<size_t>(c.qkv_width());  // the rows of [Q | K | V]
#pragma omp parallel for schedule(static) if (B > 1 && area(N, T) >= kParallelAttention)
  for (int b = 0; b < B; ++b) {
    const size_t row = area(b * T, 1), at = static_cast<size_t>(b) * attention;
    const float* Q_b = a.QKV.data() + row * ld;
    attention_backward(g.dQ.data() + row * q, g.dK.data() + row * k, g.dV.data() + row * v,
                       g.dS.data() + static_cast<size_t>(b) * area(T, T),
                       g.dheads.data() + row * heads, A + at, drop ? a.A_mask.data() + at : nullptr,
                       drop ? a.A_dropped.data() + at : nullptr, Q_b, Q_b + q, Q_b + q + k, T, h,
                       c.kv_heads(), c.d_k, c.d_v, c.attention_scale(), static_cast<int>(ld));
    // d loss / d Q and K before QK-norm and the rotary positions
    position_qk_backward(g.dQ.data() + row * q, g.dK.data() + row * k, Q_b, static_cast<int>(ld),
                         qk_rstd_at(a, c, row), T, c);
  }
  // Q = U W_q + b_q, K = U W_k + b_k, V = U W_v + b_v, U = norm1(X_in)
  const float* U = c.norm != Norm::kNone ? a.U1.data() : a.X_in.data();
  zero(g.dU, area(N, d));
  matmul_backward(g.dU.data(), G.of(w.w_q), G.of(w.b_q), g.dQ.data(), U, w.w_q, N, d, q);
  matmul_backward(g.dU.data(), G.of(w.w_k), G.of(w.b_k), g.dK.data(), U, w.w_k, N, d, k);
  matmul_backward(g.dU.data(), G.of(w.w_v), G.of(w.b_v), g.dV.data(), U, w.w_v, N, d, v);
  norm_backward(g.dX_in.data(), G.of(w.norm1_weight), G.of(w.norm1_bias), g.dU.data(),
                a.X_in.data(), w.norm1_weight, c, N);
  std::swap(g.dX, g.dX_in);
}

void ffn_block_forward(const Config& c, const LayerWeights& w, int l, int N, LayerActivations& a,
                       float* F, float* X_out, const Dropout& dropout) {
  const int d = c.d_model;
  if (c.d_ff == 0) {
    std::copy(a.X_mid.begin(), a.X_mid.end(), X_out);
    return;
  }
  // H = act(norm2(X_mid) W_in + b_in), or silu(U W_gate + b_gate) * (U W_in + b_in)
  const float* U = norm_forward(a.U2.data(), a.X_mid.data(), w.norm2_weight, w.norm2_bias, c, N);
  if (c.activation == Activation::kSwiglu) {
    const MatmulPart parts[] = {{a.H_pre.data(), w.w_in, w.b_in, c.d_ff, c.d_ff},
                                {a.G_pre.data(), w.w_gate, w.b_gate, c.d_ff, c.d_ff}};
    matmuls_forward(parts, U, N, d);
  } else {
    matmul_forward(a.H_pre.data(), U, w.w_in, w.b_in, N, d, c.d_ff);
  }
  switch (c.activation) {
    case Activation::kSwiglu:
      swiglu_forward(a.H.data(), a.G_pre.data(), a.H_pre.data(), a.H.size());
      break;
    case Activation::kGelu:
      std::copy(a.H_pre.begin(), a.H_pre.end(), a.H.begin());
      gelu_forward(a.H.data(), a.H.size());
      break;
    case Activation::kRelu:
      std::copy(a.H_pre.begin(), a.H_pre.end(), a.H.begin());
      relu_forward(a.H.data(), a.H.size());
      break;
    case Activation::kRelu2:
      std::copy(a.H_pre.begin(), a.H_pre.end(), a.H.begin());
      relu2_forward(a.H.data(), a.H.size());
      break;
  }
  // F = drop(H W_out + b_out); X_out = X_mid + F
  matmul_forward(F, a.H.data(), w.w_out, w.b_out, N, c.d_ff, d);
  if (dropout.p > 0.0f) {
    dropout_mask(a.F_mask.data(), area(N, d), dropout.p, site_seed(dropout, l, 3));
    dropout_forward(F, a.F_mask.data(), area(N, d));
  }
  residual_or_copy(X_out, a.X_mid.data(), F, area(N, d), c);
}

void ffn_block_backward(const Config& c, const LayerWeights& w, const Gradients& G, int N,
                        const LayerActivations& a, float dropout, GradState& g) {
  if (c.d_ff == 0) return;  // X_out = X_mid
  const int d = c.d_model;
  // X_out = X_mid + F, F = drop(H W_out + b_out)
  residual_or_copy_backward(g, c);
  if (dropout > 0.0f) dropout_backward(g.dO.data(), a.F_mask.data(), g.dO.size());
  zero(g.dH, area(N, c.d_ff));
  matmul_backward(g.dH.data(), G.of(w.w_out), G.of(w.b_out), g.dO.data(), a.H.data(), w.w_out, N,
                  c.d_ff, d);
  // H = act(H_pre) or silu(G_pre) * H_pre; H_pre = U W_in + b_in, G_pre = U W_gate + b_gate,
  // U = norm2(X_mid). dH becomes d loss / d H_pre.
  const float* U = c.norm != Norm::kNone ? a.U2.data() : a.X_mid.data();
  zero(g.dU, area(N, d));
  switch (c.activation) {
    case Activation::kSwiglu:
      g.dG.resize(g.dH.size());
      swiglu_backward(g.dG.data(), g.dH.data(), g.dH.data(), a.G_pre.data(), a.H_pre.data(),
                      g.dH.size());
      matmul_backward(g.dU.data(), G.of(w.w_gate), G.of(w.b_gate), g.dG.data(), U, w.w_gate, N, d,
                      c.d_ff);
      break;
    case Activation::kGelu:
      gelu_backward(g.dH.data(), a.H_pre.data(), g.dH.data(), g.dH.size());
      break;
    case Activation::kRelu:
      relu_backward(g.dH.data(), a.H_pre.data(), g.dH.data(), g.dH.size());
      break;
    case Activation::kRelu2:
      relu2_backward(g.dH.data(), a.H_pre.data(), g.dH.data(), g.dH.size());
      break;
  }
  matmul_backward(g.dU.data(), G.of(w.w_in), G.of(w.b_in), g.dH.data(), U, w.w_in, N, d, c.d_ff);
  norm_backward(g.dX_in.data(), G.of(w.norm2_weight), G.of(w.norm2_bias), g.dU.data(),
                a.X_mid.data(), w.norm2_weight, c, N);
  std::swap(g.dX, g.dX_in);
}

void logits_forward(float* logits, float* Z, const Model& model, int R) {
  const Config& c = model.config;
  const Weights& w = model.weights;
  norm_forward(Z, Z, w.final_norm_weight, w.final_norm_bias, c, R);
  if (c.adaptive()) {
    adaptive_log_probs_forward(logits, Z, model, R);
  } else {
    classifier_forward(logits, Z, w.classifier, w.classifier_bias, R, c.d_model, c.vocab_size);
  }
}

void logits_backward(float* dX, float* dZ, const Gradients& G, const Model& model,
                     const Activations& a, GradState& g) {
  const Config& c = model.config;
  const Weights& w = model.weights;
  const int N = a.sequences.N();
  if (c.adaptive()) {
    adaptive_softmax_backward(dZ, G, model, a, g);
  } else {
    classifier_backward(dZ, G.of(w.classifier), G.of(w.classifier_bias), a.logits.data(),
                        a.Z.data(), w.classifier, N, c.d_model, c.vocab_size);
  }
  norm_backward(dX, G.of(w.final_norm_weight), G.of(w.final_norm_bias), dZ, a.X_out.data(),
                w.final_norm_weight, c, N);
}

}  // namespace nextword
