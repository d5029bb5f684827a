// A model input made straight from token ids, for the prediction tests.
#pragma once

#include <utility>
#include <vector>

#include "predict/predictor.h"

namespace nextword::testing {

// The input these ids are, each token spelled as the vocabulary spells it.
inline Encoded encoded(const Model& m, std::vector<int> ids) {
  Encoded e;
  for (int id : ids) e.tokens.emplace_back(m.vocab.word(id));
  e.ids = std::move(ids);
  return e;
}

}  // namespace nextword::testing
