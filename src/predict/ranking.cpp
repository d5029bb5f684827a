#include "predict/ranking.h"

#include <algorithm>

namespace nextword {

void rank_top(const Model& model, const float* logits, int k, std::vector<int>& ids) {
  const int V = model.config.vocab_size;
  ids.clear();
  if (k <= 0) return;
  if (k <= kFewTop) {
    // One pass that keeps the best k so far in order: a word that does not
    // beat the k-th (nearly all of a large vocabulary) costs one compare.
    for (int id = 0; id < V; ++id) {
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
  for (int id = 0; id < V; ++id) {
    if (!model.is_special(id)) ids.push_back(id);
  }
  const size_t n = std::min(ids.size(), static_cast<size_t>(k));
  auto before = [logits](int a, int b) { return ranks_before(logits, a, b); };
  const auto end = ids.begin() + static_cast<std::ptrdiff_t>(n);
  if (n < ids.size()) std::nth_element(ids.begin(), end, ids.end(), before);
  std::sort(ids.begin(), end, before);
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

}  // namespace nextword
