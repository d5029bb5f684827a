#include "complete/completer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_set>

#include "base/error.h"
#include "complete/typed_text.h"
#include "math/layers.h"
#include "predict/word_search.h"
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

Completer::Completer(const Model& model, const LexiconIndex* lexicon,
                     const CompleteOptions& options)
    : model_(model),
      lexicon_(lexicon),
      options_(options),
      predictor_(model),
      cache_(options.decay),
      context_cache_(static_cast<size_t>(std::max(options.context_uses, 0)),
                     options.context_theta) {
  if (options.learn && model.subword) {
    throw Error(ExitCode::kUsage,
                "learn: needs a model of whole words; this model's tokens are subword pieces");
  }
  // A memory at temperature 1: the transformer's logits, the mixture taken
  // in parts (MixtureParts), not as a row of logs.
  mixed_parts_ = model.memory != nullptr && !model.subword &&
                 (!options.learn || options.model_temperature == 1);
  if (mixed_parts_) predictor_.set_mixing(false);
  // The vocabulary's words and their keys from the index (lexicon.bin, or
  // made here for a model without one), in id order and by key.
  if (lexicon_ == nullptr) {
    own_index_ = std::make_shared<const LexiconIndex>(
        LexiconIndex::build(Lexicon{}, LexiconIndexSource::of(model)));
    lexicon_ = own_index_.get();
  }
  const Vocabulary& vocab = model.vocab;
  const size_t m = lexicon_->vocabulary_size();
  lexicon_begin_ = static_cast<int>(m);
  vocabulary_.resize(m);
  std::iota(vocabulary_.begin(), vocabulary_.end(), 0);
  vocabulary_by_key_.resize(m);
  vocabulary_ids_.resize(m);
  vocabulary_key_ids_.resize(m);
  candidate_of_id_.assign(static_cast<size_t>(vocab.size()), -1);
  for (size_t j = 0; j < m; ++j) {
    vocabulary_ids_[j] = lexicon_->vocabulary_word(j).id;
    candidate_of_id_[static_cast<size_t>(vocabulary_ids_[j])] = static_cast<int>(j);
  }
  for (size_t j = 0; j < m; ++j) {
    vocabulary_by_key_[j] = static_cast<int>(lexicon_->vocabulary_by_key(j));
    vocabulary_key_ids_[j] = vocabulary_ids_[static_cast<size_t>(vocabulary_by_key_[j])];
  }
}

std::string_view Completer::key_of(int i) const {
  return i < lexicon_begin_ ? lexicon_->vocabulary_word(static_cast<size_t>(i)).key
                            : outside(i).key;
}

std::string_view Completer::word_of(int i) const {
  return i < lexicon_begin_ ? model_.vocab.word(vocabulary_ids_[static_cast<size_t>(i)])
                            : outside(i).word;
}

int Completer::candidate_for(const std::string& key, std::string_view word) {
  if (by_key_.empty()) {
    // The first word learned: the vocabulary's keys, the lower id first.
    for (int i = 0; i < candidate_count(); ++i) by_key_.emplace(key_of(i), i);
  }
  const auto [it, added] = by_key_.emplace(key, candidate_count());
  if (!added) return it->second;
  // A lexicon word keeps its spelling, count and place; a word of the
  // writer's own ranks after all of the lexicon's.
  const std::optional<size_t> rank = lexicon_ ? lexicon_->find(key) : std::nullopt;
  if (rank) {
    const LexiconIndex::Word w = lexicon_->at(*rank);
    outside_.push_back({w.word, w.key, nullptr,
                        static_cast<double>(w.count) / lexicon_->oov_count(),
                        lexicon_begin_ + static_cast<int64_t>(*rank)});
  } else {
    const auto lexicon_words = static_cast<int64_t>(lexicon_ ? lexicon_->size() : 0);
    auto own = std::make_shared<const std::string>(std::string(word) + key);
    const std::string_view both = *own;
    outside_.push_back({both.substr(0, word.size()), both.substr(word.size()), std::move(own), 0,
                        lexicon_begin_ + lexicon_words + it->second});
  }
  return it->second;
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
  auto offer_word = [&](std::string_view key, std::string_view word, double probability,
                        Source source) {
    if (!key.starts_with(prefix_key) || !offered_keys.insert(key).second) return false;
    // Offered as written: "that's" offered does not hide "that’s" once the
    // writer types ’.
    if (options_.no_repeat &&
        !offered_.insert(with_apostrophe(std::string(key), apostrophe)).second) {
      return false;
    }
    const std::string_view form = cache_.form(std::string(key));
    out.suggestions.push_back(
        {with_apostrophe(written_form(form.empty() ? word : form, capital), apostrophe),
         probability, source});
    return out.suggestions.size() >= k;
  };
  auto offer = [&](int i, double probability, Source source) {
    return offer_word(key_of(i), word_of(i), probability, source);
  };
  if (k == 0) return out;
  if (model_.subword) {
    ++forward_passes_;  // a search: its passes share the cache
    for (const NextWord& w : words_after(predictor_, tail, typed.prefix)) {
      if (!has_letter_or_digit(w.word)) continue;  // as no mark is a candidate above
      if (offer_word(fold_case(w.word), w.word, w.probability, Source::kModel)) break;
    }
    return out;
  }
  // The lexicon's words outside the vocabulary that fit, most frequent
  // first: p(unk) count / oov_count falls with the count, so they come in
  // the order of their probabilities, and each is offered before the first
  // vocabulary word it beats. A word the writer used is a candidate already,
  // ranked with the caches.
  const double share = model_share();
  const auto [first, last] = lexicon_->fitting(prefix_key);
  const bool by_key = last - first <= kLexiconFitting;
  if (by_key) {  // the ranks that fit, least first
    fitting_.clear();
    for (size_t j = first; j < last; ++j) fitting_.push_back(lexicon_->rank_by_key(j));
    std::make_heap(fitting_.begin(), fitting_.end(), std::greater<>());
  }
  size_t walked = 0;  // without by_key: the lexicon's ranks looked at
  auto next_lexicon = [&]() -> std::optional<LexiconIndex::Word> {
    while (true) {
      size_t rank = 0;
      if (by_key) {
        if (fitting_.empty()) return std::nullopt;
        std::pop_heap(fitting_.begin(), fitting_.end(), std::greater<>());
        rank = fitting_.back();
        fitting_.pop_back();
      } else {
        if (walked >= lexicon_->size()) return std::nullopt;
        rank = walked++;
      }
      const LexiconIndex::Word w = lexicon_->at(rank);
      if (!w.key.starts_with(prefix_key)) continue;
      if (const auto it = cached_.empty() ? by_key_.end() : by_key_.find(std::string(w.key));
          it != by_key_.end() && cache_p_[static_cast<size_t>(it->second)] > 0) {
        continue;
      }
      return w;
    }
  };
  // The next lexicon word that fits, with its probability.
  struct Pending {
    LexiconIndex::Word word;
    double probability = 0;
  };
  auto next_pending = [&]() -> std::optional<Pending> {
    const std::optional<LexiconIndex::Word> w = next_lexicon();
    if (!w) return std::nullopt;
    return Pending{*w, share * p_unk_ * (static_cast<double>(w->count) / lexicon_->oov_count())};
  };
  std::optional<Pending> pending = next_pending();
  // Offers the pending lexicon words more probable than `p`; true once k are offered.
  auto offer_lexicon_above = [&](double p) {
    for (; pending && pending->probability > p; pending = next_pending()) {
      if (offer_word(pending->word.key, pending->word.word, pending->probability,
                     Source::kLexicon)) {
        return true;
      }
    }
    return false;
  };
  if (offer_ranked(prefix_key, [&](const Ranked& r) {
        return offer_lexicon_above(r.probability) || offer(r.candidate, r.probability, r.source);
      })) {
    return out;
  }
  offer_lexicon_above(-1);
  return out;
}

void Completer::prefetch(std::span<const std::string> texts) {
  if (model_.subword) return;  // the word search runs its own passes, through the cache
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
      const size_t entry =
          cache_.add(key, sentence_start ? std::string_view() : std::string_view(token));
      if (entry == cache_candidates_.size()) cache_candidates_.push_back(candidate);
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
