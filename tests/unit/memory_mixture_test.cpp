// The transformer mixed with its memory (predict/memory_mixture.h): the
// mixture sums to 1 over every word, its float logits are its probabilities,
// the fitted weights by EM, and a model without a memory is untouched.
#include "predict/memory_mixture.h"

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "encoded_input.h"
#include "format/file_bytes.h"
#include "math/kernels.h"
#include "math/layers.h"
#include "predict/generate.h"
#include "predict/predictor.h"
#include "predict/ranking.h"
#include "test_models.h"
#include "train/ngram_memory.h"
#include "transformer/adaptive_softmax.h"

using namespace nextword;

namespace {

Model model_with_memory(int order, uint64_t seed, bool adaptive_softmax = false) {
  Config c;
  if (adaptive_softmax) {
    c.adaptive_cutoffs = {8, 20};
    c.adaptive_div = 2.0f;
    c.tied_classifier = true;
  }
  c.vocab_size = 40;
  c.d_model = 16;
  c.n_layers = 1;
  c.n_heads = 2;
  c.d_k = c.d_v = 8;
  c.d_ff = 16;
  c.max_len = 12;
  c.bos_token = "<bos>";
  Model m = testing::random_model(c, false, false, seed);
  std::mt19937_64 rng(seed);
  std::vector<int> text;
  for (int i = 0; i < 2000; ++i)
    text.push_back(i % 40 == 0 ? m.bos_id : 2 + static_cast<int>(rng() % (rng() % 2 ? 8 : 38)));
  MemoryOptions options;
  options.order = order;
  options.cutoffs = {1, 2};
  MemoryTables t = build_memory(text, m.vocab, options);
  for (double& lambda : t.header.lambdas)
    lambda = std::uniform_real_distribution<double>(0, 1)(rng);
  m.memory = Memory::from_file(FileBytes::from_bytes("memory.bin", memory_bytes(t)), m.vocab);
  return m;
}

}  // namespace

TEST_CASE("Mixture: sums to 1 over every word, and its logits are its probabilities", "[memory]") {
  for (const int order : {1, 3, 4}) {
    const Model m = model_with_memory(order, 11 + static_cast<uint64_t>(order));
    std::mt19937_64 rng(5);
    const int V = m.config.vocab_size;
    for (int trial = 0; trial < 25; ++trial) {
      std::vector<int> context;
      const int T = 1 + static_cast<int>(rng() % 6);
      for (int i = 0; i < T; ++i) context.push_back(static_cast<int>(rng() % 10));
      std::vector<float> logits(static_cast<size_t>(V));
      for (float& l : logits) l = std::normal_distribution<float>(0, 3)(rng);
      const MixedRow row = mixed_row(*m.memory, context, logits, true);
      double normalizer = 0;
      for (const float l : logits) normalizer += std::exp(static_cast<double>(l));
      double sum = 0;
      for (int w = 0; w < V; ++w) {
        const double lp = mixed_log_probability(*m.memory, row, logits, w);
        // By hand: (1 - lambda) softmax + lambda p_memory.
        const double softmax =
            std::exp(static_cast<double>(logits[static_cast<size_t>(w)])) / normalizer;
        CHECK(std::exp(lp) == Approx((1 - row.lambda) * softmax +
                                     row.lambda * m.memory->probability(row.context, w))
                                  .epsilon(1e-12));
        sum += std::exp(lp);
      }
      CHECK(std::abs(sum - 1) < 1e-9);
      // The float logits: ln of the same, within float rounding.
      std::vector<float> mixed = logits;
      write_mixed_logits(*m.memory, row, mixed);
      for (int w = 0; w < V; ++w) {
        CHECK(mixed[static_cast<size_t>(w)] ==
              Approx(mixed_log_probability(*m.memory, row, logits, w)).margin(2e-5));
      }
    }
  }
}

TEST_CASE("Mixture: lambda 1 and 0 give the memory and the transformer alone", "[memory]") {
  const Model m = model_with_memory(3, 21);
  const std::vector<int> context = {4, 5, 6};
  std::vector<float> logits(40);
  for (size_t w = 0; w < logits.size(); ++w) logits[w] = 0.1f * static_cast<float>(w % 7);
  for (const double lambda : {0.0, 1.0}) {
    MixedRow row = mixed_row(*m.memory, context, logits, true);
    row.lambda = lambda;
    std::vector<float> mixed = logits;
    write_mixed_logits(*m.memory, row, mixed);
    for (int w = 0; w < 40; ++w) {
      const double want = lambda == 1 ? std::log(m.memory->probability(row.context, w))
                                      : static_cast<double>(logits[static_cast<size_t>(w)]) -
                                            row.exact_log_normalizer;
      CHECK(mixed[static_cast<size_t>(w)] == Approx(want).margin(2e-5));
    }
  }
}

TEST_CASE("Mixture: the predictor mixes; a model without a memory is as before", "[memory]") {
  Model m = model_with_memory(3, 3);
  Predictor with(m);
  const Encoded input = encode(m, "w3 w4 w5");
  const std::vector<float> mixed(with.next_logits(input).begin(), with.next_logits(input).end());
  const auto memory = m.memory;
  m.memory.reset();
  Predictor without(m);
  const std::vector<float> plain(without.next_logits(input).begin(),
                                 without.next_logits(input).end());
  std::vector<float> by_hand = plain;
  m.memory = memory;
  CHECK(mix_memory(m, input.ids, by_hand) >= 0);
  CHECK(mixed == by_hand);
  // The key/value cache's path and a full pass give the same mixture.
  Predictor full(m);
  const std::vector<Encoded> one{input};
  const auto batch = full.next_logits(std::span<const Encoded>(one));
  CHECK(std::vector<float>(batch.begin(), batch.end()) == by_hand);
  m.memory.reset();
  CHECK(mix_memory(m, input.ids, by_hand) == -1);
}

TEST_CASE("Mixture: greedy's best word without the whole row is the exact argmax", "[memory]") {
  for (const int order : {1, 2, 4}) {
    const Model m = model_with_memory(order, 31 + static_cast<uint64_t>(order));
    std::mt19937_64 rng(9);
    const int V = m.config.vocab_size;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<int> context;
      const int T = 1 + static_cast<int>(rng() % 6);
      for (int i = 0; i < T; ++i) context.push_back(static_cast<int>(rng() % 12));
      // Flat and peaked rows: the bound settles most, the whole row the rest.
      const float spread = std::array<float, 3>{0.3f, 3.0f, 9.0f}[trial % 3];
      std::vector<float> logits(static_cast<size_t>(V));
      for (float& l : logits) l = std::normal_distribution<float>(0, spread)(rng);
      const MixedRow row = mixed_row(*m.memory, context, logits, true);
      int expected = -1;
      double best = -1e300;
      for (int w = 0; w < V; ++w) {
        const double lp = mixed_log_probability(*m.memory, row, logits, w);
        if (!m.is_special(w) && lp > best) {
          best = lp;
          expected = w;
        }
      }
      CHECK(mixed_argmax(m, context, logits, false) == expected);
      // Log-probabilities already (normalized): the same word.
      std::vector<float> log_probs = logits;
      const double z = exact_log_sum_exp(logits.data(), V);
      for (float& l : log_probs) l = static_cast<float>(static_cast<double>(l) - z);
      const int w = mixed_argmax(m, context, log_probs, true);
      CHECK(mixed_log_probability(*m.memory, row, logits, w) == Approx(best).margin(1e-6));
    }
  }
}

TEST_CASE("Mixture: greedy's best word from an adaptive row is the whole row's", "[memory]") {
  // The row computes a cluster only for a word whose bound could win
  // (predict/logit_row.h): the same word as mixing the whole row.
  for (const int order : {1, 2, 4}) {
    const Model m = model_with_memory(order, 41 + static_cast<uint64_t>(order), true);
    std::mt19937_64 rng(11);
    AdaptiveRow row(m);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<int> context;
      const int T = 1 + static_cast<int>(rng() % 6);
      for (int i = 0; i < T; ++i) context.push_back(static_cast<int>(rng() % 30));
      std::vector<float> z(static_cast<size_t>(m.config.d_model));
      const float spread = std::array<float, 3>{0.3f, 2.0f, 6.0f}[trial % 3];
      for (float& x : z) x = std::normal_distribution<float>(0, spread)(rng);
      std::vector<float> logits(static_cast<size_t>(m.config.vocab_size));
      adaptive_log_probs_forward(logits.data(), z.data(), m, 1);
      row.reset(z);
      CHECK(mixed_argmax(m, context, row, true) == mixed_argmax(m, context, logits, true));
    }
  }
}

TEST_CASE("Mixture: greedy under the repetition guard takes the best word it allows",
          "[memory][repetition]") {
  // Greedy reads the mixture's best word without the whole row; when the
  // guard bans it, the whole mixed row with the ban applied. By hand: the
  // mixed row of a full pass, each word that followed the last one before
  // banned (bigrams), the best word left.
  for (const bool adaptive : {false, true}) {
    const Model m = model_with_memory(3, adaptive ? 52 : 51, adaptive);
    Predictor predictor(m);
    GenerateOptions o;
    o.max_words = 30;
    o.guard = {.ngram = 2, .penalty = 0.0f, .window = 256};
    const Encoded start = testing::encoded(m, {m.bos_id, 3});
    const std::vector<int> guarded = generate(predictor, start, o);
    o.guard = RepetitionGuard::off();
    CHECK(generate(predictor, start, o) != guarded);
    Predictor full(m);
    Encoded text = start;
    for (const int id : guarded) {
      const std::vector<Encoded> one{growing_window(m, text)};
      const std::span<const float> mixed = full.next_logits(std::span<const Encoded>(one));
      std::vector<float> row(mixed.begin(), mixed.end());
      for (size_t p = 0; p + 1 < text.ids.size(); ++p) {
        if (text.ids[p] == text.ids.back()) {
          row[static_cast<size_t>(text.ids[p + 1])] = -std::numeric_limits<float>::infinity();
        }
      }
      std::vector<int> best;
      rank_top(m, row.data(), 1, best);
      CHECK(id == best[0]);
      text.ids.push_back(id);
      text.tokens.emplace_back(m.vocab.word(id));
    }
  }
}

TEST_CASE("Mixture: EM finds the weight of a known mixture", "[memory]") {
  // Points drawn from 0.3 p_m + 0.7 p_t with two word distributions over 4
  // words: EM's lambda comes back near 0.3; a bucket of few points stays
  // near its order's.
  const double pt[4] = {0.7, 0.1, 0.1, 0.1}, pm[4] = {0.1, 0.1, 0.1, 0.7};
  std::mt19937_64 rng(1);
  std::vector<MixturePoint> points;
  std::discrete_distribution<int> draw({0.3 * 0.1 + 0.7 * 0.7, 0.1, 0.1, 0.3 * 0.7 + 0.7 * 0.1});
  for (int i = 0; i < 20000; ++i) {
    const int w = draw(rng);
    points.push_back({std::log(pt[w]), std::log(pm[w]), kMemoryBands + 3});
  }
  points.push_back({std::log(0.01), std::log(0.9), kMemoryBands + 4});
  const std::vector<double> lambdas = fit_lambdas(points, 2 * kMemoryBands);
  CHECK(lambdas[kMemoryBands + 3] == Approx(0.3).margin(0.03));
  CHECK(lambdas[kMemoryBands + 4] > lambdas[kMemoryBands + 3]);
  CHECK(lambdas[kMemoryBands + 4] < lambdas[kMemoryBands + 3] + 0.05);
  CHECK(mixture_log_likelihood(points, lambdas) >
        mixture_log_likelihood(points, std::vector<double>(2 * kMemoryBands, 0.6)));
}

TEST_CASE("exact_exp: e^x in double to 2 ulp over the range the normalizer uses", "[memory]") {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::uniform_real_distribution<double>(-700, 50)(rng);
    CHECK(std::abs(exact_exp(x) / std::exp(x) - 1) < 5e-16);
  }
  CHECK(exact_exp(0) == 1.0);
  CHECK(exact_exp(-800) == 0.0);
  std::vector<float> logits = {1.0f, -3.5f, 20.25f, -80.0f, 0.0f};
  double sum = 0;
  for (const float l : logits) sum += std::exp(static_cast<double>(l));
  CHECK(exact_log_sum_exp(logits.data(), 5) == Approx(std::log(sum)).epsilon(1e-15));
}

TEST_CASE("Mixture: continuations side by side mix as each alone", "[memory]") {
  for (const bool adaptive : {false, true}) {
    INFO((adaptive ? "adaptive softmax" : "full softmax"));
    const Model m = model_with_memory(3, 5, adaptive);
    const Encoded input = encode(m, "w3 w4 w5");
    Predictor side(m);
    side.next_logits(input);
    REQUIRE(side.start_branches(input));
    // Each continuation's row against next_logits of its whole text.
    auto check_rows = [&](std::span<const float> rows,
                          const std::vector<std::vector<int>>& continuations) {
      const auto V = static_cast<size_t>(m.config.vocab_size);
      REQUIRE(rows.size() == continuations.size() * V);
      for (size_t b = 0; b < continuations.size(); ++b) {
        Encoded whole = input;
        whole.ids.insert(whole.ids.end(), continuations[b].begin(), continuations[b].end());
        Predictor alone(m);
        const std::span<const float> want = alone.next_logits(whole);
        CHECK(std::vector<float>(rows.begin() + static_cast<long>(b * V),
                                 rows.begin() + static_cast<long>((b + 1) * V)) ==
              std::vector<float>(want.begin(), want.end()));
      }
    };
    check_rows(side.grow_branches({}, std::vector<int>{7, 3, 9}), {{7}, {3}, {9}});
    check_rows(side.grow_branches(std::vector<int>{2, 0}, std::vector<int>{4, 4}),
               {{9, 4}, {7, 4}});
    // Off, the transformer's own logits.
    const MixingOff off(side, true);
    side.next_logits(input);
    REQUIRE(side.start_branches(input));
    const std::span<const float> plain = side.grow_branches({}, std::vector<int>{7});
    Predictor alone(m);
    alone.set_mixing(false);
    Encoded whole = input;
    whole.ids.push_back(7);
    const std::span<const float> want = alone.next_logits(whole);
    CHECK(std::vector<float>(plain.begin(), plain.end()) ==
          std::vector<float>(want.begin(), want.end()));
  }
}
