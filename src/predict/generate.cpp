#include "predict/generate.h"

#include <algorithm>
#include <cmath>

#include "base/random.h"

namespace nextword {

int choose_next(const Model& model, const float* logits, const GenerateOptions& o, double uniform) {
  const int V = model.config.vocab_size;
  std::vector<int> ids;
  for (int id = 0; id < V; ++id) {
    if (!model.is_special(id)) ids.push_back(id);
  }
  auto better = [logits](int a, int b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  if (o.temperature <= 0.0f) return *std::min_element(ids.begin(), ids.end(), better);
  std::sort(ids.begin(), ids.end(), better);
  if (o.top_k > 0 && static_cast<size_t>(o.top_k) < ids.size())
    ids.resize(static_cast<size_t>(o.top_k));
  // p_i = softmax(logit_i / T) over the candidates left.
  std::vector<double> p(ids.size());
  const double top = logits[ids[0]] / static_cast<double>(o.temperature);
  double sum = 0.0;
  for (size_t i = 0; i < ids.size(); ++i) {
    p[i] = std::exp(logits[ids[i]] / static_cast<double>(o.temperature) - top);
    sum += p[i];
  }
  // The nucleus: the fewest best words whose probability reaches top_p.
  size_t keep = ids.size();
  if (o.top_p < 1.0f) {
    double mass = 0.0;
    for (size_t i = 0; i < ids.size(); ++i) {
      mass += p[i] / sum;
      if (mass >= o.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  double kept = 0.0;
  for (size_t i = 0; i < keep; ++i) kept += p[i];
  double target = uniform * kept;
  for (size_t i = 0; i < keep; ++i) {
    target -= p[i];
    if (target < 0.0) return ids[i];
  }
  return ids[keep - 1];
}

std::vector<int> generate(Predictor& predictor, Encoded input, const GenerateOptions& o) {
  const Model& model = predictor.model();
  std::vector<int> words;
  for (int step = 0; step < o.max_words; ++step) {
    (void)predictor.predict(input, 1);
    // A uniform number in [0, 1) from the seed and the step alone.
    const double uniform =
        uniform01(splitmix64(o.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(step)));
    const int id = choose_next(model, predictor.logits().data(), o, uniform);
    words.push_back(id);
    input.ids.push_back(id);
    input.tokens.push_back(model.vocab.word(id));
    if (input.ids.size() > static_cast<size_t>(model.config.max_len)) {
      input.ids.erase(input.ids.begin());
      input.tokens.erase(input.tokens.begin());
    }
  }
  return words;
}

}  // namespace nextword
