#include "complete/completer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "base/error.h"
#include "complete/typed_text.h"
#include "math/layers.h"
#include "text/tokenizer.h"
#include "text/utf8.h"
#include "text/words.h"

namespace nextword {
namespace {

bool ends_sentence(const std::string& token) {
  return token == "." || token == "!" || token == "?";
}

// How many leading bytes `a` and `b` share.
size_t common_prefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  if (std::memcmp(a.data(), b.data(), n) == 0) return n;
  return static_cast<size_t>(
      std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin()).first -
      a.begin());
}

}  // namespace

const char* source_name(Source source) {
  switch (source) {
    case Source::kModel: return "model";
    case Source::kLexicon: return "lexicon";
    case Source::kHistory: return "history";
  }
  return "model";
}

Completer::Completer(const Model& model, const Lexicon* lexicon, const CompleteOptions& options)
    : model_(model),
      lexicon_(lexicon),
      options_(options),
      predictor_(model),
      cache_(options.decay),
      context_cache_(static_cast<size_t>(std::max(options.context_uses, 0)),
                     options.context_theta) {
  const Vocabulary& vocab = model.vocab;
  for (int id = 0; id < vocab.size(); ++id) {
    if (model.is_special(id) || !has_letter_or_digit(vocab.word(id))) continue;
    candidates_.push_back({std::string(vocab.word(id)), fold_case(vocab.word(id)), id, 0});
    by_key_.emplace(candidates_.back().key, static_cast<int>(candidates_.size()) - 1);
  }
  lexicon_begin_ = static_cast<int>(candidates_.size());
  if (lexicon_ != nullptr) {
    // The lexicon's words outside the vocabulary (a large lexicon, such as
    // the English model's 854,454 words, is most of the start-up).
    std::vector<const LexiconEntry*> outside;
    outside.reserve(lexicon_->entries.size());
    double oov_count = 0;
    for (const LexiconEntry& e : lexicon_->entries) {
      if (vocab.find(e.word) >= 0) continue;
      oov_count += static_cast<double>(e.count);
      outside.push_back(&e);
    }
    candidates_.reserve(candidates_.size() + outside.size());
    by_key_.reserve(candidates_.size() + outside.size());
    for (const LexiconEntry* e : outside) {
      if (!has_letter_or_digit(e->word)) continue;
      const int next = static_cast<int>(candidates_.size());
      const auto [at, added] = by_key_.emplace(fold_case(e->word), next);
      if (!added) continue;  // spelled as a vocabulary word, up to case
      candidates_.push_back({e->word, at->first, -1, static_cast<double>(e->count) / oov_count});
    }
  }
  lexicon_end_ = static_cast<int>(candidates_.size());
  for (int i = lexicon_begin_; i < lexicon_end_; ++i) lexicon_by_key_.push_back(i);
  std::sort(lexicon_by_key_.begin(), lexicon_by_key_.end(), [&](int a, int b) {
    return candidates_[static_cast<size_t>(a)].key < candidates_[static_cast<size_t>(b)].key;
  });
}

int Completer::candidate_for(const std::string& key, std::string_view word) {
  const auto [it, added] = by_key_.emplace(key, static_cast<int>(candidates_.size()));
  if (added) candidates_.push_back({std::string(word), key, -1, 0});
  return it->second;
}

void Completer::rank_context(std::string_view tail) {
  if (ranked_ && !learned_since_ranked_ && tail == ranked_tail_) return;
  ranked_ = true;
  learned_since_ranked_ = false;
  ranked_tail_.assign(tail);

  // p_model over the whole vocabulary: softmax of the context's logits, or
  // uniform for a model that cannot read an empty context (no bos token).
  std::span<const float> logits, hidden;
  if (const auto it = prefetched_.find(ranked_tail_); it != prefetched_.end()) {
    logits = it->second.logits;
    hidden = it->second.hidden;
  } else {
    try {
      logits = predictor_.next_logits(encode_growing(model_, tail));
      hidden = predictor_.hidden();
      ++forward_passes_;
    } catch (const Error& e) {
      if (e.code() != ExitCode::kInput) throw;
      logits = {};
    }
  }
  ranked_h_.assign(hidden.begin(), hidden.end());
  // With learn, the model's distribution is flattened by its temperature
  // before the caches are mixed in.
  const double temperature = options_.learn ? options_.model_temperature : 1;
  if (temperature != 1 && !logits.empty()) {
    scaled_logits_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
      scaled_logits_[i] = static_cast<float>(logits[i] / temperature);
    }
    logits = scaled_logits_;
  }
  const double log_normalizer =
      logits.empty() ? 0 : log_sum_exp(logits.data(), static_cast<int>(logits.size()));
  const double uniform = 1.0 / model_.config.vocab_size;
  auto p_model = [&](int id) {
    return logits.empty()
               ? uniform
               : std::exp(static_cast<double>(logits[static_cast<size_t>(id)]) - log_normalizer);
  };
  p_unk_ = p_model(model_.unk_id);

  const double lambda = options_.learn ? options_.lambda : 0;
  const double mu = options_.learn ? options_.context_weight : 0;
  const double share = model_share();
  // cache_p_ is 0 but where the caches put something: only those entries
  // are cleared and filled, not one per lexicon word.
  for (const int i : cached_) cache_p_[static_cast<size_t>(i)] = 0;
  cache_p_.resize(candidates_.size(), 0);
  cached_.clear();
  for (const auto& [key, entry] : cache_.entries()) {
    const int i = by_key_.at(key);
    cache_p_[static_cast<size_t>(i)] = lambda * cache_.probability(entry);
    cached_.push_back(i);
  }
  if (mu > 0) {
    context_cache_.add_probabilities(ranked_h_, mu, cache_p_);
    cached_.insert(cached_.end(), context_cache_.words().begin(), context_cache_.words().end());
  }
  ranked_words_.clear();
  auto rank = [&](int i) {
    const Candidate& c = candidates_[static_cast<size_t>(i)];
    const bool in_vocabulary = c.id >= 0;
    const double model_part = share * (in_vocabulary ? p_model(c.id) : p_unk_ * c.share);
    const double cache_part = cache_p_[static_cast<size_t>(i)];
    ranked_words_.push_back(
        {model_part + cache_part, i, cache_part > model_part ? Source::kHistory : Source::kModel});
  };
  // The vocabulary's words; the others only where a cache gives them
  // something (a lexicon word is offered after these).
  for (int i = 0; i < lexicon_begin_; ++i) rank(i);
  std::sort(cached_.begin(), cached_.end());
  cached_.erase(std::unique(cached_.begin(), cached_.end()), cached_.end());
  for (const int i : cached_) {
    if (i >= lexicon_begin_ && cache_p_[static_cast<size_t>(i)] != 0) rank(i);
  }
  // Only the best few are needed at a word start, the keystroke that waits
  // for the forward pass: sort those now, the rest when a prefix reaches them.
  sorted_ = std::min(kFirstSorted, ranked_words_.size());
  std::partial_sort(ranked_words_.begin(),
                    ranked_words_.begin() + static_cast<std::ptrdiff_t>(sorted_),
                    ranked_words_.end(), better);
}

double Completer::model_share() const {
  return options_.learn ? 1 - options_.lambda - options_.context_weight : 1;
}

bool Completer::better(const Ranked& a, const Ranked& b) {
  return a.probability != b.probability ? a.probability > b.probability : a.candidate < b.candidate;
}

const Completer::Ranked& Completer::ranked(size_t i) {
  if (i >= sorted_) {
    // Eight times as many as sorted so far (better is a strict total order,
    // so the sequence is the one a whole sort gives): a prefix that fits few
    // of a large vocabulary's best words does not sort all of them.
    const size_t more = std::min(ranked_words_.size(), std::max(i + 1, sorted_ * 8));
    std::partial_sort(ranked_words_.begin() + static_cast<std::ptrdiff_t>(sorted_),
                      ranked_words_.begin() + static_cast<std::ptrdiff_t>(more),
                      ranked_words_.end(), better);
    sorted_ = more;
  }
  return ranked_words_[i];
}

void Completer::track_offered(std::string_view tail, const std::string& prefix_key) {
  if (tail != offered_tail_ || !prefix_key.starts_with(offered_prefix_)) {
    offered_.clear();
    offered_tail_.assign(tail);
  }
  offered_prefix_ = prefix_key;
}

Completion Completer::complete(std::string_view text) {
  const TypedText typed = split_typed(text);
  if (options_.learn) learn_typed(text, typed.context.size());
  const std::string_view tail = context_tail(typed.context, model_.config.max_len);
  rank_context(tail);
  ranked_end_ = typed.context.size();
  const std::string prefix_key = fold_case(typed.prefix);
  if (options_.no_repeat) track_offered(tail, prefix_key);
  const bool capital = starts_with_capital(typed.prefix) || starts_sentence(typed.context);
  // Apostrophes as the writer last typed one, in the text the model reads or
  // the word ("don’t" for a writer of "it’s", where the model's word is
  // "don't"): the tail and the prefix, which end the text.
  const std::string_view apostrophe =
      writers_apostrophe(text.substr(static_cast<size_t>(tail.data() - text.data())));

  Completion out{std::string(typed.context), std::string(typed.prefix), {}};
  const auto k = static_cast<size_t>(std::max(options_.k, 0));
  // Offers candidate i when it fits the prefix; true once k are offered. A
  // cased vocabulary holds words that differ only in case ("States",
  // "states"), which the writer's case would offer twice: the more probable
  // one stands for both.
  std::unordered_set<std::string_view> offered_keys;
  auto offer = [&](int i, double probability, Source source) {
    const Candidate& c = candidates_[static_cast<size_t>(i)];
    if (!c.key.starts_with(prefix_key) || !offered_keys.insert(c.key).second) return false;
    // Offered as written: "that's" offered does not hide "that’s" once the
    // writer types ’.
    if (options_.no_repeat && !offered_.insert(with_apostrophe(c.key, apostrophe)).second) {
      return false;
    }
    const std::string_view form = cache_.form(c.key);
    out.suggestions.push_back(
        {with_apostrophe(written_form(form.empty() ? c.word : form, capital), apostrophe),
         probability, source});
    return out.suggestions.size() >= k;
  };
  if (k == 0) return out;
  for (size_t i = 0; i < ranked_words_.size(); ++i) {
    const Ranked& r = ranked(i);
    if (offer(r.candidate, r.probability, r.source)) return out;
  }
  // Too few: the lexicon's words outside the vocabulary, most frequent first
  // (p(unk) * count / oov_count falls with the count).
  const double share = model_share();
  auto offer_lexicon = [&](int i) {
    if (cache_p_[static_cast<size_t>(i)] > 0) return false;  // ranked above with the caches
    const double p = share * p_unk_ * candidates_[static_cast<size_t>(i)].share;
    return offer(i, p, Source::kLexicon);
  };
  // The words whose keys start with the prefix, from the index by key, in
  // the lexicon's order; a short prefix that fits many walks the lexicon.
  const auto by_key = [&](int i) -> const std::string& {
    return candidates_[static_cast<size_t>(i)].key;
  };
  const auto first = std::partition_point(lexicon_by_key_.begin(), lexicon_by_key_.end(),
                                          [&](int i) { return by_key(i) < prefix_key; });
  const auto last = std::partition_point(first, lexicon_by_key_.end(),
                                         [&](int i) { return by_key(i).starts_with(prefix_key); });
  if (last - first <= kLexiconFitting) {
    fitting_.assign(first, last);
    std::sort(fitting_.begin(), fitting_.end());
    for (const int i : fitting_) {
      if (offer_lexicon(i)) return out;
    }
    return out;
  }
  for (int i = lexicon_begin_; i < lexicon_end_; ++i) {
    if (offer_lexicon(i)) return out;
  }
  return out;
}

void Completer::prefetch(std::span<const std::string> texts) {
  prefetched_.clear();
  std::vector<std::string> tails;
  std::vector<Encoded> inputs;
  for (const std::string& text : texts) {
    std::string tail(context_tail(split_typed(text).context, model_.config.max_len));
    const bool known = (ranked_ && tail == ranked_tail_) || prefetched_.count(tail) != 0 ||
                       std::find(tails.begin(), tails.end(), tail) != tails.end();
    if (known) continue;
    try {
      Encoded input = encode_growing(model_, tail);
      if (predictor_.extends_cache(input)) {
        // One writer's text grown by a word: its new tokens alone, through
        // the predictor's key/value cache, in stream order.
        const std::span<const float> logits = predictor_.next_logits(input);
        const std::span<const float> hidden = predictor_.hidden();
        prefetched_[tail] = {{logits.begin(), logits.end()}, {hidden.begin(), hidden.end()}};
        ++forward_passes_;
        continue;
      }
      inputs.push_back(std::move(input));
      tails.push_back(std::move(tail));
    } catch (const Error& e) {
      if (e.code() != ExitCode::kInput) throw;
    }
  }
  if (inputs.size() < 2) return;  // one context: complete() runs it alone, as without a batch
  const std::span<const float> logits = predictor_.next_logits(inputs);
  const std::span<const float> hidden = predictor_.hidden();
  const auto V = static_cast<size_t>(model_.config.vocab_size);
  const auto d = static_cast<size_t>(model_.config.d_model);
  for (size_t b = 0; b < tails.size(); ++b) {
    const std::span<const float> h = hidden.subspan(b * d, d);
    prefetched_[tails[b]] = {{logits.begin() + static_cast<std::ptrdiff_t>(b * V),
                              logits.begin() + static_cast<std::ptrdiff_t>((b + 1) * V)},
                             {h.begin(), h.end()}};
  }
  forward_passes_ += static_cast<int>(tails.size());
}

void Completer::learn(std::string_view text) { learn_words(text, true); }

void Completer::learn_words(std::string_view text, bool sentence_start,
                            std::span<const float> context) {
  TokenizerOptions as_written = model_.config.tokenizer;
  as_written.lowercase = false;
  for (const std::string& token : tokenize(text, as_written)) {
    // A word with bytes that are not UTF-8 is no word to offer back (found
    // by fuzzing: two of them printed alike once replaced in JSON).
    if (has_letter_or_digit(token) && is_valid_utf8(token)) {
      const std::string key = fold_case(token);
      const int candidate = candidate_for(key, normalized_text(token, model_.config.tokenizer));
      context_cache_.add(context, candidate);
      context = {};
      // At a sentence start the capital is the sentence's, not the word's.
      cache_.add(key, sentence_start ? std::string_view() : std::string_view(token));
      sentence_start = false;
      learned_since_ranked_ = true;
    } else {
      context = {};  // a mark came first: the context it followed is not the word's
      if (ends_sentence(token)) sentence_start = true;
    }
  }
}

void Completer::learn_typed(std::string_view text, size_t context_end) {
  size_t common = common_prefix(learned_, text);
  // Backspace, or a cursor moved back (`type`): what was learned stays
  // learned, and typing it again learns nothing new.
  if (common == text.size()) return;
  if (common < learned_.size()) {
    // The text changed behind what was learned: its words from the changed
    // one on count as new (a word deleted and typed again is learned again).
    while (common > 0 && !is_space(text[common - 1])) --common;
  }
  if (common < context_end) {
    // The first word learned followed the context ranked last when that
    // context ended where the word starts (typed word by word) and nothing
    // before it changed since.
    const bool followed = !ranked_h_.empty() && ranked_end_ == common && common == learned_.size();
    learn_words(text.substr(common, context_end - common), starts_sentence(text.substr(0, common)),
                followed ? std::span<const float>(ranked_h_) : std::span<const float>());
  }
  learned_.resize(std::min(common, context_end));
  if (common < context_end) learned_.append(text.substr(common, context_end - common));
}

}  // namespace nextword
