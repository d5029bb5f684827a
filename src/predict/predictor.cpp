#include "predict/predictor.h"

#include <cmath>

#include "base/error.h"
#include "math/layers.h"
#include "predict/ranking.h"
#include "text/tokenizer.h"

namespace nextword {

Encoded encode(const Model& model, std::string_view phrase, Unknowns unknowns) {
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
  if (!any_known && unknowns == Unknowns::kRefuse) {
    throw input_error("no word of the phrase is in the vocabulary: " + join(e.unknown));
  }
  return e;
}

Prediction Predictor::predict(std::string_view phrase, int k, bool with_attention) {
  return predict(encode(model_, phrase), k, with_attention);
}

Prediction Predictor::predict(Encoded input, int k, bool with_attention) {
  std::vector<Encoded> one;
  one.push_back(std::move(input));
  return std::move(predict(std::move(one), k, with_attention).front());
}

std::span<const float> Predictor::next_logits(const Encoded& input) {
  run({&input, 1});
  return logits();
}

std::span<const float> Predictor::next_logits(std::span<const Encoded> inputs) {
  run(inputs);
  return {state_.logits.data(), inputs.size() * static_cast<size_t>(model_.config.vocab_size)};
}

void Predictor::run(std::span<const Encoded> inputs) {
  lengths_.clear();
  ids_.clear();
  for (const Encoded& e : inputs) {
    lengths_.push_back(static_cast<int>(e.ids.size()));
    ids_.insert(ids_.end(), e.ids.begin(), e.ids.end());
  }
  forward(model_, state_, ids_.data(), lengths_);
}

std::vector<Prediction> Predictor::predict(std::vector<Encoded> inputs, int k,
                                           bool with_attention) {
  run(inputs);
  std::vector<Prediction> predictions(inputs.size());
  const auto B = static_cast<int>(inputs.size());
#pragma omp parallel for schedule(static) if (B >= 8)
  for (int b = 0; b < B; ++b) rank(b, k, predictions[static_cast<size_t>(b)]);
  for (size_t b = 0; b < inputs.size(); ++b) {
    Prediction& p = predictions[b];
    p.input = std::move(inputs[b]);
    if (with_attention) {
      for (const std::vector<float>& A : state_.A) {
        p.attention.insert(p.attention.end(), A.begin() + state_.sequences.A_starts[b],
                           A.begin() + state_.sequences.A_starts[b + 1]);
      }
    }
  }
  return predictions;
}

void Predictor::rank(int b, int k, Prediction& p) const {
  const int V = model_.config.vocab_size;
  const float* logits = state_.logits.data() + area(b, V);
  // Each thread ranks its own phrases, in its own buffer.
  thread_local std::vector<int> best;
  rank_top(model_, logits, k, best);
  // probability = e^(logit - ln sum_j e^logit_j), over the whole vocabulary.
  const double log_normalizer = log_sum_exp(logits, V);
  p.top.clear();
  for (const int id : best) {
    p.top.push_back({id,
                     static_cast<float>(std::exp(static_cast<double>(logits[id]) - log_normalizer)),
                     logits[id]});
  }
}

std::span<const float> Predictor::logits() const {
  const auto V = static_cast<size_t>(model_.config.vocab_size);
  if (state_.sequences.B == 0) return {};
  return {state_.logits.data() + (static_cast<size_t>(state_.sequences.B) - 1) * V, V};
}

}  // namespace nextword
