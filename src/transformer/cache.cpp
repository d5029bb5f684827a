#include "transformer/cache.h"

#include <algorithm>
#include <stdexcept>

#include "math/layers.h"
#include "transformer/blocks.h"
#include "transformer/transformer.h"

namespace nextword {

bool extendable(const Model& model) { return model.config.causal; }

std::span<const float> KVCache::extend(const Model& model, std::span<const int> ids,
                                       bool with_logits) {
  const Config& c = model.config;
  const Weights& W = model.weights;
  const int n = static_cast<int>(ids.size()), first = static_cast<int>(ids_.size());
  if (!extendable(model) || n < 1 || first + n > c.max_len) {
    throw std::logic_error("KVCache::extend: not a causal model, or past max_len");
  }
  const int d = c.d_model, L = c.n_layers, q = c.q_width(), k = c.k_width(), v = c.v_width();
  const int ld = c.qkv_width();
  // Room for the positions the text has reached, doubled as it grows: a
  // context of thousands of positions would otherwise take its whole cache
  // (hundreds of MB for a real model) at the first word.
  K_.resize(static_cast<size_t>(L));
  V_.resize(static_cast<size_t>(L));
  const size_t held = L > 0 && k > 0 ? K_[0].size() / static_cast<size_t>(k) : 0;
  if (held < static_cast<size_t>(first + n)) {
    const int rows = std::min(c.max_len, std::max({first + n, 2 * static_cast<int>(held), 64}));
    for (int l = 0; l < L; ++l) {
      K_[static_cast<size_t>(l)].resize(area(rows, k));
      V_[static_cast<size_t>(l)].resize(area(rows, v));
    }
  }
  reserve_layer(scratch_, c, n, 0, false);
  branch_.resize(area(n, d));
  scores_.resize(static_cast<size_t>(first + n));
  LayerActivations& a = scratch_;

  // X = E[ids] + the positions first .. first+n-1
  W.embedding_rows(ids.data(), static_cast<size_t>(n));
  embedding_forward(a.X_in.data(), W.embedding, ids.data(), n, d);
  if (c.positional == Positional::kLearned) {
    position_forward(a.X_in.data(), W.position + area(first, d), n, d);
  }
  if (c.positional == Positional::kSinusoidal) sinusoid_forward(a.X_in.data(), n, d, first);
  for (int l = 0; l < L; ++l) {
    const LayerWeights& w = W.layers[static_cast<size_t>(l)];
    float* K = K_[static_cast<size_t>(l)].data();
    float* V = V_[static_cast<size_t>(l)].data();
    // [Q | K | V] of the new rows; K and V join the cache.
    const float* U = norm_forward(a.U1.data(), a.X_in.data(), w.norm1_weight, w.norm1_bias, c, n);
    float* Q = a.QKV.data();
    qkv_forward(Q, U, c, w, n);
    position_qk(Q, Q + q, ld, nullptr, n, first, c);
    for (int r = 0; r < n; ++r) {
      const float* row = Q + area(r, ld);
      std::copy_n(row + q, k, K + area(first + r, k));
      std::copy_n(row + q + k, v, V + area(first + r, v));
    }
    attention_extend(a.heads.data(), Q, ld, K, k, V, v, first, n, c.n_heads, c.kv_heads(), c.d_k,
                     c.d_v, c.attention_scale(), scores_.data());
    // X_mid = X_in + heads W_o + b_o, then the feed-forward block back into X_in.
    matmul_forward(branch_.data(), a.heads.data(), w.w_o, w.b_o, n, c.heads_width(), d);
    residual_or_copy(a.X_mid.data(), a.X_in.data(), branch_.data(), area(n, d), c);
    ffn_block_forward(c, w, l, n, a, branch_.data(), a.X_in.data(), Dropout{});
  }
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  // The last new row through final_norm and the classifier.
  Z_.assign(a.X_in.begin() + static_cast<std::ptrdiff_t>(area(n - 1, d)),
            a.X_in.begin() + static_cast<std::ptrdiff_t>(area(n, d)));
  if (!with_logits) {
    logits_.clear();
    norm_forward(Z_.data(), Z_.data(), W.final_norm_weight, W.final_norm_bias, c, 1);
    return {};
  }
  logits_.resize(static_cast<size_t>(c.vocab_size));
  logits_forward(logits_.data(), Z_.data(), model, 1);
  return logits_;
}

}  // namespace nextword
