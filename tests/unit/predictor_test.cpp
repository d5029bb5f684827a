// Batched prediction: phrases of different lengths in one forward pass give
// what each phrase gives alone, and the ranking is a true top k.
#include "predict/predictor.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "base/threading.h"
#include "encoded_input.h"
#include "math/layers.h"
#include "test_models.h"

using namespace nextword;
using testing::encoded;

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

// Records must not depend on how the work is split: the same bits, not merely close ones
// (math/layers.cpp, kRowBlock).
TEST_CASE("a phrase predicts the same bits alone, in a batch and over threads", "[predict]") {
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
  set_threading(Threading::kRows, 1);
  std::vector<Prediction> expected;
  for (const Encoded& e : inputs) expected.push_back(alone.predict(e, 5, true));
  set_threading(Threading::kRows, 2);  // 1,100+ rows: each product is split
  const std::vector<Prediction> batch = together.predict(inputs, 5, true);
  set_threading(Threading::kRows, 1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < 5; ++j) {
      CHECK(batch[i].top[j].id == expected[i].top[j].id);
      CHECK(batch[i].top[j].logit == expected[i].top[j].logit);
      CHECK(batch[i].top[j].probability == expected[i].top[j].probability);
    }
    CHECK(batch[i].attention == expected[i].attention);
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
