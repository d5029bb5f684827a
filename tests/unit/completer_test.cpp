// complete/completer.h on the hand-written fruit model (data/README.md):
// the words that fit the prefix in the model's order, with the model's
// probabilities; the writer's case; the lexicon's words; the no-repeat
// filter; the cache of the writer's words; one forward pass per word, not
// per keystroke. The order against a whole ranking: completer_ranking_test.cpp.
#include "complete/completer.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "predict/predictor.h"
#include "test_models.h"

using namespace nextword;

using testing::fruit;

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
