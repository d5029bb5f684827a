// The repetition guard: the words it bans and the logits it lowers, worked
// by hand on short texts of ids, for a model of words and one of pieces; and
// generation under it, step by step against the whole row with the ban
// applied by hand.
#include "predict/repetition.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "encoded_input.h"
#include "model/model_file.h"
#include "predict/generate.h"
#include "predict/ranking.h"
#include "test_models.h"

using namespace nextword;
using testing::encoded;

namespace {

RepetitionGuard guard(int ngram, float penalty = 0.0f, int window = 256) {
  return {.ngram = ngram, .penalty = penalty, .window = window};
}

// The ids below 12 the verdict bans, and those it penalizes.
std::vector<int> banned(const Repetition& r) {
  std::vector<int> ids;
  for (int id = 0; id < 12; ++id) {
    if (r.banned(id)) ids.push_back(id);
  }
  return ids;
}

std::vector<int> penalized(const Repetition& r) {
  std::vector<int> ids;
  for (int id = 0; id < 12; ++id) {
    if (r.penalized(id)) ids.push_back(id);
  }
  return ids;
}

}  // namespace

TEST_CASE("Repetition: a word that would repeat a run of n words is banned", "[repetition]") {
  Repetition r(guard(3));
  // "<bos> a b c a b": the last 2 words "a b" stood before, followed by c.
  r.look(std::vector<int>{1, 5, 6, 7, 5, 6});
  CHECK(banned(r) == std::vector<int>{7});
  CHECK(r.touches(7));
  CHECK_FALSE(r.touches(5));
  std::vector<float> row(12, 3.0f);
  r.apply(row);
  CHECK(row[7] == -std::numeric_limits<float>::infinity());
  CHECK(row[8] == 3.0f);
  // "a b c a b d a b": "a b" was followed by c and by d.
  r.look(std::vector<int>{1, 5, 6, 7, 5, 6, 8, 5, 6});
  CHECK(banned(r) == std::vector<int>{7, 8});
  // No run of 2 words stands twice yet: nothing is banned.
  r.look(std::vector<int>{1, 5, 6, 7, 6, 5});
  CHECK(banned(r).empty());
  // Bigrams: after "... b" every word that followed b before.
  Repetition two(guard(2));
  two.look(std::vector<int>{1, 5, 6, 5, 7, 5});
  CHECK(banned(two) == std::vector<int>{6, 7});
  // Unigrams: every word seen.
  Repetition one(guard(1));
  one.look(std::vector<int>{1, 9, 5, 9});
  CHECK(banned(one) == std::vector<int>{1, 5, 9});
  // The window: with 4 tokens, the earlier "a b c" is out of sight.
  Repetition near(guard(3, 0.0f, 4));
  near.look(std::vector<int>{1, 5, 6, 7, 8, 9, 5, 6});
  CHECK(banned(near).empty());
  near.look(std::vector<int>{1, 8, 9, 5, 6, 7, 5, 6});
  CHECK(banned(near).empty());  // in sight "6 7 5 6": "5 6" only once
  Repetition wide(guard(3, 0.0f, 5));
  wide.look(std::vector<int>{1, 8, 9, 5, 6, 7, 5, 6});
  CHECK(banned(wide) == std::vector<int>{7});
}

TEST_CASE("Repetition: the penalty lowers the logits of the window's words", "[repetition]") {
  Repetition r(guard(0, 1.5f, 3));
  r.look(std::vector<int>{1, 5, 6, 7, 6});
  CHECK(penalized(r) == std::vector<int>{6, 7});  // the last 3 tokens: 6 7 6
  CHECK(banned(r).empty());
  CHECK(r.touches(6));
  CHECK_FALSE(r.touches(5));  // out of the window
  std::vector<float> logits{0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 2.0f, -1.0f, 8.0f};
  r.apply(logits);
  CHECK(logits == std::vector<float>{0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 0.5f, -2.5f, 8.0f});
  // Both at once: banned stays banned.
  Repetition both(guard(2, 1.0f));
  both.look(std::vector<int>{1, 5, 6, 5});
  CHECK(banned(both) == std::vector<int>{6});
  CHECK(penalized(both) == std::vector<int>{1, 5, 6});
  std::vector<float> row(8, 1.0f);
  both.apply(row);
  CHECK(row[5] == 0.0f);
  CHECK(std::isinf(row[6]));
  CHECK(row[7] == 1.0f);
  CHECK_FALSE(RepetitionGuard::off().on());
  CHECK(RepetitionGuard{}.on());
}

TEST_CASE("Repetition: a model of pieces repeats words, by their text", "[repetition]") {
  // Pieces: <unk>, <s>, " a", " b", " c", "x", "y", "\n", "c", " ", " ax",
  // "a"; " a", " b", " c", "\n", " " and " ax" begin a word, "c" writes what
  // " c" does after a space, and " ax" what " a" "x" do; "\n" and " " are
  // white space alone, and the controls no word.
  const std::vector<bool> begins{true,  true, true,  true, true, false,
                                 false, true, false, true, true, false};
  const std::vector<std::string> texts{"", "", "a", "b", "c", "x", "y", "", "c", "", "ax", "a"};
  Repetition r(guard(3), begins, texts);
  // Words "ax b c ax b": the last 2 words stood before, followed by " c".
  r.look(std::vector<int>{1, 2, 5, 3, 4, 2, 5, 3});
  CHECK(banned(r) == std::vector<int>{4});  // not "c", which would go on with "b"
  // Words "ax by c ax b": the earlier "b" was the word "by": nothing stood before.
  r.look(std::vector<int>{1, 2, 5, 3, 6, 4, 2, 5, 3});
  CHECK(banned(r).empty());
  // Counted as pieces, "x b" stood before, followed by "y", inside a word.
  Repetition pieces(guard(3));
  pieces.look(std::vector<int>{1, 2, 5, 3, 6, 4, 2, 5, 3});
  CHECK(banned(pieces) == std::vector<int>{6});
  // "ax" in one piece is the word "ax" in two.
  r.look(std::vector<int>{1, 2, 5, 3, 4, 10, 3});
  CHECK(banned(r) == std::vector<int>{4});
  // Words "ax b", then "c" after a line break: the same word as " c".
  r.look(std::vector<int>{1, 2, 5, 3, 7, 8, 2, 5, 3});
  CHECK(banned(r) == std::vector<int>{4});
  // After a line break the next word's letters may come with or without a
  // space: both are banned.
  r.look(std::vector<int>{1, 2, 5, 3, 7, 8, 2, 5, 3, 7});
  CHECK(banned(r) == std::vector<int>{4, 8});
  r.look(std::vector<int>{1, 2, 5, 3, 4, 2, 5, 3, 9});
  CHECK(banned(r) == std::vector<int>{4, 8});
  // Words "cx b a ax b": "x b" stood before, but in "cx b", not "ax b".
  r.look(std::vector<int>{1, 4, 5, 3, 2, 2, 5, 3});
  CHECK(banned(r).empty());
  // The row: banned pieces to -infinity, the rest as they were.
  r.look(std::vector<int>{1, 2, 5, 3, 4, 2, 5, 3, 9});
  std::vector<float> row(12, 1.0f);
  r.apply(row);
  for (size_t id = 0; id < row.size(); ++id) {
    CHECK(row[id] == (id == 4 || id == 8 ? -std::numeric_limits<float>::infinity() : 1.0f));
  }
}

TEST_CASE("Repetition: stories260K's words, after a space, a line break or a curly quote",
          "[repetition][shared]") {
  const Model m = load_model(
      ModelPaths::in_directory(std::string(NEXTWORD_SHARED_MODELS_DIR) + "/gguf/stories260K.gguf"));
  // The piece that writes the first letters of "know" after a space.
  const std::vector<int> know = m.subword->encode("know");
  REQUIRE(m.subword->text(know[0]) == " k");
  const Repetition r = [&] {
    Repetition guarded = Repetition::of(guard(4), m);
    // "I didn't" twice, the second time after a line break and in curly
    // marks: the same three words, which went on with "know" before.
    guarded.look(encode(m, "He said, \"I didn't know.\"\n“I didn’t").ids);
    return guarded;
  }();
  CHECK(r.banned(know[0]));
  CHECK_FALSE(r.banned(m.subword->encode("go")[0]));
  // Counted as pieces, the curly marks are other pieces: nothing stood before.
  Repetition pieces(guard(4));
  pieces.look(encode(m, "He said, \"I didn't know.\"\n“I didn’t").ids);
  for (int id = 0; id < m.config.vocab_size; ++id) CHECK_FALSE(pieces.banned(id));
}

namespace {

// The best word of `logits` that the last ngram - 1 tokens of `text` do not
// ban, found without Repetition: each earlier place those tokens stand bans
// the token after it.
int best_allowed(const Model& m, std::vector<float> logits, const std::vector<int>& text,
                 int ngram) {
  const size_t key = static_cast<size_t>(ngram - 1);
  for (size_t p = 0; p + key < text.size(); ++p) {
    if (std::equal(text.end() - static_cast<long>(key), text.end(),
                   text.begin() + static_cast<long>(p))) {
      logits[static_cast<size_t>(text[p + key])] = -std::numeric_limits<float>::infinity();
    }
  }
  std::vector<int> top;
  rank_top(m, logits.data(), 1, top);
  return top[0];
}

}  // namespace

TEST_CASE("Generation under the guard takes the best word it allows", "[repetition]") {
  // Eleven words loop soon when greedy; the guard bans bigrams twice.
  const Model m = testing::random_model(testing::small_config(), true, true, 4);
  Predictor predictor(m);
  GenerateOptions o;
  o.max_words = 9;
  o.guard = guard(2);
  const std::vector<int> guarded = generate(predictor, encoded(m, {1, 3}), o);
  o.guard = RepetitionGuard::off();
  const std::vector<int> plain = generate(predictor, encoded(m, {1, 3}), o);
  CHECK(guarded != plain);  // greedy repeats a bigram within 9 words here
  Encoded text = encoded(m, {1, 3});
  for (const int id : guarded) {
    const std::vector<Encoded> one{growing_window(m, text)};
    const std::span<const float> row = predictor.next_logits(std::span<const Encoded>(one));
    CHECK(id == best_allowed(m, {row.begin(), row.end()}, text.ids, 2));
    text.ids.push_back(id);
    text.tokens.emplace_back(m.vocab.word(id));
  }
  // No bigram of the whole text twice.
  for (size_t i = 1; i + 1 < text.ids.size(); ++i) {
    for (size_t j = i + 1; j + 1 < text.ids.size(); ++j) {
      CHECK_FALSE((text.ids[i] == text.ids[j] && text.ids[i + 1] == text.ids[j + 1]));
    }
  }
}

TEST_CASE("Sampling under the guard never draws a banned word", "[repetition]") {
  Config c = testing::small_config();
  const Model m = testing::random_model(c, false, false, 1);
  // Word 2 holds nearly all the probability, and the guard bans it.
  std::vector<float> logits(static_cast<size_t>(c.vocab_size), 0.0f);
  logits[2] = 20.0f;
  Repetition r(guard(2));
  r.look(std::vector<int>{1, 4, 2, 4});
  REQUIRE(banned(r) == std::vector<int>{2});
  r.apply(logits);
  GenerateOptions sample;
  sample.temperature = 1.0f;
  // The rest are equal: the draw walks them in id order, 3 first.
  for (const double u : {0.0, 0.3, 0.6, 0.999}) {
    const int id = choose_next(m, logits.data(), sample, u);
    CHECK(id != 2);
    CHECK(id == 3 + static_cast<int>(u * (c.vocab_size - 3)));
  }
}
