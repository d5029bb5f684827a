// The completer's ranking of a context's words (complete/completer.h):
// p_model from the forward pass (with a memory, the mixture in parts), the
// writer's caches, and the bound that lets the words ranked first be
// offered before the rest are ranked at all.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "base/error.h"
#include "complete/completer.h"
#include "math/layers.h"
#include "predict/ranking.h"
#include "text/words.h"

namespace nextword {
void Completer::rank_context(std::string_view tail) {
  if (ranked_ && !learned_since_ranked_ && tail == ranked_tail_) return;
  ranked_ = true;
  learned_since_ranked_ = false;
  ranked_tail_.assign(tail);

  // p_model over the whole vocabulary: softmax of the context's logits, or
  // uniform for a model that cannot read an empty context (no bos token).
  std::span<const float> logits, hidden;
  Encoded input;
  if (const auto it = prefetched_.find(ranked_tail_); it != prefetched_.end()) {
    logits = it->second.logits;
    hidden = it->second.hidden;
  } else {
    try {
      input = encode_growing(model_, tail);
      logits = predictor_.next_logits(input);
      hidden = predictor_.hidden();
      ++forward_passes_;
    } catch (const Error& e) {
      if (e.code() != ExitCode::kInput) throw;
      logits = {};
    }
  }
  ranked_h_.assign(hidden.begin(), hidden.end());
  // With learn, the model's distribution is flattened by its temperature
  // before the caches are mixed in. The logits are kept: the keystrokes in
  // this word rank from them, and a prefetch may reuse the predictor's.
  const double temperature = options_.learn ? options_.model_temperature : 1;
  logits_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    logits_[i] = temperature == 1 ? logits[i] : static_cast<float>(logits[i] / temperature);
  }
  // The mixture in parts has its own normalizer (parts_); without a memory
  // the softmax's, so a model without one ranks as the softmax alone does.
  log_normalizer_ = logits_.empty() || mixed_parts_
                        ? 0
                        : log_sum_exp(logits_.data(), static_cast<int>(logits_.size()));
  if (mixed_parts_ && !logits.empty()) {
    if (input.ids.empty()) input = encode_growing(model_, tail);  // a prefetched context
    parts_.set(*model_.memory, input.ids, logits, predictor_.logits_normalized());
  }
  // A model without an unknown word (GGUF's byte-level vocabularies) gives
  // words outside it no share of its own.
  p_unk_ = model_.unk_id >= 0 ? model_probability(model_.unk_id) : 0;

  const double lambda = options_.learn ? options_.lambda : 0;
  const double mu = options_.learn ? options_.context_weight : 0;
  // cache_p_ is 0 but where the caches put something: only those entries
  // are cleared and filled, not one per lexicon word.
  for (const int i : cached_) cache_p_[static_cast<size_t>(i)] = 0;
  cache_p_.resize(static_cast<size_t>(candidate_count()), 0);
  cached_.clear();
  for (size_t e = 0; e < cache_.entries().size(); ++e) {
    const int i = cache_candidates_[e];
    cache_p_[static_cast<size_t>(i)] = lambda * cache_.probability(cache_.entries()[e]);
    cached_.push_back(i);
  }
  if (mu > 0) {
    context_cache_.add_probabilities(ranked_h_, mu, cache_p_);
    cached_.insert(cached_.end(), context_cache_.words().begin(), context_cache_.words().end());
  }
  std::sort(cached_.begin(), cached_.end());
  cached_.erase(std::unique(cached_.begin(), cached_.end()), cached_.end());
}

double Completer::transformer_probability(float logit) const {
  if (logits_.empty()) return 1.0 / model_.config.vocab_size;
  return mixed_parts_ ? parts_.keep * std::exp(static_cast<double>(logit) - parts_.log_normalizer)
                      : std::exp(static_cast<double>(logit) - log_normalizer_);
}

double Completer::model_probability(int id) const {
  const double p = transformer_probability(logit(id));
  return mixed_parts_ && !logits_.empty()
             ? p + static_cast<double>(parts_.memory_part[static_cast<size_t>(id)])
             : p;
}

Completer::Ranked Completer::rank(int i) const {
  const bool vocabulary = i < lexicon_begin_;
  const int id = id_of(i);
  const double model_part =
      model_share() * (id >= 0 ? model_probability(id) : p_unk_ * outside(i).share);
  const double cache_part = cache_p_[static_cast<size_t>(i)];
  return {model_part + cache_part, i, cache_part > model_part ? Source::kHistory : Source::kModel,
          vocabulary ? i : outside(i).tie};
}

double Completer::model_share() const {
  return options_.learn ? 1 - options_.lambda - options_.context_weight : 1;
}

bool Completer::better(const Ranked& a, const Ranked& b) {
  return a.probability != b.probability ? a.probability > b.probability : a.tie < b.tie;
}

std::pair<std::vector<int>::const_iterator, std::vector<int>::const_iterator> Completer::fitting(
    const std::vector<int>& by_key, const std::string& prefix_key) const {
  const auto key = [&](int i) { return key_of(i); };
  const auto first = std::partition_point(by_key.begin(), by_key.end(),
                                          [&](int i) { return key(i) < prefix_key; });
  const auto last = std::partition_point(first, by_key.end(),
                                         [&](int i) { return key(i).starts_with(prefix_key); });
  return {first, last};
}

bool Completer::offer_ranked(const std::string& prefix_key,
                             const std::function<bool(const Ranked&)>& offer) {
  // The vocabulary's words that fit, and the cached words outside the
  // vocabulary that fit (few): at a word start every vocabulary word, in
  // the order of their ids (the logits read in order); after a prefix, those
  // of the index by key that fit.
  std::span<const int> words = vocabulary_, ids = vocabulary_ids_;
  if (!prefix_key.empty()) {
    const auto [first, last] = fitting(vocabulary_by_key_, prefix_key);
    const auto at = static_cast<size_t>(first - vocabulary_by_key_.begin());
    words = std::span<const int>(vocabulary_by_key_).subspan(at, static_cast<size_t>(last - first));
    ids = std::span<const int>(vocabulary_key_ids_).subspan(at, words.size());
  }
  // The kFirstRanked-th best logit among those vocabulary words: a word
  // below it without a cache's share has a probability of at most `bound`,
  // so the words ranked exactly first (those at or above it, and the cached
  // ones) are offered in the order a ranking of all would give while their
  // probabilities exceed it. Only the probabilities of those are taken (an
  // exp each), not of all 65,536. With the mixture in parts, the same for
  // the memory's part: a word below both kFirstRanked-th values is bounded
  // by the sum of their parts. Any thresholds keep that order exact; these
  // keep the words ranked first few.
  const bool parts = mixed_parts_ && !logits_.empty();
  const bool every_word = words.size() <= kFirstRanked || logits_.empty();
  const bool word_start = prefix_key.empty() && !every_word;
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  float threshold = kNone, part_threshold = kNone;
  const float* logit_row = logits_.data();
  const float* part_row = parts ? parts_.memory_part.data() : nullptr;
  if (word_start) {
    // Of whole rows, the special and punctuation tokens too (a few more
    // words fall below the thresholds): no gathering by id.
    threshold = kth_largest(logits_, kFirstRanked);
    if (parts) part_threshold = kth_largest(parts_.memory_part, kFirstRanked);
  } else if (!every_word) {
    gathered_.resize(ids.size());
    for (size_t j = 0; j < ids.size(); ++j) gathered_[j] = logit_row[ids[j]];
    threshold = kth_largest(gathered_, kFirstRanked);
    if (parts) {
      for (size_t j = 0; j < ids.size(); ++j) gathered_[j] = part_row[ids[j]];
      part_threshold = kth_largest(gathered_, kFirstRanked);
    }
  }
  // Without the mixture in parts no word is ranked first by a memory part.
  constexpr float kNever = std::numeric_limits<float>::infinity();
  const float part_cut = parts ? part_threshold : kNever;
  if (!parts) part_row = logit_row;  // read, never at or above kNever
  auto above = [&](int id) { return logit_row[id] >= threshold || part_row[id] >= part_cut; };
  auto first_ranked = [&](size_t j) {
    return every_word || above(ids[j]) || cache_p_[static_cast<size_t>(words[j])] != 0;
  };
  order_.clear();
  if (word_start) {
    // Every id, a block of them passed over with one vector compare when
    // none is above (nearly all), then the cached words not yet ranked.
    constexpr int kBlock = 16;
    const auto V = static_cast<int>(logits_.size());
    for (int begin = 0; begin < V; begin += kBlock) {
      const int end = std::min(V, begin + kBlock);
      int above_count = 0;
#pragma omp simd reduction(+ : above_count)
      for (int id = begin; id < end; ++id) {
        above_count += static_cast<int>(logit_row[id] >= threshold) |
                       static_cast<int>(part_row[id] >= part_cut);
      }
      if (above_count == 0) continue;
      for (int id = begin; id < end; ++id) {
        const int i = candidate_of_id_[static_cast<size_t>(id)];
        if (i >= 0 && above(id)) order_.push_back(rank(i));
      }
    }
    for (const int i : cached_) {
      const int id = id_of(i);
      if (cache_p_[static_cast<size_t>(i)] != 0 && (id < 0 || !above(id))) {
        order_.push_back(rank(i));
      }
    }
  } else {
    for (size_t j = 0; j < words.size(); ++j) {
      if (first_ranked(j)) order_.push_back(rank(words[j]));
    }
    for (const int i : cached_) {
      if (i >= lexicon_begin_ && cache_p_[static_cast<size_t>(i)] != 0 &&
          outside(i).key.starts_with(prefix_key)) {
        order_.push_back(rank(i));
      }
    }
  }
  std::sort(order_.begin(), order_.end(), better);
  // The margin covers an exp that is not exactly monotone in its last bit.
  const double bound = every_word ? -1
                                  : model_share() *
                                        (transformer_probability(threshold) +
                                         (parts ? static_cast<double>(part_threshold) : 0.0)) *
                                        (1 + 1e-12);
  size_t next = 0;
  for (; next < order_.size() && order_[next].probability > bound; ++next) {
    if (offer(order_[next])) return true;
  }
  if (every_word) return false;
  // Too few offered: the rest, in the same order, sorted eight times as far
  // at each step (better is a strict total order, so the sequence is the one
  // a whole sort gives).
  order_.erase(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(next));
  for (size_t j = 0; j < words.size(); ++j) {
    if (!first_ranked(j)) order_.push_back(rank(words[j]));
  }
  for (size_t i = 0, sorted = 0; i < order_.size(); ++i) {
    if (i == sorted) {
      sorted = std::min(order_.size(), std::max(kFirstRanked, 8 * sorted));
      std::partial_sort(order_.begin() + static_cast<std::ptrdiff_t>(i),
                        order_.begin() + static_cast<std::ptrdiff_t>(sorted), order_.end(), better);
    }
    if (offer(order_[i])) return true;
  }
  return false;
}

}  // namespace nextword
