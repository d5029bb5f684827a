#include "predict/logit_row.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "math/layers.h"
#include "predict/ranking.h"
#include "transformer/adaptive_softmax.h"

namespace nextword {
namespace {

// A cluster's words have ln p at most its ln p in the head; the bound adds a
// margin far above float rounding, so a cluster is never passed over on the
// strength of the last bit (a margin costs only a cluster computed more).
float above(float mass) { return mass + 1e-5f * (1.0f + std::fabs(mass)); }

// The best k of `ids` and `more` into `ids`, in ranking.h's order.
void merge_best(const float* logits, int k, std::vector<int>& ids, const std::vector<int>& more) {
  ids.insert(ids.end(), more.begin(), more.end());
  std::sort(ids.begin(), ids.end(), [logits](int a, int b) { return ranks_before(logits, a, b); });
  if (ids.size() > static_cast<size_t>(k)) ids.resize(static_cast<size_t>(k));
}

}  // namespace

void FullRow::top(int k, std::vector<int>& ids) { rank_top(*model_, logits_.data(), k, ids); }

void AdaptiveRow::reset(std::span<const float> z) {
  const Config& c = model_.config;
  z_.assign(z.begin(), z.end());
  head_.resize(static_cast<size_t>(c.head_size()));
  log_probs_.resize(static_cast<size_t>(c.vocab_size));
  computed_.assign(static_cast<size_t>(c.clusters()), 0);
  // adaptive_log_probs_forward's head, for one row.
  adaptive_head_forward(head_.data(), z_.data(), model_, 1);
  log_softmax_forward(head_.data(), c.head_size());
  std::copy_n(head_.begin(), c.head_words(), log_probs_.begin());
}

int AdaptiveRow::cluster_of(int w) const {
  const Config& c = model_.config;
  if (w < c.head_words()) return -1;
  int i = 0;
  while (i + 1 < c.clusters() && w >= c.cluster_start(i + 1)) ++i;
  return i;
}

void AdaptiveRow::compute(int i) {
  if (computed_[static_cast<size_t>(i)] != 0) return;
  const int words = model_.config.head_words();
  adaptive_cluster_forward(log_probs_.data(), z_.data(), head_.data() + words + i, 0, model_, i, 1);
  computed_[static_cast<size_t>(i)] = 1;
}

float AdaptiveRow::logit(int w) {
  const int i = cluster_of(w);
  if (i >= 0) compute(i);
  return log_probs_[static_cast<size_t>(w)];
}

float AdaptiveRow::bound(int w) const {
  const int i = cluster_of(w);
  if (i < 0 || computed_[static_cast<size_t>(i)] != 0) return log_probs_[static_cast<size_t>(w)];
  return above(head_[static_cast<size_t>(model_.config.head_words() + i)]);
}

void AdaptiveRow::top(int k, std::vector<int>& ids) {
  const Config& c = model_.config;
  const float* logits = log_probs_.data();
  rank_range(model_, logits, 0, c.head_words(), k, ids);
  if (k <= 0) return;
  // The clusters by their ln p, largest first: once one's bound is below the
  // k-th best word so far, so are the rest's.
  std::vector<int> order(static_cast<size_t>(c.clusters()));
  std::iota(order.begin(), order.end(), 0);
  const float* mass = head_.data() + c.head_words();
  std::stable_sort(order.begin(), order.end(), [mass](int a, int b) { return mass[a] > mass[b]; });
  for (const int i : order) {
    const bool full = ids.size() == static_cast<size_t>(k);
    if (computed_[static_cast<size_t>(i)] == 0 && full && above(mass[i]) < logits[ids.back()]) {
      continue;
    }
    compute(i);
    const int start = c.cluster_start(i);
    rank_range(model_, logits, start, start + c.cluster_words(i), k, candidates_);
    merge_best(logits, k, ids, candidates_);
  }
}

std::span<const float> AdaptiveRow::all() {
  for (int i = 0; i < model_.config.clusters(); ++i) compute(i);
  return log_probs_;
}

int AdaptiveRow::clusters_computed() const {
  return static_cast<int>(std::count(computed_.begin(), computed_.end(), 1));
}

}  // namespace nextword
