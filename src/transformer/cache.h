// Incremental inference: the keys and values of a text's tokens kept from
// pass to pass, so that a text that grows by a word runs that word alone
// through the model (generate, type, complete), as llama2.c's run state does;
// and branches, several continuations of that text run side by side (the
// word search's partial words, predict/word_search.h).
//
// A pass that extends the cache gives the same bits as a full pass over the
// whole text (transformer.h under Threading::kRows): every product, norm and
// softmax of a token's row depends on that row and the keys before it only
// (math/row_products.h). Only causal models can be extended: in a model
// whose words see later words, a new word changes every row before it.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
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
  friend class KVBranches;
  // Sizes the keys and values for at least `positions` positions (grown by doubling).
  void reserve(const Config& c, int positions);

  std::vector<int> ids_;
  // [L][rows, kv*d_k] and [L][rows, kv*d_v], rows grown as needed (reserve).
  std::vector<std::vector<float>> K_, V_;
  LayerActivations scratch_;  // the new rows' buffers, layer after layer
  std::vector<float> branch_, Z_, logits_, scores_;
};

// Continuations of a KVCache's text (its trunk), each a token longer at
// every step: a step runs the new token of every branch as one batch of
// rows, so each projection and the classifier read the weights once for all
// of them instead of once a branch. Each row attends to the trunk's keys
// and values and to its own branch's tokens, never to another branch's, and
// is the same bits as KVCache::extend of the trunk's text followed by its
// branch's tokens, alone (math/row_products.h: no row depends on the rows
// beside it).
//
// Every continuation run is kept, as a tree of tokens over the trunk with
// each node's keys, values and logits, for as long as the trunk stays the
// same: a later search on it (the next keystroke of a word, whose prefix
// is one letter longer) runs only the continuations no search ran before,
// and a step whose continuations all ran runs nothing. The rows read back
// are the bits they were run with, which are those of running them again.
class KVBranches {
 public:
  // Drops every branch: the next grow() starts new ones at the trunk's end
  // (the tree stays, for the same trunk).
  void clear() {
    depth_ = 0;
    count_ = 0;
    current_.clear();
  }
  // The new branches: branch b is branch parents[b] of the last step
  // followed by ids[b] (at the first step after clear(), `parents` is empty
  // and branch b is the trunk followed by ids[b]). Runs the new tokens of
  // those the tree lacks and returns their next-token logits [B, V] (row b
  // branch b's; valid until the next call). The trunk must be the one of
  // the last step, unchanged, and its tokens with a branch's at most
  // max_len; its keys and values past its tokens are overwritten.
  std::span<const float> grow(const Model& model, KVCache& trunk, std::span<const int> parents,
                              std::span<const int> ids);
  // Tokens of each branch after the trunk's.
  int depth() const { return depth_; }
  int count() const { return count_; }
  // Branch b's tokens after the trunk's.
  std::span<const int> tokens(int b) const;
  // Rows the last grow() ran through the model (the rest were in the tree).
  int rows_run() const { return rows_run_; }

 private:
  struct Node {
    int parent;  // -1: the trunk
    int id;
  };
  // At a first step, forgets the tree unless it grew from `trunk` and holds
  // less than about 64 MiB of logits (so a tree holds that and one search).
  void start(const Config& c, std::span<const int> trunk);
  // Runs the nodes from `first` on (new, of one depth) through the model.
  void run(const Model& model, KVCache& trunk, size_t first);

  int depth_ = 0, count_ = 0, rows_run_ = 0;
  std::vector<int> trunk_ids_;              // the trunk the tree grew from
  std::vector<Node> nodes_;                 // the tree, each node after its parent
  std::unordered_map<uint64_t, int> of_;    // (parent + 1, token) -> node
  std::vector<std::vector<float>> keys_;    // [L][nodes, kv*d_k]
  std::vector<std::vector<float>> values_;  // [L][nodes, kv*d_v]
  std::vector<float> node_logits_;          // [nodes, V]
  std::vector<int> current_;                // the last step's branches' nodes
  std::vector<int> tokens_;                 // [count, depth]
  std::vector<int> path_, run_ids_;         // run()'s rows' ancestors [rows, depth] and tokens
  LayerActivations scratch_;
  std::vector<float> branch_, logits_, scores_;
};

// Whether a model's passes can be extended (causal, with at least one layer
// or none at all).
bool extendable(const Model& model);

}  // namespace nextword
