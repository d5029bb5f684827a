// The key/value cache (transformer/cache.h): a text run word by word, or a
// few words at a time, through the cache gives the same bits as a full pass
// over the whole text, for every causal fixture model (each positional,
// norm and activation of format v1), the default model and the one before it,
// a model with grouped-query attention and two with QK-norm; and branches,
// continuations of a text side by side, each row as that continuation's
// full pass.
#include "transformer/cache.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "base/threading.h"
#include "encoded_input.h"
#include "predict/predictor.h"
#include "test_models.h"

using namespace nextword;
using testing::encoded;

namespace {

std::vector<Model> causal_models() {
  std::vector<Model> models;
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(NEXTWORD_FIXTURE_DIR) + "/parity")) {
    dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    Model m = load_model(ModelPaths::in_directory(dir.string()));
    if (m.config.causal) models.push_back(std::move(m));
  }
  models.push_back(
      load_model(ModelPaths::in_directory(std::string(NEXTWORD_DATA_DIR) + "/stories")));
  models.push_back(load_model(
      ModelPaths::in_directory(std::string(NEXTWORD_FIXTURE_DIR) + "/previous-default")));
  // Grouped-query attention, with rotary positions: the cache keeps 2 key/value heads for 4.
  Config grouped = testing::small_config();
  grouped.n_heads = 4, grouped.n_kv_heads = 2, grouped.d_k = 4;
  grouped.positional = Positional::kRope;
  models.push_back(testing::random_model(grouped, true, true, 11));
  // QK-norm, with and without rotary positions.
  for (const Positional positional : {Positional::kRope, Positional::kLearned}) {
    Config qk = testing::small_config();
    qk.d_k = 4, qk.qk_norm = true, qk.positional = positional;
    models.push_back(testing::random_model(qk, true, true, 12));
  }
  return models;
}

// A text of `length` tokens made of the vocabulary's ids (bos first).
std::vector<int> text_of(const Model& m, int length) {
  std::vector<int> ids;
  for (int t = 0; t < length; ++t) {
    ids.push_back(t == 0 && m.bos_id >= 0 ? m.bos_id : (t * 7 + 3) % m.config.vocab_size);
  }
  return ids;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A small rotary model whose window of 8 tokens a short text passes.
Config rope_config() {
  Config c = testing::small_config();
  c.positional = Positional::kRope;
  c.d_k = 4;
  c.max_len = 8;
  return c;
}

}  // namespace

TEST_CASE("a text extended through the cache gives a full pass's bits", "[cache]") {
  const std::vector<Model> models = causal_models();
  REQUIRE(models.size() >= 20);
  int checked = 0;
  for (int threads : {1, 2}) {
    set_threading(Threading::kRows, threads);
    for (const Model& m : models) {
      INFO(m.paths.weights << ", " << threads << " threads");
      const std::vector<int> text = text_of(m, m.config.max_len);
      Predictor cached(m), full(m);
      // Word by word, then 3 words at a time: each prefix against a full pass.
      for (int step : {1, 3}) {
        for (size_t n = 1; n <= text.size(); n += static_cast<size_t>(step)) {
          INFO("prefix of " << n << " tokens, " << step << " at a time");
          const Encoded prefix = encoded(m, {text.begin(), text.begin() + n});
          const std::vector<float> got(cached.next_logits(prefix).begin(),
                                       cached.next_logits(prefix).end());
          CHECK(cached.tokens_run() == 0);  // the second call ran nothing new
          full.predict(prefix, 1);
          CHECK(same_bits(got, full.logits()));
          ++checked;
        }
      }
    }
  }
  set_threading(Threading::kRows, 1);
  CHECK(checked > 100);
}

TEST_CASE("the cache runs only the new tokens, or those from the first that changed", "[cache]") {
  set_threading(Threading::kRows, 1);
  Config c = rope_config();
  const Model m = testing::random_model(c, true, true, 5);
  Predictor p(m), full(m);
  std::vector<int> ids = text_of(m, 8);
  p.next_logits(encoded(m, {ids.begin(), ids.begin() + 5}));
  CHECK(p.tokens_run() == 5);
  p.next_logits(encoded(m, {ids.begin(), ids.begin() + 6}));
  CHECK(p.tokens_run() == 1);
  p.next_logits(encoded(m, ids));
  CHECK(p.tokens_run() == 2);
  // The window slides past max_len: the first token goes, every position
  // changes, so the whole window runs again, as a full pass would.
  std::vector<int> slid(ids.begin() + 1, ids.end());
  slid.push_back(4);
  const std::vector<float> got(p.next_logits(encoded(m, slid)).begin(),
                               p.next_logits(encoded(m, slid)).end());
  CHECK(p.tokens_run() == 0);
  full.predict(encoded(m, slid), 1);
  CHECK(same_bits(got, full.logits()));
  // A word typed over (not an extension) runs from the first token that differs.
  slid.back() = 6;
  const std::span<const float> logits = p.next_logits(encoded(m, slid));
  CHECK(p.tokens_run() == 1);
  const std::vector<float> over(logits.begin(), logits.end());
  full.predict(encoded(m, slid), 1);
  CHECK(same_bits(over, full.logits()));
  slid[5] = 2;
  p.next_logits(encoded(m, slid));
  CHECK(p.tokens_run() == 3);
  // A text that is a prefix of the cache's runs its last token again.
  p.next_logits(encoded(m, {slid.begin(), slid.begin() + 4}));
  CHECK(p.tokens_run() == 1);
  // Not causal: no cache, every call a full pass.
  c.causal = false;
  const Model bidirectional = testing::random_model(c, true, true, 5);
  Predictor b(bidirectional);
  b.next_logits(encoded(bidirectional, {ids.begin(), ids.begin() + 5}));
  b.next_logits(encoded(bidirectional, {ids.begin(), ids.begin() + 6}));
  CHECK(b.tokens_run() == 6);
}

TEST_CASE("a growing text's window moves a sentence at a time past max_len", "[cache]") {
  set_threading(Threading::kRows, 1);
  const Model m = testing::random_model(rope_config(), true, true, 7);
  const std::vector<std::string> words{"w2", "w3", ".",   "w4", "w5", "w6", "!",  "w7",
                                       "w8", "w9", "w10", "w2", "w3", "w4", "w5", "w6"};
  // Worked by hand: the last 8 tokens, cut after the first sentence end in
  // their first 4; the tokens each text runs through the cache.
  struct Step {
    size_t words;
    std::string window;
    int run;
  };
  const std::vector<Step> steps{
      {7, "<bos> w2 w3 . w4 w5 w6 !", 8},  // 8 tokens: no cut
      {8, "w4 w5 w6 ! w7", 5},             // w2 w3 . w4 w5 w6 ! w7: after '.'
      {9, "w4 w5 w6 ! w7 w8", 1},          // the same start: the new word alone
      {10, "w4 w5 w6 ! w7 w8 w9", 1},
      {11, "w7 w8 w9 w10", 4},  // '.' left the window: after '!'
      {12, "w7 w8 w9 w10 w2", 1},
      {13, "w7 w8 w9 w10 w2 w3", 1},
      {14, "w7 w8 w9 w10 w2 w3 w4", 1},
      {15, "w7 w8 w9 w10 w2 w3 w4 w5", 1},  // no sentence end: the last 8 (still from w7)
      {16, "w8 w9 w10 w2 w3 w4 w5 w6", 8},  // and every word slides them
  };
  Predictor cached(m), full(m);
  for (const Step& s : steps) {
    std::string text;
    for (size_t i = 0; i < s.words; ++i) text += words[i] + " ";
    INFO(text);
    const Encoded e = encode_growing(m, text);
    std::string window;
    for (const std::string& token : e.tokens) window += (window.empty() ? "" : " ") + token;
    CHECK(window == s.window);
    CHECK(e.unknown.size() ==
          static_cast<size_t>(std::count(e.ids.begin(), e.ids.end(), m.unk_id)));
    const std::span<const float> logits = cached.next_logits(e);
    CHECK(cached.tokens_run() == s.run);
    const std::vector<float> got(logits.begin(), logits.end());
    full.predict(e, 1);
    CHECK(same_bits(got, full.logits()));
  }
}

TEST_CASE("branches grown side by side give each branch's full pass", "[cache]") {
  const std::vector<Model> models = causal_models();
  int checked = 0;
  for (int threads : {1, 2}) {
    set_threading(Threading::kRows, threads);
    for (const Model& m : models) {
      const int V = m.config.vocab_size;
      // Three depths after a trunk of one token, and after one that leaves
      // room for exactly three more.
      for (const int trunk_length : {1, m.config.max_len - 3}) {
        INFO(m.paths.weights << ", " << threads << " threads, trunk of " << trunk_length);
        const std::vector<int> trunk_ids = text_of(m, trunk_length);
        KVCache trunk;
        trunk.extend(m, trunk_ids);
        KVBranches branches;
        branches.clear();
        // Each step: the new branches' parents (none at the first) and tokens;
        // two branches may hold the same tokens.
        using Steps = std::vector<std::pair<std::vector<int>, std::vector<int>>>;
        const Steps steps{{{}, {2 % V, 5 % V, 5 % V}},
                          {{2, 0, 0, 1}, {3 % V, 1 % V, 4 % V, 3 % V}},
                          {{3, 1}, {6 % V, 0}}};
        // A second search on the same trunk: the tree's branches are not run
        // again (the rows each step runs), and every row is still its full pass.
        // (The last step's branch ran in the first search: nothing runs.)
        const Steps again{{{}, {5 % V, 7 % V}}, {{0, 1, 0}, {3 % V, 2 % V, 3 % V}}, {{0}, {6 % V}}};
        const std::vector<std::vector<int>> rows_run{{2, 3, 2}, {1, 1, 0}};
        for (int search = 0; search < 2; ++search) {
          branches.clear();
          std::vector<std::vector<int>> texts(1);
          size_t step = 0;
          for (const auto& [parents, ids] : search == 0 ? steps : again) {
            const std::span<const float> rows = branches.grow(m, trunk, parents, ids);
            // Distinct (parent, token) pairs only; the same ids may meet (V small).
            if (V > 7) CHECK(branches.rows_run() == rows_run[static_cast<size_t>(search)][step]);
            ++step;
            std::vector<std::vector<int>> grown;
            for (size_t b = 0; b < ids.size(); ++b) {
              grown.push_back(texts[parents.empty() ? 0 : static_cast<size_t>(parents[b])]);
              grown.back().push_back(ids[b]);
            }
            texts = grown;
            REQUIRE(rows.size() == ids.size() * static_cast<size_t>(V));
            REQUIRE(branches.count() == static_cast<int>(ids.size()));
            for (size_t b = 0; b < ids.size(); ++b) {
              const std::span<const int> tokens = branches.tokens(static_cast<int>(b));
              CHECK(std::vector<int>(tokens.begin(), tokens.end()) == texts[b]);
              std::vector<int> whole = trunk_ids;
              whole.insert(whole.end(), texts[b].begin(), texts[b].end());
              Predictor full(m);
              full.predict(encoded(m, whole), 1);
              CHECK(same_bits(rows.subspan(b * static_cast<size_t>(V), static_cast<size_t>(V)),
                              full.logits()));
              ++checked;
            }
          }
        }
        CHECK(branches.depth() == 3);
        // Without parents after the first step, or past the window: refused.
        CHECK_THROWS_AS(branches.grow(m, trunk, {}, std::vector<int>{1}), std::logic_error);
        if (trunk_length == m.config.max_len - 3) {
          CHECK_THROWS_AS(branches.grow(m, trunk, std::vector<int>{0}, std::vector<int>{1}),
                          std::logic_error);
        }
        // The branches wrote past the trunk's tokens: the trunk still grows as a full pass.
        std::vector<int> longer = trunk_ids;
        longer.push_back(1 % V);
        const std::span<const float> got = trunk.extend(m, std::vector<int>{longer.back()});
        Predictor full(m);
        full.predict(encoded(m, longer), 1);
        CHECK(same_bits(got, full.logits()));
      }
    }
  }
  set_threading(Threading::kRows, 1);
  CHECK(checked > 400);
}
