#include "transformer/transformer.h"

#include <algorithm>

#include "math/layers.h"

namespace nextword {
namespace {

// Lays out the sequences and grows the buffers to fit them; capacity is kept
// between calls, so a pass of no more tokens than before allocates nothing.
void reserve(RunState& s, const Config& c, std::span<const int> lengths, bool all_positions,
             bool dropout, bool keep) {
  const int B = static_cast<int>(lengths.size()), d = c.d_model;
  const int qk = c.n_heads * c.d_k, v = c.n_heads * c.d_v;
  const bool layernorm = c.norm == Norm::kLayerNorm;
  s.B = B;
  s.T = lengths.empty() ? 0 : lengths[0];
  s.starts.resize(lengths.size() + 1);
  s.A_starts.resize(lengths.size() + 1);
  s.starts[0] = 0;
  s.A_starts[0] = 0;
  for (size_t b = 0; b < lengths.size(); ++b) {
    if (lengths[b] != s.T) s.T = 0;
    s.starts[b + 1] = s.starts[b] + lengths[b];
    s.A_starts[b + 1] =
        s.A_starts[b] + static_cast<size_t>(c.n_heads) * area(lengths[b], lengths[b]);
  }
  const int N = s.starts[lengths.size()];
  const size_t attention = s.A_starts[lengths.size()];
  auto fit = [](std::vector<float>& buffer, size_t n) { buffer.resize(n); };
  s.all_positions = all_positions;
  s.layers.resize(static_cast<size_t>(c.n_layers));
  bool first = true;
  for (LayerState& l : s.layers) {
    fit(l.A, attention);
    if (!keep && !first) {  // layer 0's buffers serve every layer
      for (std::vector<float>* unused : {&l.X_in, &l.U1, &l.QKV, &l.A_mask, &l.A_dropped, &l.heads,
                                         &l.O_mask, &l.X_mid, &l.U2, &l.H_pre, &l.H, &l.F_mask}) {
        unused->clear();
        unused->shrink_to_fit();
      }
      continue;
    }
    first = false;
    fit(l.X_in, area(N, d));
    fit(l.U1, layernorm ? area(N, d) : 0);
    fit(l.QKV, area(N, 2 * qk + v));
    fit(l.A_mask, dropout ? attention : 0);
    fit(l.A_dropped, dropout ? attention : 0);
    fit(l.heads, area(N, v));
    fit(l.O_mask, dropout ? area(N, d) : 0);
    fit(l.X_mid, area(N, d));
    fit(l.U2, layernorm && c.d_ff > 0 ? area(N, d) : 0);
    fit(l.H_pre, area(N, c.d_ff));
    fit(l.H, area(N, c.d_ff));
    fit(l.F_mask, dropout && c.d_ff > 0 ? area(N, d) : 0);
  }
  const int R = all_positions ? N : B;
  fit(s.X_out, area(N, d));
  fit(s.Z, area(R, d));
  fit(s.logits, area(R, c.vocab_size));
  fit(s.branch, area(N, d));
}

// U = norm(X), or X itself when the model has no norm.
const float* norm_forward(float* U, const float* X, const float* weight, const float* bias,
                          const Config& c, int rows) {
  if (c.norm == Norm::kNone) return X;
  layernorm_forward(U, X, weight, bias, rows, c.d_model, c.norm_eps);
  return U;
}

// Every place that drops out gets its own masks: site 4l+1 is layer l's
// attention weights, 4l+2 its attention branch, 4l+3 its feedforward branch.
uint64_t site_seed(const ForwardOptions& o, uint64_t site) { return o.seed + site; }

// out = X + drop(branch) with a residual connection, else out = drop(branch).
void merge_branch(float* out, const float* X, float* branch, float* mask, size_t n, const Config& c,
                  const ForwardOptions& o, uint64_t site) {
  if (o.dropout > 0.0f) {
    dropout_mask(mask, n, o.dropout, site_seed(o, site));
    dropout_forward(branch, mask, n);
  }
  if (c.residual) {
    for (size_t i = 0; i < n; ++i) out[i] = X[i] + branch[i];
  } else {
    std::copy(branch, branch + n, out);
  }
}

}  // namespace

double forward_flops(const Config& c, std::span<const int> lengths) {
  const double d = c.d_model, qk = double{1} * c.n_heads * c.d_k, v = double{1} * c.n_heads * c.d_v;
  const double per_token = 2 * d * (2 * qk + v) + 2 * v * d + 4 * d * c.d_ff;
  double flops = 0;
  for (int T : lengths) {
    const double squared = double{1} * T * T;
    flops += c.n_layers * (T * per_token + 2 * squared * (qk + v)) + 2 * d * c.vocab_size;
  }
  return flops;
}

void forward(const Model& model, RunState& s, const int* ids, int B, int T,
             const ForwardOptions& o) {
  thread_local std::vector<int> lengths;
  lengths.assign(static_cast<size_t>(B), T);
  forward(model, s, ids, lengths, o);
}

void forward(const Model& model, RunState& s, const int* ids, std::span<const int> lengths,
             const ForwardOptions& o) {
  const Config& c = model.config;
  const Weights& w = model.weights;
  const int d = c.d_model, h = c.n_heads, B = static_cast<int>(lengths.size());
  const int qk = h * c.d_k, v = h * c.d_v;
  const bool dropout = o.dropout > 0.0f;
  reserve(s, c, lengths, o.all_positions, dropout, o.keep_activations);
  const int N = s.starts.back();
  s.ids.assign(ids, ids + N);

  // X = E[ids] (+ positions, counted from 0 in every sequence)
  float* X = c.n_layers > 0 ? s.layers[0].X_in.data() : s.X_out.data();
  embedding_forward(X, w.embedding, ids, N, d);
  for (int b = 0; b < B; ++b) {
    float* sequence = X + area(s.starts[static_cast<size_t>(b)], d);
    if (c.positional == Positional::kLearned)
      position_forward(sequence, w.position, s.length(b), d);
    if (c.positional == Positional::kSinusoidal) sinusoid_forward(sequence, s.length(b), d);
  }

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[static_cast<size_t>(l)];
    // This layer's activations, or the scratch all layers share; its output
    // then goes back into X_in, which is free once X_mid is computed.
    LayerState& ls = s.layers[o.keep_activations ? static_cast<size_t>(l) : 0];
    float* A = s.layers[static_cast<size_t>(l)].A.data();
    float* next = l + 1 == c.n_layers  ? s.X_out.data()
                  : o.keep_activations ? s.layers[static_cast<size_t>(l) + 1].X_in.data()
                                       : ls.X_in.data();
    const auto site = static_cast<uint64_t>(l) * 4;

    // Attention block: Q = U W_q + b_q, K = U W_k + b_k, V = U W_v + b_v
    const float* U =
        norm_forward(ls.U1.data(), ls.X_in.data(), lw.norm1_weight, lw.norm1_bias, c, N);
    // One product with the fused [W_q | W_k | W_v] when the weights have it
    // (Weights::fuse_qkv), else three into the same columns.
    const int ld = 2 * qk + v;
    float* Q = ls.QKV.data();
    if (lw.w_qkv != nullptr) {
      matmul_forward(Q, U, lw.w_qkv, lw.b_qkv, N, d, ld);
    } else {
      matmul_forward(Q, U, lw.w_q, lw.b_q, N, d, qk, ld);
      matmul_forward(Q + qk, U, lw.w_k, lw.b_k, N, d, qk, ld);
      matmul_forward(Q + 2 * qk, U, lw.w_v, lw.b_v, N, d, v, ld);
    }
    if (dropout)
      dropout_mask(ls.A_mask.data(), ls.A_mask.size(), o.dropout, site_seed(o, site + 1));
    // Attention is per sequence; spread over the threads when there is enough of it.
    const bool parallel = B > 1 && s.A_starts.back() / static_cast<size_t>(h) >= kParallelAttention;
#pragma omp parallel for schedule(static) if (parallel)
    for (int b = 0; b < B; ++b) {
      const auto row = static_cast<size_t>(s.starts[static_cast<size_t>(b)]);
      const size_t a = s.A_starts[static_cast<size_t>(b)];
      const float* Q_b = Q + row * static_cast<size_t>(ld);
      attention_forward(ls.heads.data() + row * v, A + a, Q_b, Q_b + qk, Q_b + 2 * qk, s.length(b),
                        h, c.d_k, c.d_v, c.attention_scale(), c.causal,
                        dropout ? ls.A_mask.data() + a : nullptr,
                        dropout ? ls.A_dropped.data() + a : nullptr, ld);
    }
    // X_mid = X_in + drop(concat(heads) W_o + b_o)
    matmul_forward(s.branch.data(), ls.heads.data(), lw.w_o, lw.b_o, N, v, d);
    merge_branch(ls.X_mid.data(), ls.X_in.data(), s.branch.data(), ls.O_mask.data(), area(N, d), c,
                 o, site + 2);

    if (c.d_ff == 0) {
      std::copy(ls.X_mid.begin(), ls.X_mid.end(), next);
      continue;
    }
    // X_next = X_mid + drop(act(norm2(X_mid) W_in + b_in) W_out + b_out)
    const float* U2 =
        norm_forward(ls.U2.data(), ls.X_mid.data(), lw.norm2_weight, lw.norm2_bias, c, N);
    matmul_forward(ls.H_pre.data(), U2, lw.w_in, lw.b_in, N, d, c.d_ff);
    std::copy(ls.H_pre.begin(), ls.H_pre.end(), ls.H.begin());
    if (c.activation == Activation::kGelu) {
      gelu_forward(ls.H.data(), ls.H.size());
    } else {
      relu_forward(ls.H.data(), ls.H.size());
    }
    matmul_forward(s.branch.data(), ls.H.data(), lw.w_out, lw.b_out, N, c.d_ff, d);
    merge_branch(next, ls.X_mid.data(), s.branch.data(), ls.F_mask.data(), area(N, d), c, o,
                 site + 3);
  }

  // Z = final_norm(rows that get logits); logits = Z C^T + c
  const int R = o.all_positions ? N : B;
  if (o.all_positions) {
    std::copy(s.X_out.begin(), s.X_out.end(), s.Z.begin());
  } else {
    for (int b = 0; b < B; ++b) {
      const float* last = s.X_out.data() + area(s.starts[static_cast<size_t>(b) + 1] - 1, d);
      std::copy(last, last + d, s.Z.data() + area(b, d));
    }
  }
  norm_forward(s.Z.data(), s.Z.data(), w.final_norm_weight, w.final_norm_bias, c, R);
  classifier_forward(s.logits.data(), s.Z.data(), w.classifier, w.classifier_bias, R, d,
                     c.vocab_size);
}

}  // namespace nextword
