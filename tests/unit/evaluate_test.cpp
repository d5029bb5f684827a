// Scoring a text (eval/evaluate.h): by hand on a model whose logits are
// all equal, and against an independent computation from Predictor on a
// random model, with contexts sliding past max_len across document ends and
// more positions than one batch; a word outside the vocabulary adds ln q.
#include "eval/evaluate.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "encoded_input.h"
#include "test_models.h"

using namespace nextword;

TEST_CASE("evaluate by hand: every logit 0 gives p = 1/V and ties ranked by id", "[evaluate]") {
  Model m = testing::random_model(testing::small_config(), false, false, 3);
  for (size_t t = 0; t < m.weights.tensors().size(); ++t) {
    std::fill_n(m.weights.mutable_data(t), m.weights.tensors()[t].size(), 0.0f);
  }
  // Stream: bos w2 w3 w2 unk | bos w6 w7 w2; the empty document is skipped.
  const std::vector<Document> documents{{"w2", "w3", "w2", "zzz"}, {}, {"w6", "w7", "w2"}};
  const EvalResult r = evaluate(m, documents);
  CHECK(r.documents == 2);
  CHECK(r.tokens == 7);   // every word, no bos
  CHECK(r.unknown == 1);  // zzz
  // Every target has p = 1/11; the unknown one p(unk) q(zzz), q uniform
  // (a model in memory has no lexicon).
  const double ce = std::log(11.0) - testing::uniform_log_q("zzz") / 7;
  CHECK(r.cross_entropy == Approx(ce).epsilon(1e-12));
  CHECK(r.perplexity() == Approx(std::exp(ce)).epsilon(1e-12));
  // All tied: w2 is first, w2..w6 the first five; unk is always a miss.
  CHECK(r.top1 == 3);  // w2 three times
  CHECK(r.top5 == 5);  // w2 w3 w2 w6 w2; not w7, not unk
  CHECK(r.unknown_rate() == Approx(1.0 / 7));
  CHECK(r.top1_accuracy() == Approx(3.0 / 7));
  CHECK(r.top5_accuracy() == Approx(5.0 / 7));
}

TEST_CASE("evaluate scores what predict says from each context", "[evaluate]") {
  const Model m = testing::random_model(testing::small_config(), true, true, 8);
  const int L = m.config.max_len, V = m.config.vocab_size;
  // 3 documents, 76 words: over two batches of 32 windows of max_len = 6.
  std::vector<Document> documents(3);
  for (int i = 0; i < 76; ++i) {
    const int id = 2 + (i * 7 + i / 5) % 9;
    documents[static_cast<size_t>(i % 3)].push_back(i % 17 == 4 ? "nope"
                                                                : std::string(m.vocab.word(id)));
  }
  // The same stream, scored one context at a time with Predictor.
  std::vector<int> stream;
  for (const Document& document : documents) {
    stream.push_back(m.bos_id);
    for (int id : to_ids(document, m.vocab, m.unk_id, m.bos_id)) stream.push_back(id);
  }
  Predictor predictor(m);
  int64_t tokens = 0, unknown = 0, top1 = 0, top5 = 0;
  double ce = 0;
  for (size_t t = 1; t < stream.size(); ++t) {
    const int target = stream[t];
    if (target == m.bos_id) continue;
    const size_t start = t > static_cast<size_t>(L) ? t - static_cast<size_t>(L) : 0;
    const Prediction p =
        predictor.predict(testing::encoded(m, {stream.begin() + static_cast<std::ptrdiff_t>(start),
                                               stream.begin() + static_cast<std::ptrdiff_t>(t)}),
                          5);
    const auto logits = predictor.logits();
    double z = 0;
    for (int id = 0; id < V; ++id)
      z += std::exp(static_cast<double>(logits[static_cast<size_t>(id)]));
    ce += std::log(z) - logits[static_cast<size_t>(target)];
    if (target == m.unk_id) ce -= testing::uniform_log_q("nope");
    ++tokens;
    unknown += target == m.unk_id;
    top1 += p.top[0].id == target;
    for (const Candidate& c : p.top) top5 += c.id == target;
  }
  REQUIRE(unknown > 0);
  REQUIRE(top5 > top1);
  int64_t done = -1, total = -1;
  const EvalResult r = evaluate(m, documents, [&](int64_t d, int64_t n) { done = d, total = n; });
  CHECK(done == 76);
  CHECK(total == 76);
  CHECK(r.documents == 3);
  CHECK(r.tokens == tokens);
  CHECK(r.tokens == 76);
  CHECK(r.unknown == unknown);
  CHECK(r.top1 == top1);
  CHECK(r.top5 == top5);
  CHECK(r.cross_entropy == Approx(ce / static_cast<double>(tokens)).epsilon(1e-5));
}
