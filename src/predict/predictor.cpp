#include "predict/predictor.h"

#include <algorithm>

#include "math/layers.h"
#include "model/error.h"
#include "text/tokenizer.h"

namespace nextword {

Encoded encode(const Model& model, std::string_view phrase) {
  const Config& c = model.config;
  std::vector<std::string> words = tokenize(phrase, c.tokenizer);
  if (words.empty() && !c.has_bos()) throw input_error("the phrase has no words");
  Encoded e;
  if (c.has_bos()) e.tokens.push_back(c.bos_token);
  for (std::string& word : words) e.tokens.push_back(std::move(word));
  if (e.tokens.size() > static_cast<size_t>(c.max_len)) {
    e.tokens.erase(e.tokens.begin(), e.tokens.end() - c.max_len);
    e.truncated = true;
  }
  bool any_known = e.tokens.size() == (c.has_bos() ? 1u : 0u);  // bos alone is a valid input
  for (size_t i = 0; i < e.tokens.size(); ++i) {
    const bool is_bos = c.has_bos() && i == 0 && !e.truncated;
    const int id = is_bos ? model.bos_id : model.vocab.find(e.tokens[i]);
    if (id < 0 || (!is_bos && model.is_special(id))) {
      // A word spelled like a special token is still an unknown word.
      e.unknown.push_back(e.tokens[i]);
      e.ids.push_back(model.unk_id);
    } else {
      e.ids.push_back(id);
      any_known = any_known || !is_bos;
    }
  }
  if (!any_known) {
    throw input_error("no word of the phrase is in the vocabulary: " + join(e.unknown));
  }
  return e;
}

Prediction Predictor::predict(std::string_view phrase, int k, bool with_attention) {
  return predict(encode(model_, phrase), k, with_attention);
}

Prediction Predictor::predict(Encoded input, int k, bool with_attention) {
  const int T = static_cast<int>(input.ids.size());
  forward(model_, state_, input.ids.data(), 1, T);

  // probabilities = softmax(logits), over the whole vocabulary.
  const std::vector<float>& logits = state_.logits;
  probabilities_ = logits;
  softmax_forward(probabilities_.data(), static_cast<int>(probabilities_.size()));

  candidates_.clear();
  for (int id = 0; id < static_cast<int>(logits.size()); ++id) {
    if (!model_.is_special(id)) candidates_.push_back(id);
  }
  const auto n = std::min(candidates_.size(), static_cast<size_t>(std::max(k, 0)));
  auto better = [&logits](int a, int b) {
    return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)] ||
           (logits[static_cast<size_t>(a)] == logits[static_cast<size_t>(b)] && a < b);
  };
  std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(n),
                    candidates_.end(), better);

  Prediction p;
  p.input = std::move(input);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<size_t>(candidates_[i]);
    p.top.push_back({candidates_[i], probabilities_[id], logits[id]});
  }
  if (with_attention) {
    for (const LayerState& layer : state_.layers) {
      p.attention.insert(p.attention.end(), layer.A.begin(), layer.A.end());
    }
  }
  return p;
}

}  // namespace nextword
