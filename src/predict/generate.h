// Continuing a phrase word by word: greedy (temperature 0) or sampled from
// the softmax at a temperature, cut to the top k and to the top-p nucleus,
// either under the repetition guard (predict/repetition.h) unless it is
// off. The random numbers come from splitmix64 of the seed and the step, so
// the same seed gives the same text on every machine.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "predict/predictor.h"
#include "predict/repetition.h"

namespace nextword {

struct GenerateOptions {
  int max_words = 20;
  float temperature = 0.0f;  // 0: always the most likely word
  int top_k = 0;             // sample among the k most likely only (0: all)
  float top_p = 1.0f;        // ... and among the fewest whose probability reaches p
  uint64_t seed = 0;
  RepetitionGuard guard;  // RepetitionGuard::off(): the model's own choices, loops and all
};

// The ids of the words that follow `input`, max_words of them. Past max_len
// the context is encode_growing's window (predictor.h), which moves once a
// sentence.
// `on_word` (when given) hears of each word as it is chosen; when it
// returns false, generation stops there (a reader that went away).
std::vector<int> generate(Predictor& predictor, Encoded input, const GenerateOptions& options,
                          const std::function<bool(int id)>& on_word = {});

// The id chosen from next-word logits with these options, among the words
// ranked by predict/ranking.h (specials never);
// `uniform` is a number in [0, 1).
int choose_next(const Model& model, const float* logits, const GenerateOptions& options,
                double uniform);
// The same from a row computed as it is asked for (predict/logit_row.h):
// greedy and top_k > 0 read only the best words' logits.
int choose_next(const Model& model, LogitRow& row, const GenerateOptions& options, double uniform);

}  // namespace nextword
