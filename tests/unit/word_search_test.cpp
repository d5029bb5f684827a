// predict/word_search.h: whole next words from a subword model, against a
// brute-force enumeration of every spelling on a tiny model (8 pieces), and
// as lower bounds when the beam is narrow; the partial words of a depth run
// side by side give the same bits as run one at a time.
#include "predict/word_search.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <map>

#include "base/threading.h"
#include "encoded_input.h"
#include "predict/word_scores.h"
#include "test_models.h"

using namespace nextword;

namespace {

// <unk>, <s>, </s>; " a", " b" and "," begin a word, "c" and "d" go on one.
const std::vector<std::string> kPieces = {"<unk>", "\n<s>\n", "\n</s>\n", " a",
                                          " b",    "c",       "d",        ","};

// Pieces as a tokenizer gives them: ids 0 to 2 are its control pieces.
class TablePieces : public PieceTokenizer {
 public:
  explicit TablePieces(std::vector<std::string> pieces)
      : PieceTokenizer({0, 1, 2, true}), pieces_(std::move(pieces)) {}
  int size() const override { return static_cast<int>(pieces_.size()); }
  const std::string& piece(int id) const override { return pieces_[static_cast<size_t>(id)]; }
  std::vector<int> encode(std::string_view) const override { return {}; }
  std::string decode(int, int token) const override { return piece(token); }
  std::string text(int id) const override { return piece(id); }
  bool is_control(int id) const override { return id <= 2; }

 private:
  std::vector<std::string> pieces_;
};

// A random subword model of these pieces (grouped-query attention, rotary
// positions, swiglu), whose window is max_len pieces.
Model subword_model(const std::vector<std::string>& pieces, int max_len) {
  Config c = testing::small_config();
  c.vocab_size = static_cast<int>(pieces.size());
  c.n_heads = 2, c.n_kv_heads = 1, c.d_k = 4, c.d_v = 4;
  c.positional = Positional::kRope, c.norm = Norm::kRmsNorm, c.activation = Activation::kSwiglu;
  c.max_len = max_len;
  c.tokenizer = {false, false, TokenizerKind::kSentencepiece};
  c.bos_token = pieces[1];
  Model m = testing::random_model(c, false, false, 3, 1.0f);
  m.vocab = Vocabulary(pieces);
  m.subword = std::make_shared<const TablePieces>(pieces);
  return m;
}

Model tiny_subword_model() { return subword_model(kPieces, 12); }

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

TEST_CASE("a typed prefix keeps the words that start with it, with the same probabilities",
          "[predict]") {
  const Model m = tiny_subword_model();
  const std::vector<int> context{1, 3, 5};
  const std::map<std::string, double> truth = brute_force(m, context, 3);
  Predictor p(m);
  // "a", "ac", "ad", "acc", ... start with "a"; "ac" is one piece more; "A"
  // is "a" to ASCII folding; "c" starts no word (it goes on one).
  for (const auto& [prefix, expected] : std::vector<std::pair<std::string, size_t>>{
           {"a", 7}, {"A", 7}, {"ac", 3}, {"acd", 1}, {"c", 0}, {"bd", 3}, {",", 7}}) {
    INFO(prefix);
    const std::vector<NextWord> words =
        next_words(p, testing::encoded(m, context), 100, WordSearch{1000, 3}, prefix);
    CHECK(words.size() == expected);
    std::string folded = prefix;
    for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const NextWord& w : words) {
      INFO(w.word);
      CHECK(w.word.starts_with(folded));
      REQUIRE(truth.count(w.word) == 1);
      CHECK(w.probability == Approx(truth.at(w.word)).epsilon(1e-9));
    }
  }
}

TEST_CASE("score's words join a subword stream's pieces and sum their log-probabilities",
          "[predict]") {
  const Model m = tiny_subword_model();
  // <s> " a" "c" "," " b" "d" "d" " a"
  const std::vector<int> ids{1, 3, 5, 7, 4, 6, 6, 3};
  std::vector<std::string> tokens;
  for (const int id : ids) tokens.emplace_back(m.vocab.word(id));
  std::vector<TokenScore> scores;
  for (int t = 1; t < static_cast<int>(ids.size()); ++t) scores.push_back({t, -0.5 * t, t});
  std::vector<WordScore> words = word_scores(m, tokens, ids, scores);
  REQUIRE(words.size() == 4);
  CHECK(words[0].word == "ac");
  CHECK(words[0].ids == std::vector<int>{3, 5});
  CHECK(words[0].logprob == -0.5 * (1 + 2));
  CHECK(words[1].word == ",");
  CHECK(words[1].position == 3);
  CHECK(words[2].word == "bdd");
  CHECK(words[2].logprob == -0.5 * (4 + 5 + 6));
  CHECK(words[3].word == "a");
  // Ranks from the search: the word's place among the words it lists.
  Predictor p(m);
  rank_words(p, ids, words);
  for (const WordScore& w : words) {
    INFO(w.word);
    Encoded context = testing::encoded(m, std::vector<int>(ids.begin(), ids.begin() + w.position));
    const std::vector<NextWord> listed = next_words(p, context, 1000);
    size_t at = 0;
    while (at < listed.size() && listed[at].word != w.word) ++at;
    CHECK(w.rank == static_cast<int>(at) + 1);
    CHECK(at < listed.size());
  }
}

namespace {

// The words of a search side by side and of one a piece at a time, the
// same bits.
void same_search(const Model& m, const std::vector<int>& context, const WordSearch& search,
                 const std::string& prefix) {
  INFO("context of " << context.size() << " pieces, prefix \"" << prefix << "\"");
  Predictor side(m), alone(m);
  // The search side by side is the one these run.
  side.next_logits(testing::encoded(m, context));
  REQUIRE(side.start_branches(testing::encoded(m, context)));
  WordSearch one_at_a_time = search;
  one_at_a_time.side_by_side = false;
  const std::vector<NextWord> got = next_words(side, testing::encoded(m, context), 1000, search,
                                               prefix),
                              want = next_words(alone, testing::encoded(m, context), 1000,
                                                one_at_a_time, prefix);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(want[i].word);
    CHECK(got[i].word == want[i].word);
    CHECK(got[i].probability == want[i].probability);
  }
}

// A word typed a letter at a time (searches on one predictor, whose
// tree of partial words grows from search to search on the same context):
// each search's words are a new predictor's, bit for bit. `prefixes` may
// change the context between them (an empty one: the second context).
void typed_searches(const Model& m, const std::vector<int>& context, const std::vector<int>& other,
                    const std::vector<std::string>& prefixes) {
  Predictor typing(m);
  bool first = true;
  for (const std::string& prefix : prefixes) {
    if (prefix.empty()) first = !first;
    const std::vector<int>& ids = first ? context : other;
    INFO("context of " << ids.size() << " pieces, prefix \"" << prefix << "\"");
    Predictor fresh(m);
    const std::vector<NextWord> got =
                                    next_words(typing, testing::encoded(m, ids), 1000, {}, prefix),
                                want =
                                    next_words(fresh, testing::encoded(m, ids), 1000, {}, prefix);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO(want[i].word);
      CHECK(got[i].word == want[i].word);
      CHECK(got[i].probability == want[i].probability);
    }
  }
}

}  // namespace

TEST_CASE("the search side by side lists the words of one at a time, bit for bit", "[predict]") {
  // The tiny model, every spelling in the beam or two of them a depth.
  const Model tiny = tiny_subword_model();
  for (const std::vector<int>& context : {std::vector<int>{1}, std::vector<int>{1, 4, 7, 3, 6}}) {
    same_search(tiny, context, WordSearch{1000, 3}, "");
    same_search(tiny, context, WordSearch{2, 3}, "");
    same_search(tiny, context, WordSearch{1000, 3}, "ac");
  }
  // 65 pieces: a beam of 16 a depth out of hundreds, 8 deep, up to the window's end.
  std::vector<std::string> pieces(kPieces.begin(), kPieces.begin() + 3);
  for (char c = 'a'; c <= 'z'; ++c) {
    pieces.push_back(std::string(" ") + c);
    pieces.push_back(std::string(1, c) + (c < 'n' ? "e" : ""));
  }
  for (const char* mark : {",", ".", "!", "?", " the", " and", " of", " to", " in", "ing"}) {
    pieces.emplace_back(mark);
  }
  const Model m = subword_model(pieces, 20);
  for (int threads : {1, 2}) {
    set_threading(Threading::kRows, threads);
    for (const std::vector<int>& context :
         {std::vector<int>{1}, std::vector<int>{1, 3, 6, 60, 9}, std::vector<int>(12, 20)}) {
      same_search(m, context, WordSearch{}, "");
      same_search(m, context, WordSearch{}, "b");
      same_search(m, context, WordSearch{4, 5}, "");
    }
    typed_searches(m, {1, 3, 6, 60, 9}, {1, 3, 6, 60},
                   {"t", "th", "the", "", "t", "to", "", "th", "b", "be"});
  }
  set_threading(Threading::kRows, 1);
}

TEST_CASE("stories260K: the search side by side lists the words of one at a time",
          "[predict][shared]") {
  const Model m = load_model(
      ModelPaths::in_directory(std::string(NEXTWORD_SHARED_MODELS_DIR) + "/gguf/stories260K.gguf"));
  for (const char* text : {"Once upon a time", "The little girl said, \"I want to", "He was"}) {
    const std::vector<int> ids = encode(m, text).ids;
    same_search(m, ids, WordSearch{}, "");
    same_search(m, ids, WordSearch{}, "s");
  }
  typed_searches(m, encode(m, "Once upon a time").ids, encode(m, "He was").ids,
                 {"t", "th", "the", "", "s", "sa", "", "ther", "s"});
}
