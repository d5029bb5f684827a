// Scoring streams word by word (predict/scorer.h): log-probabilities and
// ranks worked by hand on the fruit model and on a model without layers,
// windows sliding past max_len or strided, a model whose attention is not causal, bos
// targets left out, and many streams in one call against each alone.
#include "predict/scorer.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "encoded_input.h"
#include "predict/predictor.h"
#include "test_models.h"

using namespace nextword;
using testing::fruit;

namespace {

// The floats of the tensor called `name`.
float* tensor(Model& m, const std::string& name) {
  for (size_t t = 0; t < m.weights.tensors().size(); ++t) {
    if (m.weights.tensors()[t].name == name) return m.weights.mutable_data(t);
  }
  FAIL("no tensor " << name);
  return nullptr;
}

std::vector<TokenScore> score_one(const Model& m, const std::vector<int>& stream) {
  Scorer scorer(m);
  std::vector<std::vector<TokenScore>> out;
  scorer.score(std::vector<std::vector<int>>{stream}, out);
  REQUIRE(out.size() == 1);
  return out[0];
}

// What Predictor says of `target` after `context`: ln p and the rank by the
// rule of the spec (non-special words before it: a higher logit, or the
// same logit and a lower id), counted here without predict/ranking.h.
TokenScore predicted(Predictor& predictor, const std::vector<int>& context, int target) {
  const Model& m = predictor.model();
  predictor.predict(testing::encoded(m, context), 1);
  const auto logits = predictor.logits();
  double z = 0;
  for (const float l : logits) z += std::exp(static_cast<double>(l));
  TokenScore s;
  s.logprob = static_cast<double>(logits[static_cast<size_t>(target)]) - std::log(z);
  s.rank = 1;
  const float mine = logits[static_cast<size_t>(target)];
  for (int id = 0; id < m.config.vocab_size; ++id) {
    if (m.is_special(id)) continue;
    const float other = logits[static_cast<size_t>(id)];
    s.rank += other > mine || (other == mine && id < target);
  }
  return s;
}

// Where the context of target t starts with stride S: the stream's start
// for the first max_len targets; after them the window that starts at the
// first multiple of S from which t is at most max_len tokens on (S = 1: the
// last max_len tokens before t).
int window_start(int t, int L, int S) {
  if (t <= L) return 0;
  return (t - L + S - 1) / S * S;
}

// Every target of `stream` (bos excepted) against Predictor on the tokens
// before it from window_start on.
void check_against_predictor(const Model& m, const std::vector<int>& stream,
                             const std::vector<TokenScore>& scores, int stride = 1) {
  Predictor predictor(m);
  const int L = m.config.max_len;
  size_t next = 0;
  for (int t = 1; t < static_cast<int>(stream.size()); ++t) {
    if (stream[static_cast<size_t>(t)] == m.bos_id) continue;
    INFO("target " << t << " of " << stream.size());
    REQUIRE(next < scores.size());
    const TokenScore& got = scores[next++];
    CHECK(got.position == t);
    const auto begin = stream.begin() + window_start(t, L, stride);
    const TokenScore want =
        predicted(predictor, {begin, stream.begin() + t}, stream[static_cast<size_t>(t)]);
    CHECK(got.logprob == Approx(want.logprob).margin(1e-5));
    CHECK(got.rank == want.rank);
  }
  CHECK(next == scores.size());
}

// A stream of `n` ids of words (and unk now and then), bos first when the model has one.
std::vector<int> words_stream(const Model& m, int n, int seed) {
  std::vector<int> s;
  if (m.bos_id >= 0) s.push_back(m.bos_id);
  const int first_word = m.bos_id >= 0 ? 2 : 1;
  for (int i = 0; static_cast<int>(s.size()) < n; ++i) {
    const int r = (i * 7 + seed * 13 + i * i) % (m.config.vocab_size - first_word + 1);
    s.push_back(r == 0 ? m.unk_id : first_word + r - 1);
  }
  return s;
}

}  // namespace

TEST_CASE("score by hand on the fruit model: ln p and rank through the attention", "[scorer]") {
  // fruit has no bos: "banana apple pie" scores apple and pie, not banana.
  const std::vector<TokenScore> s = score_one(fruit(), {2, 1, 4});
  REQUIRE(s.size() == 2);
  // apple after banana: X = [2,0] attends to itself, logits pie 4, the
  // other five 0. apple ties with banana, phone, store and <unk> at 0 and
  // has the lowest id of the words: only pie comes before it.
  CHECK(s[0].position == 1);
  CHECK(s[0].logprob == Approx(-std::log(std::exp(4.0) + 5)).epsilon(1e-6));
  CHECK(s[0].rank == 2);
  // pie after banana apple: apple' = [1.5, .5], logits pie 3, store 1.
  CHECK(s[1].position == 2);
  CHECK(s[1].logprob == Approx(3 - std::log(std::exp(3.0) + std::exp(1.0) + 4)).epsilon(1e-6));
  CHECK(s[1].rank == 1);
  // An unknown word is scored as <unk> (id 0): after banana only pie beats
  // it, and it wins its ties by id, so rank 2; after banana apple pie and
  // store do: rank 3.
  const std::vector<TokenScore> u = score_one(fruit(), {2, 0, 1, 0});
  REQUIRE(u.size() == 3);
  CHECK(u[0].logprob == Approx(-std::log(std::exp(4.0) + 5)).epsilon(1e-6));
  CHECK(u[0].rank == 2);
  CHECK(u[2].rank == 3);
  // A stream of one token, or none, scores nothing.
  CHECK(score_one(fruit(), {2}).empty());
  CHECK(score_one(fruit(), {}).empty());
}

TEST_CASE("score by hand past max_len: the window drops the oldest token", "[scorer]") {
  // phone, then 8 bananas, then pie: max_len is 8.
  std::vector<int> stream{3};
  for (int i = 0; i < 8; ++i) stream.push_back(2);
  stream.push_back(4);
  const std::vector<TokenScore> s = score_one(fruit(), stream);
  REQUIRE(s.size() == 9);
  // Position 8 (a banana) from tokens 0..7, phone and 7 bananas: the last
  // banana's query [2,0] scores phone 0 and each banana 4, so
  // z = (7e^4 [2,0] + [0,2]) / (7e^4 + 1) and the logits are pie 2 z_0,
  // store 2 z_1, the rest 0.
  const double e4 = std::exp(4.0);
  const double pie = 28 * e4 / (7 * e4 + 1), store = 4 / (7 * e4 + 1);
  CHECK(s[7].position == 8);
  CHECK(s[7].logprob == Approx(-std::log(std::exp(pie) + std::exp(store) + 4)).epsilon(1e-6));
  CHECK(s[7].rank == 4);  // pie, store (a little above 0), apple (0, a lower id), banana
  // Position 9 (pie) from tokens 1..8, the 8 bananas alone: phone is out
  // of the window, so z = [2,0] exactly and pie's logit is 4.
  CHECK(s[8].position == 9);
  CHECK(s[8].logprob == Approx(4 - std::log(e4 + 5)).epsilon(1e-6));
  CHECK(s[8].rank == 1);
}

TEST_CASE("score by hand without layers: bos contexts, unk, and bos targets skipped", "[scorer]") {
  // <unk> <bos> w2 w3 w4, d = 2, no layers: the logits of a context are
  // C E[its last token].
  Config c = testing::small_config();
  c.vocab_size = 5;
  c.d_model = 2;
  c.n_layers = 0;
  c.n_heads = 1;
  c.d_k = c.d_v = 1;
  c.d_ff = 0;
  c.max_len = 3;
  c.positional = Positional::kNone;
  c.norm = Norm::kNone;
  Model m = testing::random_model(c, false, false, 1);
  const std::vector<float> E{0, 0, 1, 0, 0, 1, 1, 1, 0, 0};
  const std::vector<float> C{0, 0, 0, 0, 2, 0, 0, 1, 1, 1};
  std::copy(E.begin(), E.end(), tensor(m, "embedding"));
  std::copy(C.begin(), C.end(), tensor(m, "classifier"));
  // Two documents: bos w3 w2 w4 unk | bos w2 w3.
  const std::vector<int> stream =
      document_stream(m, {{"w3", "w2", "w4", "kiwi"}, {}, {"w2", "w3"}});
  REQUIRE(stream == std::vector<int>{1, 3, 2, 4, 0, 1, 2, 3});
  const std::vector<TokenScore> s = score_one(m, stream);
  // Six words; the second bos (position 5) is not a target.
  REQUIRE(s.size() == 6);
  const std::vector<int> positions{1, 2, 3, 4, 6, 7};
  for (size_t i = 0; i < s.size(); ++i) CHECK(s[i].position == positions[i]);
  const double e = std::exp(1.0), e2 = std::exp(2.0);
  // w3 after bos [1,0]: logits (unk, bos, w2, w3, w4) = (0, 0, 2, 0, 1); w2, w4 first.
  CHECK(s[0].logprob == Approx(-std::log(3 + e2 + e)).epsilon(1e-6));
  CHECK(s[0].rank == 3);
  // w2 after w3 [1,1]: (0, 0, 2, 1, 2); w2 wins its tie with w4 by id.
  CHECK(s[1].logprob == Approx(2 - std::log(2 + 2 * e2 + e)).epsilon(1e-6));
  CHECK(s[1].rank == 1);
  // w4 after w2 [0,1]: (0, 0, 0, 1, 1); w3 wins the tie.
  CHECK(s[2].logprob == Approx(1 - std::log(3 + 2 * e)).epsilon(1e-6));
  CHECK(s[2].rank == 2);
  // unk after w4 [0,0]: all equal, p = 1/5, and unk's id 0 wins every tie.
  CHECK(s[3].logprob == Approx(-std::log(5.0)).epsilon(1e-6));
  CHECK(s[3].rank == 1);
  // w2 after the second bos: the window (w4 unk bos) crosses the document end.
  CHECK(s[4].logprob == Approx(2 - std::log(3 + e2 + e)).epsilon(1e-6));
  CHECK(s[4].rank == 1);
  CHECK(s[5].logprob == Approx(1 - std::log(3 + 2 * e)).epsilon(1e-6));
  CHECK(s[5].rank == 1);
}

TEST_CASE("score slides max_len windows: each target as Predictor sees its context", "[scorer]") {
  const Model m = testing::random_model(testing::small_config(), true, true, 21);
  // max_len 6: 25 tokens go through the shared first pass and 18 windows.
  const std::vector<int> stream = words_stream(m, 25, 3);
  int64_t done = -1, total = -1;
  Scorer scorer(m);
  std::vector<std::vector<TokenScore>> out;
  scorer.score(std::vector<std::vector<int>>{stream}, out,
               [&](int64_t d, int64_t n) { done = d, total = n; });
  REQUIRE(out.size() == 1);
  CHECK(out[0].size() == 24);
  CHECK(done == 24);
  CHECK(total == 24);
  check_against_predictor(m, stream, out[0]);
  // Without a bos the first token is context only.
  Config c = testing::small_config();
  c.bos_token.clear();
  const Model plain = testing::random_model(c, false, true, 22);
  const std::vector<int> words = words_stream(plain, 15, 4);
  const std::vector<TokenScore> s = score_one(plain, words);
  CHECK(s.size() == 14);
  check_against_predictor(plain, words, s);
}

TEST_CASE("with a stride, windows S apart score their last S targets", "[scorer]") {
  const Model m = testing::random_model(testing::small_config(), true, true, 23);
  const int L = m.config.max_len;  // 6
  REQUIRE(L == 6);
  // By hand for S = 4: targets 1-6 from the stream's start, 7-10 from the
  // window at 4 (7 read after 3 tokens, 10 after 6), 11-14 from the one at 8.
  CHECK(window_start(6, L, 4) == 0);
  CHECK(window_start(7, L, 4) == 4);
  CHECK(window_start(10, L, 4) == 4);
  CHECK(window_start(11, L, 4) == 8);
  CHECK(window_start(9, L, 1) == 3);
  for (const int stride : {2, 3, 4, 6}) {
    for (const int n : {5, 7, 25, 26, 27}) {
      INFO("stride " << stride << ", " << n << " tokens");
      std::vector<int> stream = words_stream(m, n, stride + n);
      if (n > 20) stream[15] = m.bos_id;  // a bos inside: context, never a target
      Scorer scorer(m);
      std::vector<std::vector<TokenScore>> out;
      int64_t done = -1, total = -1;
      scorer.score(
          std::vector<std::vector<int>>{stream}, out,
          [&](int64_t d, int64_t all) { done = d, total = all; }, stride);
      REQUIRE(out.size() == 1);
      check_against_predictor(m, stream, out[0], stride);
      if (total >= 0) CHECK(done == total);
    }
  }
}

TEST_CASE("a model that is not causal scores each target from its own window only", "[scorer]") {
  Config c = testing::small_config();
  c.causal = false;
  const Model m = testing::random_model(c, true, false, 31);
  // Shorter and longer than max_len (6); a bos inside the stream is skipped.
  std::vector<int> stream = words_stream(m, 14, 5);
  stream[9] = m.bos_id;
  const std::vector<TokenScore> s = score_one(m, stream);
  CHECK(s.size() == 12);
  check_against_predictor(m, stream, s);
  // The context is the tokens before the target, not the whole stream:
  // what follows a target changes nothing.
  std::vector<int> changed = stream;
  changed[5] = changed[5] == 2 ? 3 : 2;
  const std::vector<TokenScore> t = score_one(m, changed);
  for (size_t i = 0; i < 4; ++i) CHECK(t[i].logprob == Approx(s[i].logprob).margin(1e-6));
}

TEST_CASE("several streams in one call score as each alone", "[scorer]") {
  const Model m = testing::random_model(testing::small_config(), true, true, 41);
  Config nc = testing::small_config();
  nc.causal = false;
  const Model non_causal = testing::random_model(nc, true, true, 42);
  for (const Model* model : {&m, &non_causal}) {
    // 400 streams of 0 to 16 tokens: over 2048 tokens, so several passes.
    std::vector<std::vector<int>> streams;
    for (int i = 0; i < 400; ++i) streams.push_back(words_stream(*model, i % 17, i));
    streams[7] = {};
    streams[8] = {model->bos_id};
    Scorer together(*model);
    std::vector<std::vector<TokenScore>> out;
    int64_t total = 0;
    together.score(streams, out, [&](int64_t, int64_t n) { total = n; });
    REQUIRE(out.size() == streams.size());
    int64_t words = 0;
    for (size_t i = 0; i < streams.size(); ++i) {
      INFO("stream " << i << " of " << streams[i].size() << " tokens");
      const std::vector<TokenScore> alone = score_one(*model, streams[i]);
      REQUIRE(out[i].size() == alone.size());
      CHECK(out[i].size() == std::max<size_t>(streams[i].size(), 1) - 1);
      words += static_cast<int64_t>(out[i].size());
      for (size_t j = 0; j < alone.size(); ++j) {
        CHECK(out[i][j].position == alone[j].position);
        CHECK(out[i][j].logprob == Approx(alone[j].logprob).margin(1e-6));
        CHECK(out[i][j].rank == alone[j].rank);
      }
    }
    CHECK(total == words);
    // One stream checked against Predictor too.
    check_against_predictor(*model, streams[16], out[16]);
  }
}
