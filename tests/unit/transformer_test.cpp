// The attention article's example, end to end through the engine: in the
// hand-written model data/examples/fruit, 2-D embeddings (fruit, tech) and
// identity projections make one layer compute softmax(X X^T) X, so "banana"
// pulls "apple" toward fruit and "phone" pulls it toward tech.
#include <catch2/catch.hpp>
#include <cmath>

#include "model/model_file.h"
#include "predict/predictor.h"
#include "test_models.h"

using namespace nextword;

using testing::fruit;

TEST_CASE("banana pulls apple toward fruit", "[article]") {
  Predictor predictor(fruit());
  const Prediction p = predictor.predict("banana apple", 5, true);
  // X = [banana; apple] = [[2,0],[1,1]]; X X^T = [[4,2],[2,2]]. Causal, so
  // banana sees itself only, and apple's scores [2,2] give A = [.5,.5].
  REQUIRE(p.attention.size() == 4);
  CHECK(p.attention[0] == 1.0f);
  CHECK(p.attention[1] == 0.0f);
  CHECK(p.attention[2] == Approx(0.5));
  CHECK(p.attention[3] == Approx(0.5));
  // apple' = .5 [2,0] + .5 [1,1] = [1.5, .5]. Classifier rows pie [2,0] and
  // store [0,2], the others zero: logits pie 3, store 1, others 0.
  const auto& logits = predictor.logits();
  CHECK(logits[4] == Approx(3.0));
  CHECK(logits[5] == Approx(1.0));
  CHECK(logits[1] == 0.0f);
  // p(pie) = e^3 / (e^3 + e + 4 e^0); <unk> has a logit too but is never listed.
  const double sum = std::exp(3.0) + std::exp(1.0) + 4.0;
  REQUIRE(p.top.size() == 5);
  CHECK(fruit().vocab.word(p.top[0].id) == "pie");
  CHECK(p.top[0].probability == Approx(std::exp(3.0) / sum));
  CHECK(fruit().vocab.word(p.top[1].id) == "store");
  CHECK(p.top[1].probability == Approx(std::exp(1.0) / sum));
  CHECK(p.top[2].probability == Approx(1.0 / sum));
  for (const Candidate& c : p.top) CHECK(c.id != fruit().unk_id);
}

TEST_CASE("phone pulls apple toward tech", "[article]") {
  Predictor predictor(fruit());
  const Prediction p = predictor.predict("phone apple", 2);
  // apple' = .5 [0,2] + .5 [1,1] = [.5, 1.5]: store 3, pie 1.
  CHECK(fruit().vocab.word(p.top[0].id) == "store");
  CHECK(p.top[0].logit == Approx(3.0));
  CHECK(fruit().vocab.word(p.top[1].id) == "pie");
}

TEST_CASE("apple alone is undecided", "[article]") {
  Predictor predictor(fruit());
  const Prediction p = predictor.predict("Apple", 2);
  // [1,1]: pie and store both score 2; p = e^2 / (2 e^2 + 4).
  const double expected = std::exp(2.0) / (2 * std::exp(2.0) + 4);
  CHECK(p.top[0].probability == Approx(expected));
  CHECK(p.top[1].probability == Approx(expected));
  CHECK(p.top[0].id == 4);  // ties break toward the smaller id
}
