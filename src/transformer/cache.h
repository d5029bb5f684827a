// Incremental inference: the keys and values of a text's tokens kept from
// pass to pass, so that a text that grows by a word runs that word alone
// through the model (generate, type, complete), as llama2.c's run state does.
//
// A pass that extends the cache gives the same bits as a full pass over the
// whole text (transformer.h under Threading::kRows): every product, norm and
// softmax of a token's row depends on that row and the keys before it only
// (math/row_products.h). Only causal models can be extended: in a model
// whose words see later words, a new word changes every row before it.
#pragma once

#include <span>
#include <vector>

#include "model/model_file.h"
#include "transformer/state.h"

namespace nextword {

class KVCache {
 public:
  // The tokens whose keys and values are held, in order.
  std::span<const int> ids() const { return ids_; }
  // Runs ids[n] at positions ids().size() .. through the model, keeping
  // their keys and values; returns the next-word logits [V] of the last of
  // them (valid until the next call). The model must be causal, n >= 1 and
  // ids().size() + n <= max_len.
  // With `with_logits` false, the last row goes through the final norm
  // only (hidden()), for a caller that computes what it needs of the
  // classifier itself (predict/logit_row.h), and nothing is returned.
  std::span<const float> extend(const Model& model, std::span<const int> ids,
                                bool with_logits = true);
  // The logits extend() returned last.
  std::span<const float> logits() const { return logits_; }
  // The last new row after final_norm [d]: what the classifier read.
  std::span<const float> hidden() const { return Z_; }
  void clear() { ids_.clear(); }
  // Keeps the first n tokens (their keys and values stay as they were).
  void truncate(size_t n) {
    if (n < ids_.size()) ids_.resize(n);
  }

 private:
  std::vector<int> ids_;
  std::vector<std::vector<float>> K_,
      V_;                     // [L][rows, kv*d_k], [L][rows, kv*d_v], rows grown as needed
  LayerActivations scratch_;  // the new rows' buffers, layer after layer
  std::vector<float> branch_, Z_, logits_, scores_;
};

// Whether a model's passes can be extended (causal, with at least one layer
// or none at all).
bool extendable(const Model& model);

}  // namespace nextword
