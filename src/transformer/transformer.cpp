#include "transformer/transformer.h"

#include <algorithm>

#include "math/layers.h"
#include "transformer/adaptive_softmax.h"
#include "transformer/blocks.h"

namespace nextword {
namespace {

void fit(std::vector<float>& buffer, size_t n) { buffer.resize(n); }

void reserve_attention(std::vector<std::vector<float>>& A, const Config& c, size_t attention) {
  A.resize(static_cast<size_t>(c.n_layers));
  for (std::vector<float>& layer : A) fit(layer, attention);
}

std::span<const int> windows(int B, int T) {
  thread_local std::vector<int> lengths;
  lengths.assign(static_cast<size_t>(B), T);
  return lengths;
}

}  // namespace

// Sizes one layer's buffers for N tokens: with_masks for a training pass
// with dropout.
void reserve_layer(LayerActivations& a, const Config& c, int N, size_t attention, bool with_masks) {
  const int d = c.d_model;
  const bool norm = c.norm != Norm::kNone, ffn = c.d_ff > 0;
  fit(a.X_in, area(N, d));
  fit(a.U1, norm ? area(N, d) : 0);
  fit(a.QKV, area(N, c.qkv_width()));
  fit(a.qk_rstd, c.qk_norm ? area(N, c.n_heads + c.kv_heads()) : 0);
  fit(a.heads, area(N, c.heads_width()));
  fit(a.X_mid, area(N, d));
  fit(a.U2, norm && ffn ? area(N, d) : 0);
  fit(a.H_pre, area(N, c.d_ff));
  fit(a.G_pre, c.gated() ? area(N, c.d_ff) : 0);
  fit(a.H, area(N, c.d_ff));
  fit(a.A_mask, with_masks ? attention : 0);
  fit(a.A_dropped, with_masks ? attention : 0);
  fit(a.O_mask, with_masks ? area(N, d) : 0);
  fit(a.F_mask, with_masks && ffn ? area(N, d) : 0);
}

void Sequences::lay_out(std::span<const int> lengths, int n_heads) {
  B = static_cast<int>(lengths.size());
  T = lengths.empty() ? 0 : lengths[0];
  starts.resize(lengths.size() + 1);
  A_starts.resize(lengths.size() + 1);
  starts[0] = 0;
  A_starts[0] = 0;
  for (size_t b = 0; b < lengths.size(); ++b) {
    if (lengths[b] != T) T = 0;
    starts[b + 1] = starts[b] + lengths[b];
    A_starts[b + 1] = A_starts[b] + static_cast<size_t>(n_heads) * area(lengths[b], lengths[b]);
  }
}

namespace {
// One context vector through the classifier: with an adaptive softmax, the
// head and every cluster (prediction scores every word).
double classifier_flops(const Config& c) {
  double flops = 2.0 * c.d_model * c.head_size();
  for (int i = 0; i < c.clusters(); ++i) {
    flops += 2.0 * c.cluster_width(i) * (c.d_model + c.cluster_words(i));
  }
  return flops;
}
}  // namespace

double forward_flops(const Config& c, std::span<const int> lengths) {
  const double d = c.d_model, qk = c.q_width(), v = c.heads_width();
  const double per_token = 2 * d * c.qkv_width() + 2 * v * d + (c.gated() ? 6 : 4) * d * c.d_ff;
  double flops = 0;
  for (int T : lengths) {
    const double squared = double{1} * T * T;
    flops += c.n_layers * (T * per_token + 2 * squared * (qk + v)) + classifier_flops(c);
  }
  return flops;
}

void forward(const Model& model, RunState& s, const int* ids, int B, int T,
             const ForwardOptions& o) {
  forward(model, s, ids, windows(B, T), o);
}

void forward(const Model& model, RunState& s, const int* ids, std::span<const int> lengths,
             const ForwardOptions& o) {
  const Config& c = model.config;
  const int d = c.d_model, L = c.n_layers;
  s.sequences.lay_out(lengths, c.n_heads);
  const Sequences& seq = s.sequences;
  const bool some_rows = o.all_positions && !o.rows.empty();
  const int N = seq.N();
  const int R = some_rows ? static_cast<int>(o.rows.size()) : o.all_positions ? N : seq.B;
  s.all_positions = o.all_positions;
  reserve_layer(s.scratch, c, N, seq.attention_size(), false);
  reserve_attention(s.A, c, seq.attention_size());
  fit(s.X_out, area(N, d));
  fit(s.Z, area(R, d));
  fit(s.logits, area(R, c.vocab_size));
  fit(s.branch, area(N, d));

  // Every layer works in the one scratch layer; its output goes back into
  // X_in, which is free once X_mid is computed.
  embed_forward(L > 0 ? s.scratch.X_in.data() : s.X_out.data(), model, ids, seq);
  for (int l = 0; l < L; ++l) {
    const LayerWeights& w = model.weights.layers[static_cast<size_t>(l)];
    float* out = l + 1 == L ? s.X_out.data() : s.scratch.X_in.data();
    attention_block_forward(c, w, l, seq, s.scratch, s.A[static_cast<size_t>(l)].data(),
                            s.branch.data(), Dropout{});
    ffn_block_forward(c, w, l, N, s.scratch, s.branch.data(), out, Dropout{});
  }
  if (some_rows) {
    for (int r = 0; r < R; ++r) {
      const int at = o.rows[static_cast<size_t>(r)];
      const float* x = s.X_out.data() + area(at, d);
      std::copy(x, x + d, s.Z.data() + area(r, d));
    }
  } else if (o.all_positions) {
    std::copy(s.X_out.begin(), s.X_out.end(), s.Z.begin());
  } else {
    for (int b = 0; b < seq.B; ++b) {
      const float* last = s.X_out.data() + area(seq.starts[static_cast<size_t>(b) + 1] - 1, d);
      std::copy(last, last + d, s.Z.data() + area(b, d));
    }
  }
  logits_forward(s.logits.data(), s.Z.data(), model, R);
}

void forward(const Model& model, Activations& a, const int* ids, int B, int T,
             const Dropout& dropout) {
  const Config& c = model.config;
  const int d = c.d_model, L = c.n_layers;
  a.sequences.lay_out(windows(B, T), c.n_heads);
  const Sequences& seq = a.sequences;
  const int N = seq.N();
  a.dropout = dropout.p;
  a.logits_are_gradients = false;
  a.ids.assign(ids, ids + N);
  a.layers.resize(static_cast<size_t>(L));
  for (LayerActivations& layer : a.layers)
    reserve_layer(layer, c, N, seq.attention_size(), dropout.p > 0.0f);
  reserve_attention(a.A, c, seq.attention_size());
  fit(a.X_out, area(N, d));
  fit(a.Z, area(N, d));
  fit(a.logits, area(N, c.head_size()));
  fit(a.branch, area(N, d));

  embed_forward(L > 0 ? a.layers[0].X_in.data() : a.X_out.data(), model, ids, seq);
  for (int l = 0; l < L; ++l) {
    const LayerWeights& w = model.weights.layers[static_cast<size_t>(l)];
    LayerActivations& layer = a.layers[static_cast<size_t>(l)];
    float* out = l + 1 == L ? a.X_out.data() : a.layers[static_cast<size_t>(l) + 1].X_in.data();
    attention_block_forward(c, w, l, seq, layer, a.A[static_cast<size_t>(l)].data(),
                            a.branch.data(), dropout);
    ffn_block_forward(c, w, l, N, layer, a.branch.data(), out, dropout);
  }
  std::copy(a.X_out.begin(), a.X_out.end(), a.Z.begin());
  if (c.adaptive()) {
    // Only the head: each cluster runs for the positions whose target is in
    // it (adaptive_loss_forward_backward).
    norm_forward(a.Z.data(), a.Z.data(), model.weights.final_norm_weight,
                 model.weights.final_norm_bias, c, N);
    adaptive_head_forward(a.logits.data(), a.Z.data(), model, N);
  } else {
    logits_forward(a.logits.data(), a.Z.data(), model, N);
  }
}

}  // namespace nextword
