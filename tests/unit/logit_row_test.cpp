// Rows of logits computed as they are asked for (predict/logit_row.h): an
// adaptive softmax's AdaptiveRow against the whole row of
// adaptive_log_probs_forward, on random models: the same bits for every
// word, the same k best words for every k, a bound no word exceeds, and
// clusters passed over when the k best cannot be in them.
#include "predict/logit_row.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "base/random.h"
#include "math/layers.h"
#include "predict/generate.h"
#include "predict/ranking.h"
#include "test_models.h"
#include "transformer/adaptive_softmax.h"

using namespace nextword;

namespace {

Config adaptive(int vocab, std::vector<int> cutoffs, bool tied) {
  Config c = testing::small_config();
  c.vocab_size = vocab;
  c.adaptive_cutoffs = std::move(cutoffs);
  c.adaptive_div = 2.0f;
  c.tied_classifier = tied;
  return c;
}

}  // namespace

TEST_CASE("an adaptive row gives the whole row's bits and k best words, every k", "[ranking]") {
  const Config configs[] = {adaptive(40, {8, 20}, true), adaptive(40, {8, 20}, false),
                            adaptive(200, {16, 64, 120}, true)};
  int passed_over = 0, rows = 0;
  for (const Config& c : configs) {
    for (const uint64_t seed : {1u, 2u, 3u}) {
      const Model m = testing::random_model(c, false, seed % 2 == 0, seed);
      const int V = c.vocab_size, d = c.d_model;
      std::mt19937 rng(static_cast<unsigned>(seed));
      for (int trial = 0; trial < 12; ++trial) {
        INFO("V " << V << ", seed " << seed << ", trial " << trial);
        // Context vectors from flat to peaked.
        std::vector<float> z(static_cast<size_t>(d));
        const float spread = 0.5f + static_cast<float>(trial % 4) * 2.0f;
        for (float& x : z) x = std::normal_distribution<float>(0.0f, spread)(rng);
        std::vector<float> full(static_cast<size_t>(V));
        adaptive_log_probs_forward(full.data(), z.data(), m, 1);
        AdaptiveRow row(m);
        std::vector<int> expected, got;
        for (int k = 0; k <= V + 2; ++k) {
          row.reset(z);
          row.top(k, got);
          rank_top(m, full.data(), k, expected);
          REQUIRE(got == expected);
          for (const int w : got)
            REQUIRE(std::bit_cast<uint32_t>(row.logit(w)) ==
                    std::bit_cast<uint32_t>(full[static_cast<size_t>(w)]));
          if (k == 1) {
            ++rows;
            passed_over += row.clusters_computed() < c.clusters() ? 1 : 0;
          }
        }
        // Bounds before anything is computed, then every word's bits.
        row.reset(z);
        for (int w = 0; w < V; ++w) REQUIRE(row.bound(w) >= full[static_cast<size_t>(w)]);
        for (int w = V - 1; w >= 0; --w) {
          REQUIRE(std::bit_cast<uint32_t>(row.logit(w)) ==
                  std::bit_cast<uint32_t>(full[static_cast<size_t>(w)]));
        }
        const auto all = row.all();
        REQUIRE(std::vector<float>(all.begin(), all.end()) == full);
      }
    }
  }
  // The point of it: most rows' best word needed no cluster at all.
  INFO(passed_over << " of " << rows << " rows' best word passed over a cluster");
  CHECK(passed_over * 2 > rows);
}

TEST_CASE("generating through an adaptive row chooses the whole row's words", "[ranking]") {
  const Model m = testing::random_model(adaptive(40, {8, 20}, true), false, false, 5);
  for (const float temperature : {0.0f, 0.8f}) {
    GenerateOptions o;
    o.max_words = 20;
    o.temperature = temperature;
    o.top_k = 5;
    o.seed = 3;
    o.guard = RepetitionGuard::off();
    Predictor cached(m);
    Encoded input = encode_text(m, "");
    input.ids = {m.bos_id, 3, 9};
    input.tokens = {"<bos>", std::string(m.vocab.word(3)), std::string(m.vocab.word(9))};
    const std::vector<int> words = generate(cached, input, o, nullptr);
    REQUIRE(words.size() == 20);
    // By hand: the whole row of a full pass at every step.
    Predictor full(m);
    Encoded text = input;
    for (size_t step = 0; step < words.size(); ++step) {
      const std::vector<Encoded> one{growing_window(m, text)};
      const auto logits = full.next_logits(std::span<const Encoded>(one));
      const double uniform =
          uniform01(splitmix64(o.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(step)));
      const int id = choose_next(m, logits.data(), o, uniform);
      CHECK(id == words[step]);
      text.ids.push_back(id);
      text.tokens.emplace_back(m.vocab.word(id));
    }
  }
}
