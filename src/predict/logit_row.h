// One context's next-word logits as the rankers read them: a word's logit,
// an upper bound on it, the k best words, or the whole row.
//
// A FullRow is a row already computed ([V] floats). An AdaptiveRow is the
// log-probabilities of an adaptive softmax (transformer/adaptive_softmax.h)
// computed as they are asked for: the head always, a cluster only when a
// word of it is asked for, or when the k best words cannot be told without
// it. A cluster's words have ln p at most the cluster's own ln p in the head
// (ln softmax(tail) <= 0, rounded down as the full row rounds it), so
// top(k) skips every cluster whose ln p is below the k-th best word found:
// exactly the words (and bits) of ranking the whole row. On the English
// model the head is 4,096 words of 65,536 and its two clusters 92% of the
// classifier's work.
#pragma once

#include <span>
#include <vector>

#include "model/model_file.h"

namespace nextword {

class LogitRow {
 public:
  virtual ~LogitRow() = default;
  // Word w's logit: the bits the whole row holds.
  virtual float logit(int w) = 0;
  // A value logit(w) never exceeds, computing nothing.
  virtual float bound(int w) const = 0;
  // The k best words, predict/ranking.h's order (rank_top's).
  virtual void top(int k, std::vector<int>& ids) = 0;
  // The whole row [V].
  virtual std::span<const float> all() = 0;
};

class FullRow final : public LogitRow {
 public:
  FullRow(const Model& model, std::span<const float> logits) : model_(&model), logits_(logits) {}
  float logit(int w) override { return logits_[static_cast<size_t>(w)]; }
  float bound(int w) const override { return logits_[static_cast<size_t>(w)]; }
  void top(int k, std::vector<int>& ids) override;
  std::span<const float> all() override { return logits_; }

 private:
  const Model* model_;
  std::span<const float> logits_;
};

class AdaptiveRow final : public LogitRow {
 public:
  explicit AdaptiveRow(const Model& model) : model_(model) {}
  // A new row: the head's ln p for the context vector z [d] (after the
  // final norm), no cluster yet.
  void reset(std::span<const float> z);
  float logit(int w) override;
  float bound(int w) const override;
  void top(int k, std::vector<int>& ids) override;
  std::span<const float> all() override;
  // Clusters computed for this row (for tests and benchmarks).
  int clusters_computed() const;

 private:
  void compute(int cluster);
  int cluster_of(int w) const;

  const Model& model_;
  std::vector<float> z_, head_, log_probs_;  // [d], [head_size], [V]
  std::vector<char> computed_;               // per cluster
  std::vector<int> candidates_;
};

}  // namespace nextword
