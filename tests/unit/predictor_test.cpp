// Batched prediction: phrases of different lengths in one forward pass give
// what each phrase gives alone, and the ranking is a true top k.
#include "predict/predictor.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "base/threading.h"
#include "math/layers.h"
#include "predict/generate.h"
#include "test_models.h"

using namespace nextword;

namespace {

Encoded encoded(const Model& m, std::vector<int> ids) {
  Encoded e;
  for (int id : ids) e.tokens.push_back(m.vocab.word(id));
  e.ids = std::move(ids);
  return e;
}

}  // namespace

TEST_CASE("a batch of phrases predicts what each phrase predicts alone", "[predict]") {
  Config c = testing::small_config();
  c.max_len = 40;
  c.vocab_size = 50;
  const Model m = testing::random_model(c, true, true, 11);
  std::vector<std::vector<int>> phrases;
  for (int length : {1, 5, 40, 2, 17, 3, 3, 29}) {
    std::vector<int> ids{1};  // bos
    for (int t = 1; t < length; ++t) ids.push_back(2 + (t * 7 + length) % 48);
    phrases.push_back(ids);
  }
  const int k = c.vocab_size;  // every word: the whole distribution is compared
  Predictor alone(m), together(m);
  std::vector<Encoded> inputs;
  for (const auto& ids : phrases) inputs.push_back(encoded(m, ids));
  const std::vector<Prediction> batch = together.predict(inputs, k, true);
  REQUIRE(batch.size() == phrases.size());
  for (size_t i = 0; i < phrases.size(); ++i) {
    INFO("phrase " << i << " of " << phrases[i].size() << " tokens");
    const Prediction one = alone.predict(encoded(m, phrases[i]), k, true);
    CHECK(batch[i].input.ids == phrases[i]);
    REQUIRE(batch[i].top.size() == one.top.size());
    for (size_t j = 0; j < one.top.size(); ++j) {
      CHECK(batch[i].top[j].logit == Approx(one.top[j].logit).margin(1e-5));
      CHECK(batch[i].top[j].probability == Approx(one.top[j].probability).margin(1e-6));
    }
    REQUIRE(batch[i].attention.size() == one.attention.size());
    for (size_t j = 0; j < one.attention.size(); ++j) {
      CHECK(batch[i].attention[j] == Approx(one.attention[j]).margin(1e-6));
    }
  }
}

TEST_CASE("the top k is sorted, excludes special tokens and sums to what softmax says",
          "[predict]") {
  const Model m = testing::random_model(testing::small_config(), false, true, 5);
  Predictor predictor(m);
  const Prediction all = predictor.predict(encoded(m, {1, 3, 4}), 100);
  REQUIRE(all.top.size() == static_cast<size_t>(m.config.vocab_size - 2));  // no unk, no bos
  double total = 0;
  for (size_t j = 0; j < all.top.size(); ++j) {
    CHECK(all.top[j].id > 1);
    if (j > 0) CHECK(all.top[j - 1].logit >= all.top[j].logit);
    total += all.top[j].probability;
  }
  // The specials hold the rest of the mass: softmax over the whole vocabulary.
  const auto logits = predictor.logits();
  double z = 0;
  for (float logit : logits) z += std::exp(static_cast<double>(logit));
  CHECK(total == Approx(1.0 - (std::exp(logits[0]) + std::exp(logits[1])) / z).epsilon(1e-5));
  const Prediction three = predictor.predict(encoded(m, {1, 3, 4}), 3);
  REQUIRE(three.top.size() == 3);
  for (size_t j = 0; j < 3; ++j) CHECK(three.top[j].id == all.top[j].id);
}

TEST_CASE("splitting the products' rows over threads changes no prediction", "[predict]") {
  Config c = testing::small_config();
  c.vocab_size = 300;
  c.d_model = 64;
  c.d_k = c.d_v = 32;
  c.d_ff = 256;
  c.max_len = 24;
  const Model m = testing::random_model(c, true, false, 3, 0.1f);
  std::vector<Encoded> inputs;
  for (int i = 0; i < 64; ++i) {
    std::vector<int> ids{1};
    for (int t = 1; t < 4 + i % 20; ++t) ids.push_back(2 + (t * 31 + i * 7) % 298);
    inputs.push_back(encoded(m, ids));
  }
  Predictor alone(m), together(m);
  set_threading(Threading::kBlas, 2);
  std::vector<Prediction> expected;
  for (const Encoded& e : inputs) expected.push_back(alone.predict(e, 5));
  set_threading(Threading::kRows, 2);  // 1,100+ rows: each product is split
  const std::vector<Prediction> batch = together.predict(inputs, 5);
  set_threading(Threading::kBlas, 2);
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < 5; ++j) {
      CHECK(batch[i].top[j].id == expected[i].top[j].id);
      CHECK(batch[i].top[j].logit == Approx(expected[i].top[j].logit).margin(1e-5));
    }
  }
}

TEST_CASE("the fused QKV product predicts what three products do", "[predict]") {
  for (const bool biases : {false, true}) {
    Model m = testing::random_model(testing::small_config(), biases, false, 9);
    Predictor predictor(m);
    const Prediction three = predictor.predict(encoded(m, {1, 4, 2, 7, 3}), 11, true);
    m.weights.fuse_qkv(m.config);
    REQUIRE(m.weights.layers[0].w_qkv != nullptr);
    CHECK((m.weights.layers[0].b_qkv != nullptr) == biases);
    const Prediction fused = predictor.predict(encoded(m, {1, 4, 2, 7, 3}), 11, true);
    for (size_t j = 0; j < three.top.size(); ++j) {
      CHECK(fused.top[j].id == three.top[j].id);
      CHECK(fused.top[j].logit == Approx(three.top[j].logit).margin(1e-6));
    }
    for (size_t j = 0; j < three.attention.size(); ++j) {
      CHECK(fused.attention[j] == Approx(three.attention[j]).margin(1e-6));
    }
    // A writable pointer could change W_q behind the copy: the copy is dropped.
    m.weights.values()[0] += 1.0f;
    CHECK(m.weights.layers[0].w_qkv == nullptr);
  }
}

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
  const std::vector<int> greedy = generate(predictor, encoded(m, {1, 3}), o);
  // Greedy is the top-1 prediction, step after step.
  std::vector<int> context{1, 3};
  for (int id : greedy) {
    CHECK(predictor.predict(encoded(m, context), 1).top[0].id == id);
    context.push_back(id);
    if (context.size() > static_cast<size_t>(m.config.max_len)) context.erase(context.begin());
  }
  o.temperature = 1.5f;
  o.seed = 7;
  const std::vector<int> a = generate(predictor, encoded(m, {1, 3}), o);
  CHECK(generate(predictor, encoded(m, {1, 3}), o) == a);
  o.seed = 8;
  CHECK(generate(predictor, encoded(m, {1, 3}), o) != a);
}
