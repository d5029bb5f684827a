#include "transformer/cache.h"

#include <algorithm>
#include <stdexcept>

#include "math/layers.h"
#include "transformer/blocks.h"
#include "transformer/transformer.h"

namespace nextword {

bool extendable(const Model& model) { return model.config.causal; }

namespace {

// X[n, d] = E[ids] + the positions: row r at position first + r * step (step
// 1 for a text's next tokens, 0 for branches side by side at one depth).
void embed_rows(float* X, const Model& model, const int* ids, int n, int first, int step) {
  const Config& c = model.config;
  const Weights& W = model.weights;
  const int d = c.d_model;
  W.embedding_rows(ids, static_cast<size_t>(n));
  embedding_forward(X, W.embedding, ids, n, d);
  const int runs = step == 0 ? n : 1, rows = step == 0 ? 1 : n;
  for (int r = 0; r < runs; ++r) {
    float* x = X + area(r, d);
    if (c.positional == Positional::kLearned) {
      position_forward(x, W.position + area(first, d), rows, d);
    }
    if (c.positional == Positional::kSinusoidal) sinusoid_forward(x, rows, d, first);
  }
}

// Rotary positions and QK-norm on n rows of [Q | K | V], at positions as
// embed_rows' `first` and `step` place them.
void turn_rows(float* QKV, const Config& c, int n, int first, int step) {
  const int ld = c.qkv_width(), runs = step == 0 ? n : 1, rows = step == 0 ? 1 : n;
  for (int r = 0; r < runs; ++r) {
    float* Q = QKV + area(r, ld);
    position_qk(Q, Q + c.q_width(), ld, nullptr, rows, first, c);
  }
}

// Layer l on the n rows of a.X_in, back into a.X_in: `attend(Q)` turns the
// rows' [Q | K | V] (a.QKV, as the projections made them) into a.heads; the
// rest is every pass's. `branch` is scratch [n, d].
template <class Attend>
void layer_rows(const Config& c, const LayerWeights& w, int l, int n, LayerActivations& a,
                float* branch, const Attend& attend) {
  const float* U = norm_forward(a.U1.data(), a.X_in.data(), w.norm1_weight, w.norm1_bias, c, n);
  qkv_forward(a.QKV.data(), U, c, w, n);
  attend(a.QKV.data());
  // X_mid = X_in + heads W_o + b_o, then the feed-forward block back into X_in.
  matmul_forward(branch, a.heads.data(), w.w_o, w.b_o, n, c.heads_width(), c.d_model);
  residual_or_copy(a.X_mid.data(), a.X_in.data(), branch, area(n, c.d_model), c);
  ffn_block_forward(c, w, l, n, a, branch, a.X_in.data(), Dropout{});
}

// One query row's attention over the first `keys` rows of K and V.
void attend_row(float* heads, const float* Q, const float* K, const float* V, int keys,
                const Config& c, float* scores) {
  attention_extend(heads, Q, c.qkv_width(), K, c.k_width(), V, c.v_width(), keys - 1, 1, c.n_heads,
                   c.kv_heads(), c.d_k, c.d_v, c.attention_scale(), scores);
}

}  // namespace

// Room for the positions the text has reached, doubled as it grows: a
// context of thousands of positions would otherwise take its whole cache
// (hundreds of MB for a real model) at the first word.
void KVCache::reserve(const Config& c, int positions) {
  const int L = c.n_layers, k = c.k_width(), v = c.v_width();
  K_.resize(static_cast<size_t>(L));
  V_.resize(static_cast<size_t>(L));
  const size_t held = L > 0 && k > 0 ? K_[0].size() / static_cast<size_t>(k) : 0;
  if (held >= static_cast<size_t>(positions)) return;
  const int rows = std::min(c.max_len, std::max({positions, 2 * static_cast<int>(held), 64}));
  for (int l = 0; l < L; ++l) {
    K_[static_cast<size_t>(l)].resize(area(rows, k));
    V_[static_cast<size_t>(l)].resize(area(rows, v));
  }
}

std::span<const float> KVCache::extend(const Model& model, std::span<const int> ids,
                                       bool with_logits) {
  const Config& c = model.config;
  const Weights& W = model.weights;
  const int n = static_cast<int>(ids.size()), first = static_cast<int>(ids_.size());
  if (!extendable(model) || n < 1 || first + n > c.max_len) {
    throw std::logic_error("KVCache::extend: not a causal model, or past max_len");
  }
  const int d = c.d_model, q = c.q_width(), k = c.k_width(), v = c.v_width();
  const int ld = c.qkv_width();
  reserve(c, first + n);
  reserve_layer(scratch_, c, n, 0, false);
  branch_.resize(area(n, d));
  scores_.resize(static_cast<size_t>(first + n));
  LayerActivations& a = scratch_;

  embed_rows(a.X_in.data(), model, ids.data(), n, first, 1);
  for (int l = 0; l < c.n_layers; ++l) {
    float* K = K_[static_cast<size_t>(l)].data();
    float* V = V_[static_cast<size_t>(l)].data();
    // [Q | K | V] of the new rows; K and V join the cache.
    layer_rows(c, W.layers[static_cast<size_t>(l)], l, n, a, branch_.data(), [&](float* Q) {
      turn_rows(Q, c, n, first, 1);
      for (int r = 0; r < n; ++r) {
        const float* row = Q + area(r, ld);
        std::copy_n(row + q, k, K + area(first + r, k));
        std::copy_n(row + q + k, v, V + area(first + r, v));
      }
      attention_extend(a.heads.data(), Q, ld, K, k, V, v, first, n, c.n_heads, c.kv_heads(), c.d_k,
                       c.d_v, c.attention_scale(), scores_.data());
    });
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

std::span<const int> KVBranches::tokens(int b) const {
  return std::span<const int>(tokens_).subspan(area(b, depth_), static_cast<size_t>(depth_));
}

std::span<const float> KVBranches::grow(const Model& model, KVCache& trunk,
                                        std::span<const int> parents, std::span<const int> ids) {
  const Config& c = model.config;
  const int n = static_cast<int>(ids.size()), base = static_cast<int>(trunk.ids().size());
  const int depth = depth_ + 1, at = base + depth_;  // the new rows' position
  if (!extendable(model) || n < 1 || at >= c.max_len ||
      (depth_ == 0 ? !parents.empty() : parents.size() != ids.size())) {
    throw std::logic_error("KVBranches::grow: not a causal model, past max_len, or no parents");
  }
  for (const int p : parents) {
    if (p < 0 || p >= count_) throw std::logic_error("KVBranches::grow: no such parent");
  }
  const int L = c.n_layers, q = c.q_width(), k = c.k_width(), v = c.v_width();
  const int ld = c.qkv_width();
  trunk.reserve(c, at + 1);
  reserve_layer(scratch_, c, n, 0, false);
  branch_.resize(area(n, c.d_model));
  scores_.resize(static_cast<size_t>(at + 1));
  LayerActivations& a = scratch_;
  // Branch b's tokens so far: its parent's, then its new one.
  old_tokens_.swap(tokens_);
  tokens_.resize(area(n, depth));
  for (int b = 0; b < n; ++b) {
    const size_t parent =
        parents.empty() ? 0 : static_cast<size_t>(parents[static_cast<size_t>(b)]);
    std::copy_n(old_tokens_.begin() + static_cast<std::ptrdiff_t>(parent * depth_), depth_,
                tokens_.begin() + static_cast<std::ptrdiff_t>(area(b, depth)));
    tokens_[area(b, depth) + static_cast<size_t>(depth_)] = ids[static_cast<size_t>(b)];
  }
  old_keys_.swap(keys_);
  old_values_.swap(values_);
  keys_.resize(static_cast<size_t>(L));
  values_.resize(static_cast<size_t>(L));

  embed_rows(a.X_in.data(), model, ids.data(), n, at, 0);
  for (int l = 0; l < L; ++l) {
    const auto layer = static_cast<size_t>(l);
    std::vector<float>& keys = keys_[layer];
    std::vector<float>& values = values_[layer];
    keys.resize(area(n, depth * k));
    values.resize(area(n, depth * v));
    float* K = trunk.K_[layer].data();
    float* V = trunk.V_[layer].data();
    layer_rows(c, model.weights.layers[layer], l, n, a, branch_.data(), [&](float* Q) {
      turn_rows(Q, c, n, at, 0);
      for (int b = 0; b < n; ++b) {
        // The branch's keys and values: its parent's, then its new row's.
        float* key = keys.data() + area(b, depth * k);
        float* value = values.data() + area(b, depth * v);
        if (depth_ > 0) {
          const auto parent = static_cast<size_t>(parents[static_cast<size_t>(b)]);
          std::copy_n(old_keys_[layer].data() + parent * area(depth_, k), area(depth_, k), key);
          std::copy_n(old_values_[layer].data() + parent * area(depth_, v), area(depth_, v), value);
        }
        const float* row = Q + area(b, ld);
        std::copy_n(row + q, k, key + area(depth_, k));
        std::copy_n(row + q + k, v, value + area(depth_, v));
        // Its row attends to the trunk's rows followed by the branch's,
        // placed after the trunk's for the row's turn.
        std::copy_n(key, area(depth, k), K + area(base, k));
        std::copy_n(value, area(depth, v), V + area(base, v));
        attend_row(a.heads.data() + area(b, c.heads_width()), row, K, V, at + 1, c, scores_.data());
      }
    });
  }
  depth_ = depth;
  count_ = n;
  logits_.resize(area(n, c.vocab_size));
  logits_forward(logits_.data(), a.X_in.data(), model, n);
  return logits_;
}

}  // namespace nextword
