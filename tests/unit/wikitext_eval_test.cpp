// eval --wikitext (eval/wikitext_eval.h): the protocol's total by hand
// from the model's own predictions (Predictor) and a q computed here, on the
// fruit model (no bos: documents back to back) and on a random model with a
// bos (windows sliding past max_len, causal or not); the cache at weight 0
// bit for bit without it, and the cache's mixture by hand at one position.
// The model's ln p here sums e^logit in double; nextword's log_sum_exp sums
// float exponentials (math/layers.h), hence the relative 1e-6.
#include "eval/wikitext_eval.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "base/threading.h"
#include "encoded_input.h"
#include "predict/predictor.h"
#include "test_models.h"

using namespace nextword;
using testing::uniform_log_q;

namespace {

// The fruit model's article: a title, a <unk>, `apple @-@ pie` (one model
// token outside the vocabulary that stands for 3 WikiText tokens), kiwi
// (outside it) three times, a section heading; then a second article.
const char* const kFruitText =
    " = Apple Pie = \n"
    " \n"
    " apple banana <unk> pie kiwi apple @-@ pie kiwi \n"
    " = = Store = = \n"
    " kiwi store \n"
    " = Phone = \n"
    " phone apple <unk> kiwi phone \n";

// ln q of an untrained Spelling: 1/256 for the first byte, 1/257 for each
// other byte and for the end.
// The first token of the window that scores target t (the header's rule).
size_t window_start(const Model& m, size_t t) {
  const auto L = static_cast<size_t>(m.config.max_len), S = std::max<size_t>(1, L / 2);
  if (!m.config.causal) return t > L ? t - L : 0;
  if (t <= L) return 0;
  return S * ((t - L + S - 1) / S);
}

struct Expected {
  double log_prob = 0;   // ln p_model (with ln q for a word outside the vocabulary)
  std::vector<float> h;  // the context vector (empty for no context)
  bool oov = false;
  int top1 = 0, top5 = 0;
};

// Every scored token of `text` as the protocol scores it, one Predictor call
// per token: the model's streams rebuilt here from the documents.
std::vector<Expected> by_hand(const Model& m, const Wikitext& text,
                              const std::map<std::string, double>& log_q) {
  const int V = m.config.vocab_size;
  std::vector<Expected> out;
  std::vector<std::vector<int>> streams;
  std::vector<std::vector<std::pair<const std::string*, bool>>>
      words;  // per position: word, scored
  for (const WikitextDocument& d : text.documents) {
    if (streams.empty() || m.bos_id >= 0) {
      streams.emplace_back();
      words.emplace_back();
      if (m.bos_id >= 0) {
        streams.back().push_back(m.bos_id);
        words.back().emplace_back(nullptr, false);
      }
    }
    for (size_t i = 0; i < d.tokens.size(); ++i) {
      const int id = m.vocab.find(d.tokens[i]);
      streams.back().push_back(id >= 0 && !m.is_special(id) ? id : m.unk_id);
      words.back().emplace_back(&d.tokens[i], d.scored[i] != 0);
    }
  }
  Predictor predictor(m);
  for (size_t s = 0; s < streams.size(); ++s) {
    for (size_t t = 0; t < streams[s].size(); ++t) {
      if (!words[s][t].second) continue;
      Expected e;
      const std::string& word = *words[s][t].first;
      e.oov = streams[s][t] == m.unk_id;
      const double q = e.oov ? log_q.at(word) : 0;
      if (t == 0) {  // no bos, the file's first word: 1/V
        e.log_prob = -std::log(static_cast<double>(V)) + q;
        out.push_back(e);
        continue;
      }
      const size_t start = window_start(m, t);
      const std::vector<int> context(streams[s].begin() + static_cast<std::ptrdiff_t>(start),
                                     streams[s].begin() + static_cast<std::ptrdiff_t>(t));
      const Prediction p = predictor.predict(testing::encoded(m, context), 5);
      const auto logits = predictor.logits();
      double z = 0;
      for (const float l : logits) z += std::exp(static_cast<double>(l));
      e.log_prob =
          static_cast<double>(logits[static_cast<size_t>(streams[s][t])]) - std::log(z) + q;
      e.h.assign(predictor.hidden().begin(), predictor.hidden().end());
      if (!e.oov) {
        e.top1 = p.top[0].id == streams[s][t];
        for (const Candidate& c : p.top) e.top5 += c.id == streams[s][t];
      }
      out.push_back(e);
    }
  }
  return out;
}

std::vector<WikitextTokenScore> scores_of(const Model& m, const Wikitext& text,
                                          const Lexicon* lexicon, const WikitextEvalOptions& o,
                                          WikitextEvalResult& result) {
  std::vector<WikitextTokenScore> scores;
  WikitextEvalHooks hooks;
  hooks.each = [&](const WikitextTokenScore& s) { scores.push_back(s); };
  result = evaluate_wikitext(m, text, lexicon, o, hooks);
  return scores;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

}  // namespace

TEST_CASE("eval --wikitext on the fruit model: the counts and the total by hand", "[wikitext]") {
  const Model& m = testing::fruit();
  REQUIRE(m.bos_id < 0);
  const Wikitext text = read_wikitext(kFruitText, m.config.tokenizer, m.config.unk_token);
  // 28 WikiText tokens: 2 <unk>, 8 heading marks, N = 18; the model's 16
  // scored tokens stand for them (apple-pie for 3).
  std::map<std::string, double> q;
  for (const char* word : {"kiwi", "apple-pie"}) q[word] = uniform_log_q(word);
  const std::vector<Expected> expected = by_hand(m, text, q);
  REQUIRE(expected.size() == 16);
  WikitextEvalResult r;
  const std::vector<WikitextTokenScore> scores = scores_of(m, text, nullptr, {}, r);
  CHECK(r.documents == 2);
  CHECK(r.wikitext_tokens == 28);
  CHECK(r.unknown == 2);
  CHECK(r.heading_marks == 8);
  CHECK(r.scored == 18);
  CHECK(r.model_tokens == 16);
  CHECK(r.oov == 5);  // kiwi 4 times, apple-pie
  CHECK_FALSE(r.lexicon);
  REQUIRE(scores.size() == expected.size());
  double total = 0;
  int64_t top1 = 0, top5 = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    INFO("token " << i);
    CHECK(scores[i].log_prob == Approx(expected[i].log_prob).epsilon(1e-6));
    CHECK(scores[i].oov == expected[i].oov);
    CHECK((scores[i].rank == 1) == (expected[i].top1 == 1));
    CHECK((scores[i].rank >= 1 && scores[i].rank <= 5) == (expected[i].top5 == 1));
    total -= expected[i].log_prob;
    top1 += expected[i].top1;
    top5 += expected[i].top5;
  }
  // The file's first word has no context: 1/6, a miss.
  CHECK(scores[0].log_prob == Approx(-std::log(6.0)));
  CHECK(scores[0].rank == 0);
  CHECK(r.total_nats == Approx(total).epsilon(1e-6));
  CHECK(r.top1 == top1);
  CHECK(r.top5 == top5);
  CHECK(r.cross_entropy() == Approx(total / 18).epsilon(1e-6));
  CHECK(r.perplexity() == Approx(std::exp(total / 18)).epsilon(1e-6));
  CHECK(r.oov_rate() == Approx(5.0 / 16));

  SECTION("with a lexicon: q = 0.5 count / C + 0.5 q_char") {
    Lexicon lexicon;
    lexicon.entries = {{"apple", 9}, {"kiwi", 3}, {"fig", 1}};  // apple is in the vocabulary
    const Spelling spelling({{"fig", 1}, {"kiwi", 3}}, Spelling::Options{5});
    std::map<std::string, double> lexicon_q;
    lexicon_q["kiwi"] = std::log(0.5 * 3 / 4 + 0.5 * std::exp(spelling.log_prob("kiwi")));
    lexicon_q["apple-pie"] = std::log(0.5) + spelling.log_prob("apple-pie");
    const std::vector<Expected> with_lexicon = by_hand(m, text, lexicon_q);
    WikitextEvalResult lr;
    const std::vector<WikitextTokenScore> ls = scores_of(m, text, &lexicon, {}, lr);
    CHECK(lr.lexicon);
    CHECK(lr.lexicon_words == 2);
    double lexicon_total = 0;
    for (size_t i = 0; i < ls.size(); ++i) {
      CHECK(ls[i].log_prob == Approx(with_lexicon[i].log_prob).epsilon(1e-6));
      lexicon_total -= with_lexicon[i].log_prob;
    }
    CHECK(lr.total_nats == Approx(lexicon_total).epsilon(1e-6));
    CHECK(lr.total_nats < r.total_nats);  // kiwi is far likelier now
  }

  SECTION("the cache at weight 0 is no cache, bit for bit") {
    WikitextEvalOptions o;
    o.cache = true;
    o.cache_weight = 0;
    WikitextEvalResult cr;
    const std::vector<WikitextTokenScore> cs = scores_of(m, text, nullptr, o, cr);
    REQUIRE(cs.size() == scores.size());
    for (size_t i = 0; i < cs.size(); ++i) {
      CHECK(cs[i].log_prob == scores[i].log_prob);
      CHECK(cs[i].rank == scores[i].rank);
    }
    CHECK(cr.total_nats == r.total_nats);
    CHECK(cr.top1 == r.top1);
    CHECK(cr.top5 == r.top5);
  }

  SECTION("with the cache, the same pass scores the model alone, bit for bit") {
    WikitextEvalOptions o;
    o.cache = true;
    o.cache_weight = 0.3;
    WikitextEvalResult cr;
    scores_of(m, text, nullptr, o, cr);
    CHECK(cr.total_nats != r.total_nats);
    CHECK(cr.model_only_nats == r.total_nats);
    CHECK(cr.model_only_top1 == r.top1);
    CHECK(cr.model_only_top5 == r.top5);
    CHECK(cr.model_only_perplexity() == r.perplexity());
  }

  SECTION("the cache's mixture by hand: the third kiwi of the first article") {
    WikitextEvalOptions o;
    o.cache = true;
    o.cache_weight = 0.3;
    o.cache_sharpness = 2;
    WikitextEvalResult cr;
    const std::vector<WikitextTokenScore> cs = scores_of(m, text, nullptr, o, cr);
    // Scored tokens: 0 apple 1 pie 2 apple 3 banana 4 pie 5 kiwi 6 apple-pie
    // 7 kiwi 8 store 9 kiwi; the cache holds 1..8 (token 0 has no context).
    const std::vector<std::string> words{"pie",  "apple",     "banana", "pie",
                                         "kiwi", "apple-pie", "kiwi",   "store"};
    const std::vector<float>& h = expected[9].h;
    double all = 0, kiwi = 0;
    for (size_t i = 1; i <= 8; ++i) {
      const double w = std::exp(2 * cosine(h, expected[i].h));
      all += w;
      if (words[i - 1] == "kiwi") kiwi += w;
    }
    const double p = 0.7 * std::exp(expected[9].log_prob) + 0.3 * kiwi / all;
    CHECK(std::exp(cs[9].log_prob) == Approx(p).epsilon(1e-6));
    CHECK(cs[9].rank >= 1);  // a candidate through the cache
    CHECK(scores[9].rank == 0);
    // The first token of each article: an empty cache, p_model.
    CHECK(cs[0].log_prob == scores[0].log_prob);
    CHECK(cs[1].log_prob == scores[1].log_prob);
    CHECK(cs[11].log_prob == scores[11].log_prob);  // phone, the second article's first
    CHECK(cs[12].log_prob != scores[12].log_prob);
  }
}

TEST_CASE("eval --wikitext slides windows past max_len, on any thread count", "[wikitext]") {
  for (const bool causal : {true, false}) {
    Config c = testing::small_config();
    c.causal = causal;
    const Model m = testing::random_model(c, true, true, 21);
    // Three articles of w2..w10, a word outside the vocabulary and <unk>s,
    // longer than max_len = 6 (windows of 6, advancing by 3).
    std::string wikitext;
    std::map<std::string, double> q;
    q["zq"] = uniform_log_q("zq");
    for (int a = 0; a < 3; ++a) {
      wikitext.append(" = ").append(m.vocab.word(2 + a)).append(" = \n");
      for (int line = 0; line < 3; ++line) {
        wikitext += " ";
        for (int i = 0; i < 7 + a; ++i) {
          const int k = (a * 31 + line * 7 + i * 5) % 13;
          wikitext.append(k == 11 ? "zq" : k == 12 ? "<unk>" : m.vocab.word(2 + k % 9)).append(" ");
        }
        wikitext += "\n";
      }
    }
    const Wikitext text = read_wikitext(wikitext, m.config.tokenizer, m.config.unk_token);
    const std::vector<Expected> expected = by_hand(m, text, q);
    std::vector<std::vector<WikitextTokenScore>> runs;
    std::vector<WikitextEvalResult> results;
    for (const int threads : {1, 2}) {
      set_threading(Threading::kRows, threads);
      for (const bool cache : {false, true}) {
        WikitextEvalOptions o;
        o.cache = cache;
        WikitextEvalResult r;
        runs.push_back(scores_of(m, text, nullptr, o, r));
        results.push_back(r);
      }
    }
    set_threading(Threading::kRows, 1);
    INFO("causal " << causal);
    REQUIRE(runs[0].size() == expected.size());
    REQUIRE(expected.size() > 40);
    double total = 0;
    int64_t oov = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      INFO("token " << i);
      CHECK(runs[0][i].log_prob == Approx(expected[i].log_prob).epsilon(1e-6));
      CHECK((runs[0][i].rank == 1) == (expected[i].top1 == 1));
      total -= expected[i].log_prob;
      oov += expected[i].oov;
    }
    CHECK(oov > 0);
    CHECK(results[0].total_nats == Approx(total).epsilon(1e-6));
    CHECK(results[0].documents == 3);
    // The thread count changes no bit; the cache changes the figures.
    for (size_t run = 2; run < 4; ++run) {
      CHECK(results[run].total_nats == results[run - 2].total_nats);
      CHECK(results[run].top5 == results[run - 2].top5);
      for (size_t i = 0; i < runs[run].size(); ++i) {
        CHECK(runs[run][i].log_prob == runs[run - 2][i].log_prob);
      }
    }
    CHECK(results[1].total_nats != results[0].total_nats);
  }
}
