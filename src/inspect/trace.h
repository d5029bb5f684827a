// Every intermediate of one pass, under the names and shapes of
// TransformerLens's ActivationCache for one sequence (hook_embed,
// blocks.L.attn.hook_q, ...; layers counted from 0 there), so that what a
// reader of TransformerLens knows finds its value here. The table of names is
// trace.cpp's, each with its shape and formula, as `nextword trace` prints it.
#pragma once

#include <string>
#include <vector>

#include "inspect/inspection.h"

namespace nextword {

// What the axes of an activation are.
enum class Axes {
  kPosition,      // [T, n]: a row per token
  kPositionHead,  // [T, h, d_head]: per token, per head
  kHeadQueryKey,  // [h, T, T]: per head, a row per query, a column per key
  kVocabulary,    // [V]: one per vocabulary word
};

struct NamedActivation {
  std::string name;  // e.g. "blocks.0.attn.hook_pattern"
  Axes axes = Axes::kPosition;
  std::vector<int> shape;   // row-major
  std::vector<float> data;  // masked attention scores are -inf
  std::string formula;      // what it is, in the terms of data/FORMAT.md
};

// In pass order; names a config does not have (a norm, the feed-forward
// block, positions) are left out.
std::vector<NamedActivation> trace(const Inspection& inspection);

}  // namespace nextword
