// The logit lens: what the model would predict if the residual stream at an
// earlier step were already the last. At each step (after the embedding,
// after each layer's attention block, after each layer) final_norm and the
// classifier read the stream at one position, as they read the last layer's.
#pragma once

#include <vector>

#include "inspect/inspection.h"
#include "predict/predictor.h"

namespace nextword {

struct LensStep {
  Step step;
  std::vector<Candidate> top;        // the k best words there (predict's rule)
  int final_word_rank = 0;           // 1-based rank there of the last step's best word
  float final_word_probability = 0;  // and its probability there
};

// The lens at token `position` (0-based): one entry per step of
// inspection.steps(with_mid), the last being exactly what predict gives
// for the tokens up to `position`.
std::vector<LensStep> logit_lens(const Inspection& inspection, int position, int k, bool with_mid);

}  // namespace nextword
