// complete/completer_ranking.cpp: the order in which a completer offers
// words, against a whole ranking done in the test: the vocabulary's words
// beyond the first ranked ones, the lexicon's words among them, the caches,
// and the mixture with a memory taken in parts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "complete/completer.h"
#include "format/file_bytes.h"
#include "math/layers.h"
#include "predict/memory_mixture.h"
#include "predict/predictor.h"
#include "test_models.h"
#include "train/ngram_memory.h"

using namespace nextword;

using testing::random_model;
using testing::small_config;

namespace {
// 500 random words "w2" .. "w499" and their next-word logits after "w5 w17 w9 ".
struct FiveHundredWords {
  Model model;
  std::string context = "w5 w17 w9 ";
  std::vector<float> logits;
  double normalizer = 0;

  FiveHundredWords() {
    Config config = small_config();
    config.vocab_size = 500;
    config.max_len = 16;
    model = random_model(config, false, false, 35, 1.0f);
    Predictor predictor(model);
    const std::span<const float> row = predictor.next_logits(encode_growing(model, context));
    logits.assign(row.begin(), row.end());
    normalizer = log_sum_exp(logits.data(), static_cast<int>(logits.size()));
  }
};
}  // namespace

TEST_CASE("a vocabulary larger than the words ranked first: the order of a whole ranking",
          "[complete]") {
  // 500 words, so that the best 64 logits are ranked first and the rest only
  // when a list needs them; against softmax and a whole sort done here.
  const FiveHundredWords words500;
  const Model& model = words500.model;
  const std::string& context = words500.context;
  const std::vector<float>& logits = words500.logits;
  const double normalizer = words500.normalizer;
  std::vector<std::pair<double, std::string>> whole;  // (-p, word): ties by id, as the ids' words
  for (int id = 0; id < model.vocab.size(); ++id) {
    if (model.is_special(id)) continue;
    whole.emplace_back(-std::exp(static_cast<double>(logits[static_cast<size_t>(id)]) - normalizer),
                       std::string(model.vocab.word(id)));
  }
  std::stable_sort(whole.begin(), whole.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const std::string prefix : {"", "w", "w1", "w4", "w49"}) {
    std::vector<std::pair<double, std::string>> fitting;
    for (const auto& w : whole) {
      if (w.second.starts_with(prefix)) fitting.push_back(w);
    }
    for (const int k : {1, 6, 64, 65, 200, 500}) {
      CAPTURE(prefix, k);
      Completer c(model, nullptr, {.k = k});
      const Completion got = c.complete(context + prefix);
      REQUIRE(got.suggestions.size() == std::min(fitting.size(), static_cast<size_t>(k)));
      for (size_t i = 0; i < got.suggestions.size(); ++i) {
        CHECK(got.suggestions[i].word == fitting[i].second);
        CHECK(got.suggestions[i].probability == -fitting[i].first);
      }
    }
  }
  // With the caches: the list for a few is the head of the list for all,
  // every word that fits is in it, best first. A tiny cache weight leaves a
  // cached word of a low logit below words ranked after the first ones.
  for (const double lambda : {0.03, 1e-7}) {
    CAPTURE(lambda);
    CompleteOptions learn{.k = 500, .learn = true, .lambda = lambda};
    Completer all(model, nullptr, learn);
    learn.k = 6;
    Completer few(model, nullptr, learn);
    // The model alone at the same temperature.
    Completer model_only(model, nullptr,
                         {.k = 500, .learn = true, .lambda = 0, .context_weight = 0});
    const std::string text = "w300 w301 w302 w300 w5 w17 w9 ";
    for (const std::string prefix : {"", "w3", "w30"}) {
      const Completion a = all.complete(text + prefix), f = few.complete(text + prefix);
      size_t fit = 0;
      for (const auto& w : whole) fit += w.second.starts_with(prefix) ? 1 : 0;
      REQUIRE(a.suggestions.size() == fit);
      for (size_t i = 1; i < a.suggestions.size(); ++i) {
        CHECK(a.suggestions[i - 1].probability >= a.suggestions[i].probability);
      }
      REQUIRE(f.suggestions.size() == 6);
      for (size_t i = 0; i < 6; ++i) CHECK(f.suggestions[i].word == a.suggestions[i].word);
      // w300, written twice: more than the model's share of its probability.
      const Completion m = model_only.complete(text + prefix);
      auto p = [](const Completion& c, const std::string& word) {
        for (const Suggestion& s : c.suggestions) {
          if (s.word == word) return s.probability;
        }
        return -1.0;
      };
      const double share = 1 - learn.lambda - learn.context_weight;
      CHECK(p(a, "w300") > share * p(m, "w300") + 0.5 * learn.lambda * 2 / 7);
    }
  }
}

TEST_CASE("the lexicon's words ranked among the vocabulary's by probability", "[complete]") {
  // p(unk) count / oov_count for a word outside the vocabulary, against a
  // whole ranking of both done here: a frequent word outside the
  // vocabulary comes before the vocabulary's improbable words.
  const FiveHundredWords words500;
  const Model& model = words500.model;
  const std::string& context = words500.context;
  const std::vector<float>& logits = words500.logits;
  const double normalizer = words500.normalizer;
  auto p_of = [&](int id) {
    return std::exp(static_cast<double>(logits[static_cast<size_t>(id)]) - normalizer);
  };
  Lexicon words;
  for (const auto& [word, count] : std::vector<std::pair<std::string, int64_t>>{
           {"wx1", 5000}, {"wx2", 700}, {"wx3", 90}, {"wy4", 7}, {"w3x", 1}, {"w17", 99}}) {
    words.entries.push_back({word, count});
  }
  sort_lexicon(words);
  const double oov_count = 5000 + 700 + 90 + 7 + 1;  // w17 is the vocabulary's
  const LexiconIndex lexicon = LexiconIndex::build(words, LexiconIndexSource::of(model));
  std::vector<std::tuple<double, int, std::string>> whole;  // (-p, vocabulary first, word)
  for (int id = 0; id < model.vocab.size(); ++id) {
    if (!model.is_special(id)) whole.emplace_back(-p_of(id), 0, model.vocab.word(id));
  }
  for (const LexiconEntry& e : words.entries) {
    if (model.vocab.find(e.word) < 0) {
      whole.emplace_back(-p_of(model.unk_id) * static_cast<double>(e.count) / oov_count, 1, e.word);
    }
  }
  std::stable_sort(whole.begin(), whole.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) < std::get<0>(b)
                                            : std::get<1>(a) < std::get<1>(b);
  });
  bool some_lexicon_word_first = false;
  for (const std::string prefix : {"", "w", "wx", "w3"}) {
    std::vector<std::string> fitting;
    for (const auto& w : whole) {
      if (std::get<2>(w).starts_with(prefix)) fitting.push_back(std::get<2>(w));
    }
    for (const int k : {1, 6, 64, 600}) {
      CAPTURE(prefix, k);
      Completer c(model, &lexicon, {.k = k});
      const Completion got = c.complete(context + prefix);
      REQUIRE(got.suggestions.size() == std::min(fitting.size(), static_cast<size_t>(k)));
      for (size_t i = 0; i < got.suggestions.size(); ++i) {
        CHECK(got.suggestions[i].word == fitting[i]);
      }
      // A lexicon word before the last vocabulary word of the whole list.
      if (k == 600 && !got.suggestions.empty()) {
        some_lexicon_word_first |=
            got.suggestions.front().source == Source::kLexicon ||
            (got.suggestions.back().source == Source::kModel &&
             std::any_of(got.suggestions.begin(), got.suggestions.end(),
                         [](const Suggestion& s) { return s.source == Source::kLexicon; }));
      }
    }
  }
  CHECK(some_lexicon_word_first);  // the case this is about happens here
}

TEST_CASE("a model with a memory: the mixture taken in parts ranks as the whole mixture",
          "[complete][memory]") {
  // 500 words and a memory counted from a random text of them: at each
  // prefix and k, the suggestions are the best words of the exact mixture
  // (memory_mixture.h's double path), best first, with its probabilities.
  Config config = small_config();
  config.vocab_size = 500;
  config.max_len = 16;
  Model model = random_model(config, false, false, 36, 1.0f);
  std::mt19937_64 rng(4);
  std::vector<int> text;
  for (int i = 0; i < 20000; ++i)
    text.push_back(2 + static_cast<int>(rng() % (rng() % 2 ? 20 : 498)));
  MemoryOptions options;
  options.order = 3;
  MemoryTables tables = build_memory(text, model.vocab, options);
  for (double& lambda : tables.header.lambdas) lambda = 0.4;
  model.memory =
      Memory::from_file(FileBytes::from_bytes("memory.bin", memory_bytes(tables)), model.vocab);
  for (const std::string context : {"w5 w17 w9 ", "w3 w4 ", "w300 "}) {
    Predictor predictor(model);
    predictor.set_mixing(false);
    const Encoded input = encode_growing(model, context);
    const std::span<const float> logits = predictor.next_logits(input);
    const MixedRow row = mixed_row(*model.memory, input.ids, logits, true);
    std::vector<std::pair<double, std::string>> whole;
    for (int id = 0; id < model.vocab.size(); ++id) {
      if (model.is_special(id)) continue;
      whole.emplace_back(std::exp(mixed_log_probability(*model.memory, row, logits, id)),
                         std::string(model.vocab.word(id)));
    }
    for (const std::string prefix : {"", "w", "w1", "w4", "w49"}) {
      for (const int k : {1, 6, 64, 65, 200}) {
        CAPTURE(context, prefix, k);
        Completer c(model, nullptr, {.k = k});
        const Completion got = c.complete(context + prefix);
        std::map<std::string, double> p;
        size_t fit = 0;
        for (const auto& [probability, word] : whole) {
          if (!word.starts_with(prefix)) continue;
          p[word] = probability;
          ++fit;
        }
        REQUIRE(got.suggestions.size() == std::min(fit, static_cast<size_t>(k)));
        double last = 1;
        for (const Suggestion& s : got.suggestions) {
          CHECK(s.probability == Approx(p.at(s.word)).epsilon(1e-5));
          CHECK(s.probability <= last);
          last = s.probability;
          p.erase(s.word);
        }
        // No word left out is more likely than the last one offered.
        for (const auto& [word, probability] : p) CHECK(probability <= last * (1 + 1e-5));
      }
    }
  }
}
