#include "predict/predictor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "base/error.h"
#include "base/threading.h"
#include "math/layers.h"
#include "predict/memory_mixture.h"
#include "predict/ranking.h"
#include "predict/word_search.h"
#include "text/tokenizer.h"
#include "text/words.h"

namespace nextword {

namespace {

// How much more frequent (by vocabulary rank: ids are in order of frequency)
// a capitalized word must be than its lowercase spelling for a cased model
// to read the lowercase one as it: "united" as "United", "york" as "York",
// never "president" or "us".
constexpr int kCapitalRankRatio = 10;

// The id a cased model reads for `word`: a word typed in lowercase whose
// capitalized form the vocabulary holds and its training text wrote far
// more often (or only) reads as that form, the way a person typing in
// lowercase means it; a lone "i" is always "I". -1 when neither is a
// vocabulary word.
int cased_id(const Model& model, std::string& word) {
  const int id = model.vocab.find(word);
  const auto first = static_cast<unsigned char>(word.empty() ? 0 : word[0]);
  if (model.config.tokenizer.lowercase || first < 'a' || first > 'z') return id;
  for (const char c : word) {
    if (c >= 'A' && c <= 'Z') return id;
  }
  std::string capitalized = word;
  capitalized[0] = static_cast<char>(first - 'a' + 'A');
  const int capital_id = model.vocab.find(capitalized);
  if (capital_id < 0 || model.is_special(capital_id)) return id;
  if (id >= 0 && !model.is_special(id) && word != "i" &&
      static_cast<int64_t>(capital_id) * kCapitalRankRatio > id)
    return id;
  word = std::move(capitalized);
  return capital_id;
}

// The ids of e.tokens (the first is bos when has_bos); true when some token other
// than bos is a vocabulary word. A word spelled like a special token is still
// an unknown word.
bool look_up(const Model& model, Encoded& e, bool has_bos) {
  bool any_known = false;
  for (size_t i = 0; i < e.tokens.size(); ++i) {
    const bool is_bos = has_bos && i == 0;
    // A subword model's tokens are its own pieces, found as they are.
    const int id = is_bos          ? model.bos_id
                   : model.subword ? model.vocab.find(e.tokens[i])
                                   : cased_id(model, e.tokens[i]);
    if (id < 0 || (!is_bos && model.is_special(id))) {
      e.unknown.push_back(e.tokens[i]);
      e.ids.push_back(model.unk_id);
    } else {
      e.ids.push_back(id);
      any_known = any_known || !is_bos;
    }
  }
  return any_known;
}

std::vector<std::string> tokens_of(const Model& model, std::string_view text) {
  const Config& c = model.config;
  std::vector<std::string> tokens;
  if (c.has_bos()) tokens.push_back(c.bos_token);
  if (model.subword) {
    for (const int id : model.subword->encode(text)) tokens.push_back(model.subword->piece(id));
    return tokens;
  }
  for (std::string& word : tokenize(text, c.tokenizer)) tokens.push_back(std::move(word));
  return tokens;
}

}  // namespace

Encoded encode(const Model& model, std::string_view phrase, Unknowns unknowns) {
  const Config& c = model.config;
  Encoded e;
  e.tokens = tokens_of(model, phrase);
  if (e.tokens.empty()) throw input_error("the phrase has no words");
  if (e.tokens.size() > static_cast<size_t>(c.max_len)) {
    e.tokens.erase(e.tokens.begin(), e.tokens.end() - c.max_len);
    e.truncated = true;
  }
  const bool bos_alone = e.tokens.size() == (c.has_bos() ? 1u : 0u);  // a valid input
  const bool any_known = look_up(model, e, c.has_bos() && !e.truncated) || bos_alone;
  if (!any_known && unknowns == Unknowns::kRefuse) {
    throw input_error("no word of the phrase is in the vocabulary: " + join(e.unknown));
  }
  return e;
}

namespace {

// The cut of encode_growing, on a window already cut to its last max_len tokens.
void start_after_sentence_end(const Model& model, Encoded& e) {
  const size_t half = e.tokens.size() / 2;
  size_t cut = 1;
  while (cut <= half && !ends_sentence(e.tokens[cut - 1])) ++cut;
  if (cut > half) return;
  // e.unknown lists the window's unknown words in order (none in
  // growing_window's): drop the cut ones.
  const auto unknown_cut =
      std::min(std::count(e.ids.begin(), e.ids.begin() + static_cast<long>(cut), model.unk_id),
               static_cast<long>(e.unknown.size()));
  e.unknown.erase(e.unknown.begin(), e.unknown.begin() + unknown_cut);
  e.tokens.erase(e.tokens.begin(), e.tokens.begin() + static_cast<long>(cut));
  e.ids.erase(e.ids.begin(), e.ids.begin() + static_cast<long>(cut));
}

}  // namespace

Encoded encode_growing(const Model& model, std::string_view text) {
  Encoded e = encode(model, text, Unknowns::kAllow);
  if (e.truncated) start_after_sentence_end(model, e);
  return e;
}

Encoded growing_window(const Model& model, const Encoded& text) {
  const size_t max_len = static_cast<size_t>(model.config.max_len);
  if (text.ids.size() <= max_len) return text;
  const long from = static_cast<long>(text.ids.size() - max_len);
  Encoded e;
  e.tokens.assign(text.tokens.begin() + from, text.tokens.end());
  e.ids.assign(text.ids.begin() + from, text.ids.end());
  e.truncated = true;
  start_after_sentence_end(model, e);
  return e;
}

Encoded encode_text(const Model& model, std::string_view text) {
  Encoded e;
  e.tokens = tokens_of(model, text);
  look_up(model, e, model.config.has_bos());
  return e;
}

Prediction Predictor::predict(std::string_view phrase, int k, bool with_attention) {
  return predict(encode(model_, phrase), k, with_attention);
}

Prediction Predictor::predict(Encoded input, int k, bool with_attention) {
  std::vector<Encoded> one;
  one.push_back(std::move(input));
  return std::move(predict(std::move(one), k, with_attention).front());
}

bool Predictor::extends_cache(const Encoded& input) const {
  const std::span<const int> ids = input.ids, held = cache_.ids();
  return !held.empty() && held.size() <= ids.size() &&
         std::equal(held.begin(), held.end(), ids.begin());
}

bool Predictor::run_cached(const Encoded& input, bool with_logits) {
  const std::span<const int> ids = input.ids;
  // The cache's bits are a full pass's only where every row is computed
  // alone: under Threading::kRows, which everything that prints runs under.
  if (!extendable(model_) || !fixed_row_blocks() || ids.empty()) {
    cache_.clear();
    return false;
  }
  // A text that only shares its first tokens with the cache's (a word typed
  // over, the word search's next spelling) runs from the first that
  // differs; its last token runs at least, for its logits.
  if (!extends_cache(input)) {
    const auto held = cache_.ids();
    const auto shared = static_cast<size_t>(
        std::mismatch(held.begin(), held.end(), ids.begin(), ids.end()).first - held.begin());
    cache_.truncate(std::min(shared, ids.size() - 1));
  }
  // The same text again after a pass without logits: its last token again.
  if (with_logits && cache_.ids().size() == ids.size() && cache_.logits().empty()) {
    cache_.truncate(ids.size() - 1);
  }
  const size_t from = cache_.ids().size();
  tokens_run_ = static_cast<int>(ids.size() - from);
  if (tokens_run_ > 0) cache_.extend(model_, ids.subspan(from), with_logits);
  hidden_ = cache_.hidden();
  return true;
}

std::span<const float> Predictor::next_logits(const Encoded& input) {
  if (!run_cached(input, true)) {
    run({&input, 1});
    tokens_run_ = static_cast<int>(input.ids.size());
    return logits();
  }
  if (!model_.memory || !mix_) return cache_.logits();
  // The cache keeps the transformer's logits; the mixture goes in a copy.
  const std::span<const float> logits = cache_.logits();
  mixed_.assign(logits.begin(), logits.end());
  mix_memory(model_, input.ids, mixed_);
  return mixed_;
}

LogitRow& Predictor::next_row(const Encoded& input) {
  const bool mixed = model_.memory != nullptr && mix_;
  if (!model_.config.adaptive() || mixed || !run_cached(input, false)) {
    full_row_ = FullRow(model_, next_logits(input));
    return full_row_;
  }
  adaptive_row_.reset(cache_.hidden());
  return adaptive_row_;
}

std::span<const float> Predictor::next_logits(std::span<const Encoded> inputs) {
  run(inputs);
  return {state_.logits.data(), inputs.size() * static_cast<size_t>(model_.config.vocab_size)};
}

bool Predictor::start_branches(const Encoded& input) {
  branches_.clear();
  return extends_cache(input) && cache_.ids().size() == input.ids.size();
}

std::span<const float> Predictor::grow_branches(std::span<const int> parents,
                                                std::span<const int> ids) {
  const std::span<const float> logits = branches_.grow(model_, cache_, parents, ids);
  tokens_run_ = branches_.rows_run();
  if (!model_.memory || !mix_) return logits;
  // The memory reads each continuation's whole text.
  const auto V = static_cast<size_t>(model_.config.vocab_size);
  mixed_.assign(logits.begin(), logits.end());
  for (int b = 0; b < branches_.count(); ++b) {
    ids_.assign(cache_.ids().begin(), cache_.ids().end());
    const std::span<const int> tokens = branches_.tokens(b);
    ids_.insert(ids_.end(), tokens.begin(), tokens.end());
    mix_memory(model_, ids_, std::span<float>(mixed_).subspan(static_cast<size_t>(b) * V, V));
  }
  return mixed_;
}

void Predictor::run(std::span<const Encoded> inputs) {
  lengths_.clear();
  ids_.clear();
  for (const Encoded& e : inputs) {
    lengths_.push_back(static_cast<int>(e.ids.size()));
    ids_.insert(ids_.end(), e.ids.begin(), e.ids.end());
  }
  forward(model_, state_, ids_.data(), lengths_);
  if (model_.memory && mix_) {
    const auto V = static_cast<size_t>(model_.config.vocab_size);
    for (size_t b = 0; b < inputs.size(); ++b) {
      mix_memory(model_, inputs[b].ids, std::span<float>(state_.logits).subspan(b * V, V));
    }
  }
  hidden_ = state_.all_positions
                ? std::span<const float>()
                : std::span<const float>(
                      state_.Z.data(), inputs.size() * static_cast<size_t>(model_.config.d_model));
}

std::vector<Prediction> Predictor::predict(std::vector<Encoded> inputs, int k,
                                           bool with_attention) {
  run(inputs);
  std::vector<Prediction> predictions(inputs.size());
  const auto B = static_cast<int>(inputs.size());
#pragma omp parallel for schedule(static) if (B >= 8)
  for (int b = 0; b < B; ++b) rank(b, k, predictions[static_cast<size_t>(b)]);
  for (size_t b = 0; b < inputs.size(); ++b) {
    Prediction& p = predictions[b];
    p.input = std::move(inputs[b]);
    if (with_attention) {
      for (const std::vector<float>& A : state_.A) {
        p.attention.insert(p.attention.end(), A.begin() + state_.sequences.A_starts[b],
                           A.begin() + state_.sequences.A_starts[b + 1]);
      }
    }
  }
  // A subword model speaks in words: each input's best whole next words,
  // by the search over pieces (which reuses this predictor's passes).
  if (model_.subword) {
    for (Prediction& p : predictions) p.words = next_words(*this, p.input, k);
  }
  return predictions;
}

void Predictor::rank(int b, int k, Prediction& p) const {
  top_candidates(model_, state_.logits.data() + area(b, model_.config.vocab_size), k, p.top);
}

void top_candidates(const Model& model, const float* logits, int k, std::vector<Candidate>& top) {
  // Each thread ranks in its own buffer.
  thread_local std::vector<int> best;
  rank_top(model, logits, k, best);
  // probability = e^(logit - ln sum_j e^logit_j), over the whole vocabulary.
  const double log_normalizer = log_sum_exp(logits, model.config.vocab_size);
  top.clear();
  for (const int id : best) {
    top.push_back({id, probability_of(logits[id], log_normalizer), logits[id]});
  }
}

float probability_of(float logit, double log_normalizer) {
  return static_cast<float>(std::exp(static_cast<double>(logit) - log_normalizer));
}

std::span<const float> Predictor::logits() const {
  const auto V = static_cast<size_t>(model_.config.vocab_size);
  if (state_.sequences.B == 0) return {};
  return {state_.logits.data() + (static_cast<size_t>(state_.sequences.B) - 1) * V, V};
}

}  // namespace nextword
