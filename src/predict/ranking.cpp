#include "predict/ranking.h"

#include <algorithm>

namespace nextword {

void rank_top(const Model& model, const float* logits, int k, std::vector<int>& ids) {
  const int V = model.config.vocab_size;
  ids.clear();
  for (int id = 0; id < V; ++id) {
    if (!model.is_special(id)) ids.push_back(id);
  }
  const size_t n = std::min(ids.size(), static_cast<size_t>(std::max(k, 0)));
  auto before = [logits](int a, int b) { return ranks_before(logits, a, b); };
  const auto end = ids.begin() + static_cast<std::ptrdiff_t>(n);
  if (n < ids.size()) std::nth_element(ids.begin(), end, ids.end(), before);
  std::sort(ids.begin(), end, before);
  ids.resize(n);
}

int rank_of(const Model& model, const float* logits, int target, int limit) {
  const int V = model.config.vocab_size;
  int before = 0;
  for (int id = 0; id < V && before < limit; ++id) {
    if (!model.is_special(id)) before += ranks_before(logits, id, target);
  }
  return before;
}

}  // namespace nextword
