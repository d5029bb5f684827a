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

void KVBranches::start(const Config& c, std::span<const int> trunk) {
  constexpr size_t kLogitBytes = size_t{64} << 20;
  const size_t most = std::max<size_t>(
      128, kLogitBytes / (static_cast<size_t>(std::max(c.vocab_size, 1)) * sizeof(float)));
  if (nodes_.size() < most &&
      std::equal(trunk.begin(), trunk.end(), trunk_ids_.begin(), trunk_ids_.end())) {
    return;
  }
  // Forgotten, and its memory given back: a tree is kept for the searches
  // of one text, not for as long as the predictor lives.
  trunk_ids_.assign(trunk.begin(), trunk.end());
  nodes_.clear();
  of_.clear();
  std::vector<float>().swap(node_logits_);
  for (std::vector<float>& k : keys_) std::vector<float>().swap(k);
  for (std::vector<float>& v : values_) std::vector<float>().swap(v);
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
  if (depth_ == 0) start(c, trunk.ids());
  // Each branch's node: the tree's, or a new one (the same parent and token
  // twice in a step is one node).
  const size_t first = nodes_.size();
  path_.assign(current_.begin(), current_.end());  // the last step's nodes
  current_.resize(static_cast<size_t>(n));
  for (size_t b = 0; b < ids.size(); ++b) {
    const int parent = depth_ == 0 ? -1 : path_[static_cast<size_t>(parents[b])];
    const uint64_t key = (static_cast<uint64_t>(parent + 1) << 32) | static_cast<uint32_t>(ids[b]);
    const auto [it, fresh] = of_.try_emplace(key, static_cast<int>(nodes_.size()));
    if (fresh) nodes_.push_back({parent, ids[b]});
    current_[b] = it->second;
  }
  rows_run_ = static_cast<int>(nodes_.size() - first);
  if (rows_run_ > 0) {
    try {
      run(model, trunk, first);
    } catch (...) {
      // New nodes without their rows must not serve a later search (serve's
      // worker goes on after a call that throws): the tree is forgotten.
      nodes_.clear();
      of_.clear();
      clear();
      throw;
    }
  }
  // The branches' tokens (each node's path up to the trunk) and logits.
  const auto V = static_cast<size_t>(c.vocab_size);
  tokens_.resize(area(n, depth));
  logits_.resize(area(n, c.vocab_size));
  for (size_t b = 0; b < current_.size(); ++b) {
    int node = current_[b];
    std::copy_n(node_logits_.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(node) * V),
                V, logits_.begin() + static_cast<std::ptrdiff_t>(b * V));
    for (int j = depth - 1; j >= 0; --j, node = nodes_[static_cast<size_t>(node)].parent) {
      tokens_[area(static_cast<int>(b), depth) + static_cast<size_t>(j)] =
          nodes_[static_cast<size_t>(node)].id;
    }
  }
  depth_ = depth;
  count_ = n;
  return logits_;
}

void KVBranches::run(const Model& model, KVCache& trunk, size_t first) {
  const Config& c = model.config;
  const int L = c.n_layers, q = c.q_width(), k = c.k_width(), v = c.v_width();
  const int ld = c.qkv_width(), base = static_cast<int>(trunk.ids().size());
  const int at = base + depth_, m = static_cast<int>(nodes_.size() - first);
  trunk.reserve(c, at + 1);
  reserve_layer(scratch_, c, m, 0, false);
  branch_.resize(area(m, c.d_model));
  scores_.resize(static_cast<size_t>(at + 1));
  LayerActivations& a = scratch_;
  keys_.resize(static_cast<size_t>(L));
  values_.resize(static_cast<size_t>(L));
  for (int l = 0; l < L; ++l) {
    keys_[static_cast<size_t>(l)].resize(area(static_cast<int>(nodes_.size()), k));
    values_[static_cast<size_t>(l)].resize(area(static_cast<int>(nodes_.size()), v));
  }
  // The new rows' tokens and ancestors (the trunk's end first).
  run_ids_.resize(static_cast<size_t>(m));
  path_.resize(area(m, depth_));
  for (int r = 0; r < m; ++r) {
    const Node& node = nodes_[first + static_cast<size_t>(r)];
    run_ids_[static_cast<size_t>(r)] = node.id;
    int up = node.parent;
    for (int j = depth_ - 1; j >= 0; --j, up = nodes_[static_cast<size_t>(up)].parent) {
      path_[area(r, depth_) + static_cast<size_t>(j)] = up;
    }
  }

  embed_rows(a.X_in.data(), model, run_ids_.data(), m, at, 0);
  for (int l = 0; l < L; ++l) {
    const auto layer = static_cast<size_t>(l);
    float* K = trunk.K_[layer].data();
    float* V = trunk.V_[layer].data();
    const float* keys = keys_[layer].data();
    const float* values = values_[layer].data();
    layer_rows(c, model.weights.layers[layer], l, m, a, branch_.data(), [&](float* Q) {
      turn_rows(Q, c, m, at, 0);
      for (int r = 0; r < m; ++r) {
        const int node = static_cast<int>(first) + r;
        const float* row = Q + area(r, ld);
        std::copy_n(row + q, k, keys_[layer].data() + area(node, k));
        std::copy_n(row + q + k, v, values_[layer].data() + area(node, v));
        // Its row attends to the trunk's rows followed by its ancestors'
        // and its own, placed after the trunk's for the row's turn.
        for (int j = 0; j <= depth_; ++j) {
          const int from = j < depth_ ? path_[area(r, depth_) + static_cast<size_t>(j)] : node;
          std::copy_n(keys + area(from, k), k, K + area(base + j, k));
          std::copy_n(values + area(from, v), v, V + area(base + j, v));
        }
        attend_row(a.heads.data() + area(r, c.heads_width()), row, K, V, at + 1, c, scores_.data());
      }
    });
  }
  node_logits_.resize(area(static_cast<int>(nodes_.size()), c.vocab_size));
  logits_forward(node_logits_.data() + area(static_cast<int>(first), c.vocab_size), a.X_in.data(),
                 model, m);
}

}  // namespace nextword
