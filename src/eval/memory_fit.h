// Fitting a memory's mixture weights (predict/memory_mixture.h) on a
// development text: every scored token's probability under the transformer
// alone and the memory alone, in one pass of the WikiText protocol
// (eval/wikitext_eval.h), then each bucket's lambda by EM. `nextword
// memory --dev` and `nextword adapt` fit this way.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "eval/wikitext.h"
#include "model/lexicon.h"
#include "model/model_file.h"

namespace nextword {

struct MemoryFit {
  int64_t tokens = 0;           // the model tokens the weights were fitted on
  std::vector<double> lambdas;  // one a bucket
  // Summed -ln p over those tokens (a word outside the vocabulary scored
  // p(unk): the closed-vocabulary convention of other toolkits).
  double mixed_nats = 0, transformer_nats = 0, memory_nats = 0;
  // Per scored WikiText token, the spelling of words outside the
  // vocabulary added back.
  double perplexity = 0, transformer_perplexity = 0, memory_perplexity = 0;
};

// Scores `text` with `model` and `memory` (its weights as they are), and
// fits the weights. `lexicon` (may be null) gives the spelling's counts.
// Throws Error(kInput) when the text has no token to score.
MemoryFit fit_memory_weights(Model& model, std::shared_ptr<const Memory> memory,
                             const Wikitext& text, const Lexicon* lexicon);

}  // namespace nextword
