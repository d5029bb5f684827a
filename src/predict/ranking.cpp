#include "predict/ranking.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace nextword {

void rank_top(const Model& model, const float* logits, int k, std::vector<int>& ids) {
  rank_range(model, logits, 0, model.config.vocab_size, k, ids);
}

void rank_range(const Model& model, const float* logits, int begin, int end, int k,
                std::vector<int>& ids) {
  ids.clear();
  if (k <= 0) return;
  if (k <= kFewTop) {
    // One pass that keeps the best k so far in order: a word that does not
    // beat the k-th (nearly all of a large vocabulary) costs one compare.
    for (int id = begin; id < end; ++id) {
      if (ids.size() == static_cast<size_t>(k) && !(logits[id] > logits[ids.back()])) continue;
      if (model.is_special(id)) continue;
      // Ids come in increasing order, so an equal logit already kept ranks first.
      auto at = std::upper_bound(ids.begin(), ids.end(), id,
                                 [logits](int a, int b) { return ranks_before(logits, a, b); });
      ids.insert(at, id);
      if (ids.size() > static_cast<size_t>(k)) ids.pop_back();
    }
    return;
  }
  for (int id = begin; id < end; ++id) {
    if (!model.is_special(id)) ids.push_back(id);
  }
  const size_t n = std::min(ids.size(), static_cast<size_t>(k));
  auto before = [logits](int a, int b) { return ranks_before(logits, a, b); };
  const auto last = ids.begin() + static_cast<std::ptrdiff_t>(n);
  if (n < ids.size()) std::nth_element(ids.begin(), last, ids.end(), before);
  std::sort(ids.begin(), last, before);
  ids.resize(n);
}

int rank_of(const Model& model, const float* logits, int target, int limit) {
  // Counted over every id at once (a loop the compiler vectorizes: scoring
  // ranks every word of a text), then the special tokens taken back out.
  const int V = model.config.vocab_size;
  const float x = logits[target];
  int before = 0;
  for (int id = 0; id < V; ++id) before += logits[id] > x ? 1 : 0;
  for (int id = 0; id < target; ++id) before += logits[id] == x ? 1 : 0;
  for (const int special : {model.unk_id, model.bos_id}) {
    if (special >= 0 && special != target && ranks_before(logits, special, target)) --before;
  }
  return std::min(before, limit);
}

float kth_largest(std::span<const float> values, size_t k) {
  if (k == 0 || values.size() < k) return -std::numeric_limits<float>::infinity();
  // A min-heap of the best k: its front is the k-th.
  thread_local std::vector<float> best;
  best.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k));
  std::make_heap(best.begin(), best.end(), std::greater<>());
  auto keep = [&](float v) {
    std::pop_heap(best.begin(), best.end(), std::greater<>());
    best.back() = v;
    std::push_heap(best.begin(), best.end(), std::greater<>());
  };
  constexpr size_t kBlock = 16;
  size_t i = k;
  for (; i + kBlock <= values.size(); i += kBlock) {
    const float kth = best.front();
    const float* block = values.data() + i;
    int beats = 0;
#pragma omp simd reduction(+ : beats)
    for (size_t j = 0; j < kBlock; ++j) beats += block[j] > kth ? 1 : 0;
    if (beats == 0) continue;
    for (size_t j = 0; j < kBlock; ++j) {
      if (block[j] > best.front()) keep(block[j]);
    }
  }
  for (; i < values.size(); ++i) {
    if (values[i] > best.front()) keep(values[i]);
  }
  return best.front();
}

}  // namespace nextword
