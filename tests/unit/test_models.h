// Models for the unit tests: small random ones (the training tests), and the
// hand-written fruit model.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/model_file.h"

namespace nextword::testing {

// ln q(word) of UnknownWords without a lexicon (predict/unknown_words.h):
// uniform bytes and an end, 1/256 x (1/257)^length.
inline double uniform_log_q(const std::string& word) {
  return -std::log(256.0) - static_cast<double>(word.size()) * std::log(257.0);
}

// data/examples/fruit, the hand-written model of the attention article
// (data/README.md), loaded once.
inline const Model& fruit() {
  static const Model model =
      load_model(ModelPaths::in_directory(std::string(NEXTWORD_DATA_DIR) + "/examples/fruit"));
  return model;
}

// A model of this config (vocab_size words "w0".., "<unk>" first, "<bos>"
// second when the config names it) with every tensor N(0, scale), norm gains
// near 1, and the optional biases when asked for.
inline Model random_model(Config c, bool attention_bias, bool classifier_bias, uint64_t seed,
                          float scale = 0.4f) {
  std::vector<std::string> words{c.unk_token};
  if (c.has_bos()) words.push_back(c.bos_token);
  while (static_cast<int>(words.size()) < c.vocab_size) {
    std::string word = std::to_string(words.size());
    words.push_back(word.insert(0, 1, 'w'));
  }
  std::vector<TensorSpec> present;
  for (TensorSpec& spec : layout_for(c)) {
    // The feed-forward biases, required before the modern options, are always there.
    const bool bias = spec.name == "classifier_bias"                 ? classifier_bias
                      : spec.name.find(".ffn.") != std::string::npos ? true
                                                                     : attention_bias;
    if (!spec.optional || bias) present.push_back(std::move(spec));
  }
  Weights w(c, std::move(present));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (size_t t = 0; t < w.tensors().size(); ++t) {
    const bool gain = w.tensors()[t].role == TensorRole::kGain;
    for (int64_t i = 0; i < w.tensors()[t].size(); ++i) {
      w.mutable_data(t)[i] = (gain ? 1.0f : 0.0f) + normal(rng);
    }
  }
  const int bos = c.has_bos() ? 1 : -1;
  return Model{ModelPaths{}, 0,       0,       c,      Vocabulary(words), std::move(w), 0,
               bos,          nullptr, nullptr, nullptr};
}

// The config every test starts from: 2 layers, everything switched on.
inline Config small_config() {
  Config c;
  c.vocab_size = 11;
  c.d_model = 8;
  c.n_layers = 2;
  c.n_heads = 2;
  c.d_k = 3;
  c.d_v = 5;
  c.d_ff = 12;
  c.max_len = 6;
  c.positional = Positional::kLearned;
  c.norm = Norm::kLayerNorm;
  c.bos_token = "<bos>";
  return c;
}

}  // namespace nextword::testing
