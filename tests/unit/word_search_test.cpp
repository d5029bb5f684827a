// predict/word_search.h: whole next words from a subword model, against a
// brute-force enumeration of every spelling on a tiny model (8 pieces), and
// as lower bounds when the beam is narrow.
#include "predict/word_search.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "encoded_input.h"
#include "test_models.h"

using namespace nextword;

namespace {

// <unk>, <s>, </s>; " a", " b" and "," begin a word, "c" and "d" go on one.
const std::vector<std::string> kPieces = {"<unk>", "\n<s>\n", "\n</s>\n", " a",
                                          " b",    "c",       "d",        ","};

Model tiny_subword_model() {
  Config c = testing::small_config();
  c.vocab_size = static_cast<int>(kPieces.size());
  c.n_heads = 2, c.n_kv_heads = 1, c.d_k = 4, c.d_v = 4;
  c.positional = Positional::kRope, c.norm = Norm::kRmsNorm, c.activation = Activation::kSwiglu;
  c.max_len = 12;
  c.tokenizer = {false, false, TokenizerKind::kSentencepiece};
  c.bos_token = kPieces[1];
  Model m = testing::random_model(c, false, false, 3, 1.0f);
  m.vocab = Vocabulary(kPieces);
  return m;
}

// P(next | ids) over the vocabulary, by a full pass (no cache).
std::vector<double> probabilities(const Model& m, const std::vector<int>& ids) {
  Predictor p(m);
  p.predict(testing::encoded(m, ids), 1);
  const std::span<const float> logits = p.logits();
  double z = 0;
  for (float x : logits) z += std::exp(static_cast<double>(x));
  std::vector<double> out;
  for (float x : logits) out.push_back(std::exp(static_cast<double>(x)) / z);
  return out;
}

// Every spelling of up to `depth` pieces after `context`: word -> probability.
std::map<std::string, double> brute_force(const Model& m, const std::vector<int>& context,
                                          int depth) {
  const std::vector<bool> begins = word_beginnings(m);
  std::map<std::string, double> words;
  std::function<void(std::vector<int>, std::string, double)> walk =
      [&](std::vector<int> ids, std::string text, double p) {
        const std::vector<double> next = probabilities(m, ids);
        double ends = 0;
        for (size_t id = 0; id < next.size(); ++id) ends += begins[id] ? next[id] : 0.0;
        words[text.starts_with(' ') ? text.substr(1) : text] += p * ends;
        if (static_cast<int>(ids.size() - context.size()) == depth) return;
        for (size_t id = 0; id < next.size(); ++id) {
          if (begins[id]) continue;
          std::vector<int> longer = ids;
          longer.push_back(static_cast<int>(id));
          walk(longer, text + kPieces[id], p * next[id]);
        }
      };
  const std::vector<double> first = probabilities(m, context);
  for (int id = 3; id < static_cast<int>(kPieces.size()); ++id) {  // the listable beginnings
    if (!begins[static_cast<size_t>(id)]) continue;
    std::vector<int> ids = context;
    ids.push_back(id);
    walk(ids, kPieces[static_cast<size_t>(id)], first[static_cast<size_t>(id)]);
  }
  return words;
}

}  // namespace

TEST_CASE("the word search sums every spelling a brute force finds, or less", "[predict]") {
  const Model m = tiny_subword_model();
  CHECK(word_beginnings(m) == std::vector<bool>{true, true, true, true, true, false, false, true});
  for (const std::vector<int>& context :
       {std::vector<int>{1}, std::vector<int>{1, 3, 5}, std::vector<int>{1, 4, 7, 3, 6, 5}}) {
    const std::map<std::string, double> truth = brute_force(m, context, 3);
    REQUIRE(truth.size() == 3 * (1 + 2 + 4));  // " a", " b", "," then 0 to 2 of "c", "d"
    Predictor p(m);
    const std::vector<NextWord> all =
        next_words(p, testing::encoded(m, context), 100, WordSearch{1000, 3});
    REQUIRE(all.size() == truth.size());
    for (size_t i = 0; i < all.size(); ++i) {
      INFO(all[i].word);
      REQUIRE(truth.count(all[i].word) == 1);
      CHECK(all[i].probability == Approx(truth.at(all[i].word)).epsilon(1e-9));
      if (i > 0) CHECK(all[i - 1].probability >= all[i].probability);
    }
    // A beam of 2: every word it lists at most its whole probability.
    const std::vector<NextWord> narrow =
        next_words(p, testing::encoded(m, context), 100, WordSearch{2, 3});
    CHECK(narrow.size() < all.size());
    for (const NextWord& w : narrow) CHECK(w.probability <= truth.at(w.word) * (1 + 1e-12));
    // The top 3 are the first 3 of the whole list.
    const std::vector<NextWord> top = next_words(p, testing::encoded(m, context), 3, {1000, 3});
    REQUIRE(top.size() == 3);
    for (size_t i = 0; i < 3; ++i) CHECK(top[i].word == all[i].word);
  }
}
