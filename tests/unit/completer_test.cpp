// complete/completer.h on the hand-written fruit model (data/README.md):
// the words that fit the prefix in the model's order, with the model's
// probabilities; the writer's case; the lexicon's words ranked among the
// vocabulary's; the
// no-repeat filter; the cache of the writer's words; one forward pass per
// word, not per keystroke.
#include "complete/completer.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "math/layers.h"
#include "model/file_bytes.h"
#include "predict/memory_mixture.h"
#include "predict/predictor.h"
#include "test_models.h"
#include "train/ngram_memory.h"

using namespace nextword;

using testing::fruit;
using testing::random_model;
using testing::small_config;

namespace {
std::vector<std::string> words_of(const Completion& c) {
  std::vector<std::string> words;
  for (const Suggestion& s : c.suggestions) words.push_back(s.word);
  return words;
}

using Words = std::vector<std::string>;

// After "banana apple" the classifier scores pie 3, store 1 and the other
// four words 0 (data/README.md): p(pie) = e^3 / (e^3 + e + 4).
const double kZ = std::exp(3.0) + std::exp(1.0) + 4;
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

TEST_CASE("suggestions: the words that fit the prefix, with the model's probabilities",
          "[complete]") {
  Completer c(fruit(), nullptr, {});
  const Completion next = c.complete("banana apple ");
  CHECK(next.context == "banana apple ");
  CHECK(next.prefix == "");
  CHECK(words_of(next) == Words{"pie", "store", "apple", "banana", "phone"});  // never <unk>
  CHECK(next.suggestions[0].probability == Approx(std::exp(3.0) / kZ));
  CHECK(next.suggestions[1].probability == Approx(std::exp(1.0) / kZ));
  CHECK(next.suggestions[2].probability == Approx(1 / kZ));
  CHECK(next.suggestions[0].source == Source::kModel);
  // The same probabilities as predict's.
  Predictor predictor(fruit());
  const Prediction p = predictor.predict("banana apple", 2);
  CHECK(next.suggestions[0].probability == Approx(p.top[0].probability));

  const Completion typed = c.complete("banana apple P");
  CHECK(typed.prefix == "P");
  CHECK(words_of(typed) == Words{"Pie", "Phone"});  // a capital prefix, capital words
  CHECK(words_of(c.complete("banana apple ph")) == Words{"phone"});
  CHECK(words_of(c.complete("banana apple x")).empty());  // nothing fits: no error
  CHECK(words_of(c.complete("banana apple pies")).empty());
  // k cuts the list.
  Completer two(fruit(), nullptr, {.k = 2});
  CHECK(words_of(two.complete("banana apple ")) == Words{"pie", "store"});
}

TEST_CASE("a sentence's first word is capitalized", "[complete]") {
  Completer c(fruit(), nullptr, {});
  CHECK(words_of(c.complete("banana apple. ")).front() == "Pie");
  CHECK(words_of(c.complete("banana apple, \"s")) == Words{"Store"});
  // The fruit model has no bos token: an empty context is read as uniform.
  const Completion start = c.complete("");
  CHECK(words_of(start) == Words{"Apple", "Banana", "Phone", "Pie", "Store"});
  CHECK(start.suggestions[0].probability == Approx(1.0 / 6));
}

TEST_CASE("the lexicon's words: offered after the vocabulary's more probable ones", "[complete]") {
  Lexicon words;
  words.entries = {{"apple", 10}, {"pear", 3}, {"peach", 1}, {"!", 5}};
  sort_lexicon(words);
  const LexiconIndex lexicon = LexiconIndex::build(words, LexiconIndexSource::of(fruit()));
  Completer c(fruit(), &lexicon, {});
  const Completion p = c.complete("banana apple p");
  CHECK(words_of(p) == Words{"pie", "phone", "pear", "peach"});
  // p(unk) * count / oov_count: unk's logit is 0, oov_count = 3 + 1 + 5.
  CHECK(p.suggestions[2].probability == Approx(1 / kZ * 3 / 9));
  CHECK(p.suggestions[3].probability == Approx(1 / kZ * 1 / 9));
  CHECK(p.suggestions[2].source == Source::kLexicon);
  // Less probable than every vocabulary word that fits: with k = 2 those fill it.
  Completer two(fruit(), &lexicon, {.k = 2});
  CHECK(words_of(two.complete("banana apple p")) == Words{"pie", "phone"});
  CHECK(words_of(c.complete("banana apple Pea")) == Words{"Pear", "Peach"});
  CHECK(words_of(c.complete("banana apple peac")) == Words{"peach"});
}

TEST_CASE("no-repeat: a word offered for this word is not offered again", "[complete]") {
  Completer c(fruit(), nullptr, {.k = 1, .no_repeat = true});
  CHECK(words_of(c.complete("banana apple ")) == Words{"pie"});
  CHECK(words_of(c.complete("banana apple p")) == Words{"phone"});  // pie was offered
  CHECK(words_of(c.complete("banana apple ph")) == Words{});        // so was phone
  // Another word: everything may come again.
  CHECK(words_of(c.complete("banana apple pie ")) == Words{"pie"});
  // Backspace to a shorter prefix starts over too.
  CHECK(words_of(c.complete("banana apple pie p")) == Words{"phone"});
  CHECK(words_of(c.complete("banana apple pie ")) == Words{"pie"});
  Completer repeat(fruit(), nullptr, {.k = 1});
  CHECK(words_of(repeat.complete("banana apple ")) == Words{"pie"});
  CHECK(words_of(repeat.complete("banana apple p")) == Words{"pie"});
}

TEST_CASE("apostrophes as the writer types them, and no-repeat tells the spellings apart",
          "[complete]") {
  const std::string curly = "\xE2\x80\x99";  // ’
  Completer c(fruit(), nullptr, {.k = 1, .no_repeat = true, .learn = true});
  c.learn("don't");  // the fruit model's one word that starts with d
  CHECK(words_of(c.complete("banana d")) == Words{"don't"});
  CHECK(words_of(c.complete("banana do")) == Words{});  // offered already
  // The writer types ’: the same word in the writer's spelling is new.
  CHECK(words_of(c.complete("banana don" + curly)) == Words{"don" + curly + "t"});
  CHECK(words_of(c.complete("banana don" + curly + "t")) == Words{});
  // Typographic quotes before the word: curly from the start.
  Completer quoted(fruit(), nullptr, {.k = 1, .learn = true});
  quoted.learn("don't");
  CHECK(words_of(quoted.complete("\xE2\x80\x9C"
                                 "banana d")) == Words{"don" + curly + "t"});
  CHECK(words_of(quoted.complete("\"banana d")) == Words{"don't"});
}

TEST_CASE("keystrokes inside a word do not run the model", "[complete]") {
  Completer c(fruit(), nullptr, {});
  c.complete("banana apple ");
  c.complete("banana apple p");
  c.complete("banana apple pi");
  c.complete("banana apple p");
  CHECK(c.forward_passes() == 1);
  c.complete("banana apple pie ");
  CHECK(c.forward_passes() == 2);
}

TEST_CASE("contexts prefetched in one batch give what each gives alone", "[complete]") {
  const std::vector<std::string> texts{"banana apple ", "banana apple p",        "phone apple ",
                                       "apple. ",       "banana banana phone s", ""};
  Completer batched(fruit(), nullptr, {}), alone(fruit(), nullptr, {});
  batched.prefetch(texts);
  CHECK(batched.forward_passes() == 4);  // four distinct contexts; "" has no words, no bos
  for (const std::string& text : texts) {
    const Completion a = batched.complete(text), b = alone.complete(text);
    REQUIRE(words_of(a) == words_of(b));
    for (size_t i = 0; i < a.suggestions.size(); ++i) {
      CHECK(a.suggestions[i].probability == Approx(b.suggestions[i].probability).epsilon(1e-5));
    }
  }
  CHECK(batched.forward_passes() == 4);  // nothing run again
}

TEST_CASE("learn: the writer's words mixed in, new words offered in the writer's case",
          "[complete]") {
  const double lambda = 0.5;
  // The word cache alone (the context cache's and the temperature's tests
  // are below).
  Completer c(
      fruit(), nullptr,
      {.learn = true, .lambda = lambda, .decay = 1.0, .context_weight = 0, .model_temperature = 1});
  Completer plain(fruit(), nullptr, {});
  const std::string text = "Banana apple Zorp ";
  // Its three finished words are learned, one use each.
  const Completion z = c.complete(text + "z");
  REQUIRE(words_of(z) == Words{"Zorp"});  // the writer's spelling, mid-sentence
  CHECK(z.suggestions[0].source == Source::kHistory);
  CHECK(z.suggestions[0].probability == Approx(lambda / 3));  // (1 - lambda) * 0 + lambda / 3
  // A vocabulary word: (1 - lambda) p_model + lambda p_cache.
  const Completion a = c.complete(text + "a");
  REQUIRE(words_of(a) == Words{"apple"});
  CHECK(a.suggestions[0].probability ==
        Approx((1 - lambda) * plain.complete(text + "a").suggestions[0].probability + lambda / 3));
  // "Banana" began a sentence: its capital says nothing of the word.
  CHECK(words_of(c.complete(text + "b")) == Words{"banana"});
  // Typing on learns each finished word once.
  c.complete(text + "pie ");
  c.complete(text + "pie p");
  c.complete(text + "pie pi");
  CHECK(c.complete(text + "pie z").suggestions[0].probability == Approx(lambda / 4));
  // Backspace over a finished word and typing it again: still learned once.
  c.complete(text + "pie");
  c.complete(text + "pi");
  c.complete(text + "pie ");
  CHECK(c.complete(text + "pie z").suggestions[0].probability == Approx(lambda / 4));
  // Another word in its place is new.
  c.complete(text + "pi");
  c.complete(text + "pia ");
  CHECK(c.complete(text + "pia z").suggestions[0].probability == Approx(lambda / 5));
  // Bytes that are not UTF-8 make no word to offer.
  c.complete(text + "pia zo\xff ");
  CHECK(words_of(c.complete(text + "pia zo\xff zo")) == Words{"Zorp"});
  // Without learn the cache is not used.
  CHECK(words_of(plain.complete(text + "z")).empty());
}

TEST_CASE("a history is learned like text the writer typed", "[complete]") {
  Completer c(fruit(), nullptr, {.learn = true, .lambda = 0.2, .context_weight = 0});
  c.learn("Zorp went home. Then zorp slept.\n");
  const Completion z = c.complete("banana apple zo");
  REQUIRE(words_of(z) == Words{"zorp"});  // the last mid-sentence spelling
}

TEST_CASE("learn: each word comes back by the contexts it followed", "[complete]") {
  const double mu = 0.5, theta = 3;
  const CompleteOptions options{.learn = true,
                                .lambda = 0,
                                .context_weight = mu,
                                .context_theta = theta,
                                .model_temperature = 1};
  Completer c(fruit(), nullptr, options);
  // Typed word by word, as a person does: each word start ranks its context.
  const Words words{"banana", "apple", "pie", "banana", "apple", "store", "phone"};
  std::string text;
  for (const std::string& w : words) {
    c.complete(text);
    c.complete(text + w.substr(0, 1));
    text += w + " ";
  }
  // The uses kept: each word after the context vector it followed (the
  // first word had none: the fruit model reads no empty context).
  Predictor predictor(fruit());
  auto h_of = [&](std::string_view context) {
    predictor.next_logits(encode_growing(fruit(), context));
    const std::span<const float> h = predictor.hidden();
    return std::vector<float>(h.begin(), h.end());
  };
  auto cosine = [](const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t j = 0; j < a.size(); ++j) {
      ab += static_cast<double>(a[j]) * b[j];
      aa += static_cast<double>(a[j]) * a[j];
      bb += static_cast<double>(b[j]) * b[j];
    }
    return ab / std::sqrt(aa * bb);
  };
  const std::vector<float> h = h_of(text);
  std::map<std::string, double> p_context;
  double total = 0;
  std::string context = words[0];
  for (size_t i = 1; i < words.size(); ++i) {
    const double e = std::exp(theta * cosine(h, h_of(context)));
    p_context[words[i]] += e;
    total += e;
    context += " " + words[i];
  }
  const Completion got = c.complete(text);
  Completer plain_completer(fruit(), nullptr, {.k = 6});
  const Completion plain = plain_completer.complete(text);
  REQUIRE(got.suggestions.size() == plain.suggestions.size());  // every word of the fruit model
  REQUIRE(got.suggestions.size() >= 5);
  for (const Suggestion& s : got.suggestions) {
    double p_model = 0;
    for (const Suggestion& m : plain.suggestions) {
      if (m.word == s.word) p_model = m.probability;
    }
    INFO(s.word);
    CHECK(s.probability == Approx((1 - mu) * p_model + mu * p_context[s.word] / total));
  }
  // Without learn the contexts are not used.
  Completer off(fruit(), nullptr, {.context_weight = mu});
  CHECK(words_of(off.complete(text)) == words_of(plain));
}

TEST_CASE("learn: the model's distribution is flattened by its temperature", "[complete]") {
  const double T = 2;
  Completer c(fruit(), nullptr,
              {.learn = true, .lambda = 0, .context_weight = 0, .model_temperature = T});
  const std::string text = "banana apple ";
  Predictor predictor(fruit());
  const std::span<const float> logits = predictor.next_logits(encode_growing(fruit(), text));
  double z = 0;
  for (const float l : logits) z += std::exp(l / T);
  // pie: e^(3/2) / (e^(3/2) + e^(1/2) + 4).
  CHECK(z == Approx(std::exp(1.5) + std::exp(0.5) + 4));
  const Completion got = c.complete(text);
  REQUIRE(words_of(got) == words_of(Completer(fruit(), nullptr, {}).complete(text)));
  for (const Suggestion& s : got.suggestions) {
    const int id = fruit().vocab.find(s.word);
    INFO(s.word);
    CHECK(s.probability == Approx(std::exp(logits[static_cast<size_t>(id)] / T) / z));
  }
  // Without learn the temperature is not used: e^3 / (e^3 + e + 4).
  Completer plain(fruit(), nullptr, {.model_temperature = T});
  CHECK(plain.complete(text).suggestions[0].probability == Approx(std::exp(3.0) / kZ));
}

TEST_CASE("a copy of a completer goes on as the original does, learned words and cache included",
          "[complete]") {
  CompleteOptions o;
  o.learn = true;
  Completer original(fruit(), nullptr, o);
  original.learn("banana phone banana phone kiwi");
  (void)original.complete("banana apple ");  // a forward pass: the copy gets its cache
  Completer copy(original);
  for (const char* text : {"banana apple p", "banana apple pie ", "banana k", "apple "}) {
    const Completion a = original.complete(text), b = copy.complete(text);
    REQUIRE(words_of(a) == words_of(b));
    for (size_t i = 0; i < a.suggestions.size(); ++i) {
      CHECK(a.suggestions[i].probability == b.suggestions[i].probability);
      CHECK(a.suggestions[i].source == b.suggestions[i].source);
    }
  }
  CHECK(copy.forward_passes() == original.forward_passes());
  CHECK(words_of(copy.complete("banana k")) == Words{"kiwi"});  // learned before the copy
}

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
