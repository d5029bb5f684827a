// The one rule that orders next words, for predict, generate and eval:
// special tokens (unk, bos) are never ranked; a higher logit comes first;
// of equal logits, the lower id comes first. With ties broken by id the
// order is total, so every way of ranking by it gives the same words.
#pragma once

#include <span>
#include <vector>

#include "model/model_file.h"

namespace nextword {

// Word a comes before word b.
inline bool ranks_before(const float* logits, int a, int b) {
  return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
}

// The k best words of logits [V], best first, into `ids` (fewer when fewer
// words are not special; none for k <= 0). Up to kFewTop words, one pass
// that keeps them in order; more, selection, then only those k sorted:
// O(V + k log k).
constexpr int kFewTop = 64;
void rank_top(const Model& model, const float* logits, int k, std::vector<int>& ids);
// rank_top over the words [begin, end) alone (logits still indexed by id).
void rank_range(const Model& model, const float* logits, int begin, int end, int k,
                std::vector<int>& ids);

// How many words come before `target` (a special target is ranked as if it
// were a word), at most `limit`: rank 0 is the best word.
int rank_of(const Model& model, const float* logits, int target, int limit);

// The k-th largest of `values` (counting repeats), or -infinity when there
// are fewer than k. One pass that keeps the best k so far; blocks of values
// none of which beats the k-th are passed over with one vector compare.
float kth_largest(std::span<const float> values, size_t k);

}  // namespace nextword
