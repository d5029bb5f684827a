#include "predict/memory_mixture.h"

#include <algorithm>
#include <cmath>

#include "math/layers.h"
#include "predict/logit_row.h"
#include "predict/ranking.h"

namespace nextword {

MixedRow mixed_row(const Memory& memory, std::span<const int> context,
                   std::span<const float> logits, bool exact) {
  MixedRow row;
  // The exact path reads single probabilities (weights first); the float
  // path weighs the context as it adds its shares.
  row.context = memory.find(context, exact);
  row.lambda = memory.lambda(row.context);
  if (exact) {
    row.exact_log_normalizer = exact_log_sum_exp(logits.data(), static_cast<int>(logits.size()));
  }
  return row;
}

double mixed_log_probability(const Memory& memory, const MixedRow& row,
                             std::span<const float> logits, int id) {
  const double transformer =
      std::exp(static_cast<double>(logits[static_cast<size_t>(id)]) - row.exact_log_normalizer);
  return std::log((1 - row.lambda) * transformer +
                  row.lambda * memory.probability(row.context, id));
}

void write_mixed_logits(const Memory& memory, const MixedRow& row, std::span<float> logits) {
  // Three passes over the vocabulary: the exponentials and their sum S, then
  // ln((1 - lambda)/S e + lambda base u) at once, the memory's n-gram shares
  // added to e beforehand (times S / (1 - lambda), which that scale undoes).
  const auto V = static_cast<int>(logits.size());
  const double keep = 1 - row.lambda;
  double scale = 1;
  if (keep > 0) {
    scale = keep / exp_sum_row(logits.data(), V);
  } else {
    std::fill(logits.begin(), logits.end(), 0.0f);  // lambda 1: the memory alone
  }
  const double shares = row.lambda / scale;
  MemoryContext c = row.context;
  memory.for_each_share(c, [&](int w, double weight) {
    logits[static_cast<size_t>(w)] += static_cast<float>(shares * weight);
  });
  scale_add_log_row(logits.data(), V, static_cast<float>(scale), memory.unigram().data(),
                    static_cast<float>(row.lambda * memory.unigram_weight(c)));
}

double mix_memory(const Model& model, std::span<const int> context, std::span<float> logits) {
  if (!model.memory) return -1;
  const MixedRow row = mixed_row(*model.memory, context, logits);
  write_mixed_logits(*model.memory, row, logits);
  return row.lambda;
}

void MixtureParts::set(const Memory& memory, std::span<const int> context,
                       std::span<const float> logits, bool normalized) {
  const auto V = static_cast<int>(logits.size());
  log_normalizer = normalized ? 0 : exact_log_sum_exp(logits.data(), V);
  MemoryContext c = memory.find(context, false);
  const double lambda = memory.lambda(c);
  keep = 1 - lambda;
  memory_part.assign(static_cast<size_t>(V), 0.0f);
  memory.for_each_share(c, [&](int w, double weight) {
    memory_part[static_cast<size_t>(w)] += static_cast<float>(lambda * weight);
  });
  const auto base = static_cast<float>(lambda * memory.unigram_weight(c));
  const float* u = memory.unigram().data();
  float* part = memory_part.data();
  for (int w = 0; w < V; ++w) part[w] += base * u[w];
}

int mixed_argmax(const Model& model, std::span<const int> context, std::span<const float> logits,
                 bool normalized) {
  FullRow row(model, logits);
  return mixed_argmax(model, context, row, normalized);
}

int mixed_argmax(const Model& model, std::span<const int> context, LogitRow& row, bool normalized) {
  const Memory& memory = *model.memory;
  const double log_normalizer =
      normalized ? 0 : exact_log_sum_exp(row.all().data(), static_cast<int>(row.all().size()));
  const MemoryContext c = memory.find(context);  // its weights, and each order's largest share
  const double lambda = memory.lambda(c), keep = 1 - lambda;
  auto transformer = [&](float logit) {
    return keep * std::exp(static_cast<double>(logit) - log_normalizer);
  };
  int best = -1;
  double best_p = -1;
  auto consider = [&](int w) {
    if (model.is_special(w)) return;
    const double memory_part = lambda * memory.probability(c, w);
    // A word whose logit is not computed yet (an adaptive softmax's cluster)
    // and whose bound cannot win costs no cluster.
    if (transformer(row.bound(w)) + memory_part < best_p) return;
    const double p = transformer(row.logit(w)) + memory_part;
    if (p > best_p || (p == best_p && w < best)) {
      best = w;
      best_p = p;
    }
  };
  thread_local std::vector<int> top;
  row.top(kMixedTop, top);
  for (const int w : top) consider(w);
  for (const int w : memory.top_unigrams()) consider(w);
  // Bounds on the words not scored yet: a transformer part of at most top's
  // last, a unigram part of at most the kTopUnigrams-th (the largest for a
  // word stored under a context), each order's share at most its largest.
  const bool all_top = static_cast<int>(top.size()) < kMixedTop;
  const double rest_transformer = all_top ? 0 : transformer(row.logit(top.back()));
  const double base = lambda * memory.unigram_weight(c);
  const std::span<const float> u = memory.unigram();
  const std::span<const int> top_u = memory.top_unigrams();
  const double rest_unigram =
      static_cast<int>(top_u.size()) < Memory::kTopUnigrams ? 0 : base * u[top_u.back()];
  const double max_unigram = top_u.empty() ? 0 : base * u[top_u.front()];
  double stored_most = 0;
  for (int j = 1; j < memory.order(); ++j) {
    if (c.node[j] >= 0) stored_most += lambda * c.scale[j] * c.most[j];
  }
  for (int j = 1; j < memory.order(); ++j) {
    if (c.node[j] < 0 || rest_transformer + max_unigram + stored_most < best_p) continue;
    memory.for_each_stored(c, j, [&](int w, double share) {
      const double others = stored_most - lambda * c.scale[j] * c.most[j];
      if (rest_transformer + base * u[w] + lambda * c.scale[j] * share + others >= best_p) {
        consider(w);
      }
    });
  }
  if (all_top || rest_transformer + rest_unigram < best_p) return best;
  // A word none of the above scored could still win: the whole row.
  thread_local std::vector<float> mixed;
  const std::span<const float> logits = row.all();
  mixed.assign(logits.begin(), logits.end());
  mix_memory(model, context, mixed);
  rank_top(model, mixed.data(), 1, top);
  return top.empty() ? -1 : top.front();
}

namespace {

// ln((1 - lambda) p_t + lambda p_m).
double mixed(const MixturePoint& p, double lambda) {
  return std::log((1 - lambda) * std::exp(p.transformer_log_prob) +
                  lambda * std::exp(p.memory_log_prob));
}

// A point's two probabilities.
struct Pair {
  double t, m;
};

// EM from `lambda` over the pairs, leaning on `prior` as prior_points points.
double em(std::span<const Pair> pairs, double lambda, double prior, double prior_points,
          int iterations) {
  for (int i = 0; i < iterations; ++i) {
    double shares = 0;
    for (const Pair& p : pairs) {
      const double t = (1 - lambda) * p.t, m = lambda * p.m;
      shares += t + m > 0 ? m / (t + m) : lambda;
    }
    lambda = (shares + prior_points * prior) / (static_cast<double>(pairs.size()) + prior_points);
  }
  return lambda;
}

}  // namespace

std::vector<double> fit_lambdas(std::span<const MixturePoint> points, int buckets, int iterations,
                                double prior_points) {
  // The pairs grouped by bucket (bucket order is order-major, so an order's
  // buckets are one run).
  std::vector<MixturePoint> sorted(points.begin(), points.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const MixturePoint& a, const MixturePoint& b) {
    return a.bucket < b.bucket;
  });
  std::vector<Pair> pairs;
  std::vector<size_t> starts(static_cast<size_t>(buckets) + 1, 0);
  for (const MixturePoint& p : sorted) {
    if (p.bucket < 0 || p.bucket >= buckets) continue;
    pairs.push_back({std::exp(p.transformer_log_prob), std::exp(p.memory_log_prob)});
    ++starts[static_cast<size_t>(p.bucket) + 1];
  }
  for (size_t b = 1; b < starts.size(); ++b) starts[b] += starts[b - 1];
  auto run = [&](int first, int end) {
    return std::span<const Pair>(pairs).subspan(
        starts[static_cast<size_t>(first)],
        starts[static_cast<size_t>(end)] - starts[static_cast<size_t>(first)]);
  };
  // All points, then each order's, then each bucket's, each from the one above.
  const double all = em(pairs, 0.5, 0.5, 0, iterations);
  std::vector<double> lambdas(static_cast<size_t>(buckets));
  for (int first = 0; first < buckets; first += kMemoryBands) {
    const int end = std::min(buckets, first + kMemoryBands);
    const double order = em(run(first, end), all, all, prior_points, iterations);
    for (int b = first; b < end; ++b) {
      lambdas[static_cast<size_t>(b)] = em(run(b, b + 1), order, order, prior_points, iterations);
    }
  }
  return lambdas;
}

double mixture_log_likelihood(std::span<const MixturePoint> points,
                              std::span<const double> lambdas) {
  double total = 0;
  for (const MixturePoint& p : points) total += mixed(p, lambdas[static_cast<size_t>(p.bucket)]);
  return points.empty() ? 0 : total / static_cast<double>(points.size());
}

}  // namespace nextword
