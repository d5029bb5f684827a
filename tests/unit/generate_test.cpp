// Generation: choosing each next word from the logits (greedy, top-k,
// top-p, the uniform draw) and continuing a phrase with a sliding context.
#include "predict/generate.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "encoded_input.h"
#include "model/model_file.h"
#include "test_models.h"
#include "text/words.h"

using namespace nextword;
using testing::encoded;

TEST_CASE("choosing the next word: greedy, top-k, top-p and the uniform draw", "[generate]") {
  Config c = testing::small_config();  // ids 0 and 1 are <unk> and <bos>
  const Model m = testing::random_model(c, false, false, 1);
  // logits: specials highest (never chosen), then 5 > 4 > 3 > ... for ids 2..
  std::vector<float> logits(static_cast<size_t>(c.vocab_size));
  for (int id = 0; id < c.vocab_size; ++id)
    logits[static_cast<size_t>(id)] = id < 2 ? 50.0f : 10.0f - id;
  GenerateOptions greedy;
  CHECK(choose_next(m, logits.data(), greedy, 0.99) == 2);
  GenerateOptions sample;
  sample.temperature = 1.0f;
  // p(2) = e^8 / sum: the draw picks 2 below that, 3 just above.
  double z = 0;
  for (int id = 2; id < c.vocab_size; ++id) z += std::exp(10.0 - id);
  const double p2 = std::exp(8.0) / z;
  CHECK(choose_next(m, logits.data(), sample, p2 * 0.999) == 2);
  CHECK(choose_next(m, logits.data(), sample, p2 * 1.001) == 3);
  sample.top_k = 1;
  CHECK(choose_next(m, logits.data(), sample, 0.999) == 2);
  sample.top_k = 0;
  sample.top_p = static_cast<float>(p2 * 0.5);  // the nucleus is the best word alone
  CHECK(choose_next(m, logits.data(), sample, 0.999) == 2);
  sample.top_p = 1.0f;
  sample.temperature = 100.0f;  // nearly uniform: the last draw reaches the last word
  CHECK(choose_next(m, logits.data(), sample, 0.9999) == c.vocab_size - 1);
}

TEST_CASE("generation is greedy at temperature 0 and repeatable with a seed", "[generate]") {
  const Model m = testing::random_model(testing::small_config(), true, true, 4);
  Predictor predictor(m);
  GenerateOptions o;
  o.max_words = 12;  // more than max_len: the context slides
  o.guard = RepetitionGuard::off();
  const std::vector<int> greedy = generate(predictor, encoded(m, {1, 3}), o);
  // Greedy is the top-1 prediction of the growing window, step after step.
  Encoded text = encoded(m, {1, 3});
  for (int id : greedy) {
    CHECK(predictor.predict(growing_window(m, text), 1).top[0].id == id);
    text.ids.push_back(id);
    text.tokens.emplace_back(m.vocab.word(id));
  }
  o.temperature = 1.5f;
  o.seed = 7;
  const std::vector<int> a = generate(predictor, encoded(m, {1, 3}), o);
  CHECK(generate(predictor, encoded(m, {1, 3}), o) == a);
  o.seed = 8;
  CHECK(generate(predictor, encoded(m, {1, 3}), o) != a);
}

TEST_CASE("past max_len generation reads the window that moves once a sentence", "[generate]") {
  const Model m = load_model(ModelPaths::in_directory(std::string(NEXTWORD_DATA_DIR) + "/stories"));
  Predictor predictor(m);
  GenerateOptions o;
  o.max_words = 200;
  o.guard = RepetitionGuard::off();
  Encoded text = encode(m, "once upon a time , there was a little girl named lily .");
  const std::vector<int> greedy = generate(predictor, text, o);
  const size_t max_len = static_cast<size_t>(m.config.max_len);
  size_t moves = 0, previous_start = 0;
  for (int id : greedy) {
    const Encoded window = growing_window(m, text);
    // The same word as a full pass over the window (the cache's bits), ...
    CHECK(predictor.predict(window, 1).top[0].id == id);
    const size_t start = text.ids.size() - window.ids.size();
    CHECK(std::equal(window.ids.begin(), window.ids.end(), text.ids.begin() + start));
    if (text.ids.size() > max_len) {
      // ... past max_len at least half of it, from just after a sentence end.
      CHECK(window.ids.size() <= max_len);
      CHECK(window.ids.size() >= max_len - max_len / 2);
      if (window.ids.size() < max_len) CHECK(ends_sentence(text.tokens[start - 1]));
    }
    if (start != previous_start) ++moves;
    previous_start = start;
    text.ids.push_back(id);
    text.tokens.emplace_back(m.vocab.word(id));
  }
  REQUIRE(text.ids.size() > max_len + 60);
  CHECK(moves > 0);
  CHECK(moves < 20);  // once a sentence, not once a word (60+ words past max_len)
}
