// The transformer and the model's memory (model/memory_file.h) as one
// prediction:
//
//   p(w | h) = (1 - lambda(h)) p_transformer(w | h) + lambda(h) p_memory(w | h)
//
// lambda(h) from the memory's table, by the bucket of what the context
// matched (Memory::find). The mixture replaces the next-word logits by
// ln p(w | h), so everything that ranks logits or takes their softmax
// (predict, generate, complete, score, serve, lsp) reads the mixture
// unchanged; a word outside the vocabulary keeps p(unk | h) q(word). A model
// without a memory (or loaded with --no-memory) is never touched.
#pragma once

#include <cmath>
#include <span>
#include <vector>

#include "model/memory_file.h"
#include "model/model_file.h"
#include "predict/logit_row.h"

namespace nextword {

// One context's mixture: what the memory found, its weight, and the
// normalizer of the transformer's logits.
struct MixedRow {
  MemoryContext context;
  double lambda = 0;
  double exact_log_normalizer = 0;  // ln sum_w e^(logit_w) in double, when asked for
};

// `context`: the tokens before the predicted one (the last n - 1 matter).
// `exact`: also the normalizer in double, for mixed_log_probability.
MixedRow mixed_row(const Memory& memory, std::span<const int> context,
                   std::span<const float> logits, bool exact = false);
// ln p(id | h) of the mixture, in double from the transformer's logits (a
// row made with `exact`): these sum to 1 over the vocabulary to 1e-9.
double mixed_log_probability(const Memory& memory, const MixedRow& row,
                             std::span<const float> logits, int id);
// The transformer's logits [V] become ln p(w | h) of the mixture (floats).
void write_mixed_logits(const Memory& memory, const MixedRow& row, std::span<float> logits);

// Both for a model with a memory: mixes logits in place and returns lambda;
// returns -1 and leaves them alone for a model without one.
double mix_memory(const Model& model, std::span<const int> context, std::span<float> logits);

// The mixture's most likely word (never a special token; of equal
// probabilities the lower id), what greedy generation takes, without the
// mixture's passes over the vocabulary: the transformer's best kMixedTop
// words, the memory's best unigrams and the words its contexts store are
// scored exactly (in double), and every other word is bounded by the
// kMixedTop-th transformer probability plus the kTopUnigrams-th unigram
// share; should that bound reach the best, the whole row is mixed.
// `normalized`: the logits are log-probabilities already (an adaptive
// softmax's), so their normalizer is 1 (else it is computed).
constexpr int kMixedTop = 16;
int mixed_argmax(const Model& model, std::span<const int> context, std::span<const float> logits,
                 bool normalized);
// The same from a row that computes its logits as they are asked for
// (predict/logit_row.h): a word whose bound cannot win is never computed.
int mixed_argmax(const Model& model, std::span<const int> context, LogitRow& row, bool normalized);

// The mixture in two parts, for a caller that ranks words itself and takes
// the probabilities of a few (the completer): the memory's part dense,
// lambda p_memory(w) for every word (a pass of multiply-adds and the stored
// shares, no exp or ln), and the transformer's taken one word at a time:
//   p(w | h) = (1 - lambda) e^(logit_w - z) + memory_part[w].
struct MixtureParts {
  double keep = 1, log_normalizer = 0;
  std::vector<float> memory_part;
  // `normalized`: the logits are log-probabilities already (z = 0).
  void set(const Memory& memory, std::span<const int> context, std::span<const float> logits,
           bool normalized);
  double probability(int id, float logit) const {
    return keep * std::exp(static_cast<double>(logit) - log_normalizer) +
           static_cast<double>(memory_part[static_cast<size_t>(id)]);
  }
};

// One scored token of a development text, for fitting lambda: ln p of its
// word by the transformer alone and by the memory alone, and its bucket.
struct MixturePoint {
  double transformer_log_prob = 0;
  double memory_log_prob = 0;
  int bucket = 0;
};

// The lambda of each of `buckets` buckets that maximizes the points'
// likelihood, by EM: lambda <- mean over the bucket's points of
// lambda p_m / (lambda p_m + (1 - lambda) p_t). A bucket of few points
// leans on its order's lambda (the buckets sharing bucket / kMemoryBands),
// and that on the lambda of all points, each as `prior_points` points of it.
std::vector<double> fit_lambdas(std::span<const MixturePoint> points, int buckets,
                                int iterations = 50, double prior_points = 20);

// Their mean ln p under the mixture of `lambdas`.
double mixture_log_likelihood(std::span<const MixturePoint> points,
                              std::span<const double> lambdas);

}  // namespace nextword
