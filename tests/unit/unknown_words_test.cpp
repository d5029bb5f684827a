// q(word) for the words outside a vocabulary (predict/unknown_words.h): its
// two parts by hand, and what `score` and `eval` add with it.
#include "predict/unknown_words.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "predict/predictor.h"
#include "predict/scorer.h"
#include "test_models.h"

using namespace nextword;

TEST_CASE("UnknownWords: q's two parts, and the Spelling trained only when asked",
          "[unknown_words]") {
  const Model& m = testing::fruit();
  Lexicon lexicon;
  lexicon.entries = {{"banana", 7}, {"fig", 2}, {"kiwi", 6}};
  UnknownWords words(m, &lexicon);
  CHECK(words.uses_lexicon());
  CHECK(words.lexicon_words() == 2);
  CHECK(words.lexicon_count() == 8);
  CHECK_FALSE(words.spelling_built());
  const Spelling spelling({{"fig", 2}, {"kiwi", 6}}, Spelling::Options{5});
  CHECK(words.log_q("fig") ==
        Approx(std::log(0.5 * 2 / 8 + 0.5 * std::exp(spelling.log_prob("fig")))).epsilon(1e-12));
  CHECK(words.spelling_built());
  CHECK(words.log_q("plum") == Approx(std::log(0.5) + spelling.log_prob("plum")).epsilon(1e-12));
  UnknownWords none(m, nullptr);
  CHECK_FALSE(none.uses_lexicon());
  CHECK(none.log_q("plum") == Approx(testing::uniform_log_q("plum")).epsilon(1e-12));
  // A lexicon of vocabulary words only: q_char untrained.
  Lexicon known;
  known.entries = {{"apple", 3}};
  UnknownWords untrained(m, &known);
  CHECK_FALSE(untrained.uses_lexicon());
  CHECK(untrained.log_q("plum") == Approx(testing::uniform_log_q("plum")).epsilon(1e-12));
}

TEST_CASE("add_spelling adds ln q to the words outside the vocabulary only", "[unknown_words]") {
  const Model& m = testing::fruit();
  // "kiwi" is outside the fruit model's vocabulary; "<unk>" written as such
  // keeps p(unk); the fruit model has no lexicon.tsv, so q is uniform.
  Encoded e;
  e.tokens = {"apple", "kiwi", m.config.unk_token, "banana"};
  for (const std::string& token : e.tokens) {
    const int id = m.vocab.find(token);
    e.ids.push_back(id >= 0 ? id : m.unk_id);
  }
  REQUIRE(m.vocab.find("kiwi") < 0);
  REQUIRE(e.ids[2] == m.unk_id);
  CHECK(spelled_out(m, e.tokens[1], e.ids[1]));
  CHECK_FALSE(spelled_out(m, e.tokens[2], e.ids[2]));
  CHECK_FALSE(spelled_out(m, e.tokens[3], e.ids[3]));
  const std::vector<std::vector<int>> streams{e.ids};
  std::vector<std::vector<TokenScore>> plain, spelled;
  Scorer scorer(m);
  scorer.score(streams, plain);
  scorer.score(streams, spelled);
  std::unique_ptr<UnknownWords> words;
  add_spelling(m, words, e.tokens, e.ids, spelled[0]);
  REQUIRE(words != nullptr);
  CHECK_FALSE(words->uses_lexicon());
  REQUIRE(plain[0].size() == 3);
  CHECK(spelled[0][0].logprob ==
        Approx(plain[0][0].logprob + testing::uniform_log_q("kiwi")).epsilon(1e-12));
  CHECK(spelled[0][1].logprob == plain[0][1].logprob);
  CHECK(spelled[0][2].logprob == plain[0][2].logprob);
  CHECK(spelled[0][0].rank == plain[0][0].rank);
  // A text the vocabulary covers makes no q (and reads no lexicon).
  const Encoded known = encode_text(m, "apple banana");
  std::vector<std::vector<TokenScore>> scores;
  scorer.score(std::vector<std::vector<int>>{known.ids}, scores);
  std::unique_ptr<UnknownWords> none;
  add_spelling(m, none, known.tokens, known.ids, scores[0]);
  CHECK(none == nullptr);
}

TEST_CASE("log_add is ln(e^a + e^b), exact at -infinity", "[unknown_words]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(log_add(std::log(0.25), std::log(0.5)) == Approx(std::log(0.75)).epsilon(1e-15));
  CHECK(log_add(-3.5, -inf) == -3.5);
  CHECK(log_add(-inf, -2.0) == -2.0);
  CHECK(log_add(-1000.0, -1000.0) == Approx(-1000.0 + std::log(2.0)).epsilon(1e-15));
}
