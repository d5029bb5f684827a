// Predictive text entry: suggestions for the word being typed, or for the
// next word, from everything typed so far (docs/usage.md, "Every command
// and its options", complete and --learn).
//
// The transformer scores the context (the text before the word being typed)
// once per word: keystrokes inside a word only filter and re-rank what that
// one forward pass gave. Out-of-vocabulary words come from the model's
// lexicon; with `learn`, two caches of the writer's own words are
// interpolated, the words (word_cache.h) and the contexts they followed
// (context_cache.h):
//
//   p(w) = (1 - lambda - mu) p_model(w) + lambda p_cache(w) + mu p_context(w | h)
//   p_model(w) = softmax(logits / T)[w]             for a vocabulary word
//              = p(unk) * count(w) / oov_count       for a lexicon word outside it
//
// (oov_count: the summed counts of the lexicon's words outside the
// vocabulary; without learn, lambda = mu = 0 and T = 1).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "complete/context_cache.h"
#include "complete/word_cache.h"
#include "model/lexicon_index.h"
#include "model/model_file.h"
#include "predict/memory_mixture.h"
#include "predict/predictor.h"

namespace nextword {

struct CompleteOptions {
  int k = 6;               // suggestions at most
  bool no_repeat = false;  // a word offered for the word being typed is not offered again
                           // (in the same spelling: "that's" does not hide "that’s")
  bool learn = false;      // interpolate the caches of the writer's words
  // With learn; tuned on held-out text (tools/tune_learn.py;
  // docs/usage.md, "Every command and its options"):
  // the word cache's weight lambda, and how much a use counts less for each
  // word written after it; the context cache's weight mu, its sharpness
  // theta and how many uses it keeps (complete/context_cache.h); the
  // model's temperature.
  double lambda = 0.03;
  double decay = 0.98;
  double context_weight = 0.08;
  double context_theta = 10;
  int context_uses = 2000;
  // T: p_model = softmax(logits / T) where the caches are mixed in.
  double model_temperature = 1.5;

  bool operator==(const CompleteOptions&) const = default;
};

// Where a suggestion's probability mostly comes from.
enum class Source { kModel, kLexicon, kHistory };
const char* source_name(Source source);

struct Suggestion {
  std::string word;  // as the writer would write it (case follows the writer)
  double probability = 0;
  Source source = Source::kModel;
};

struct Completion {
  std::string context;                  // the text before the word being typed
  std::string prefix;                   // the start of that word, as typed ("" between words)
  std::vector<Suggestion> suggestions;  // best first, at most k
};

// One typing session: successive calls are successive states of one text
// (for `no_repeat` and `learn`). Not thread-safe.
class Completer {
 public:
  // `lexicon` may be null. The model and lexicon must outlive the completer.
  Completer(const Model& model, const LexiconIndex* lexicon, const CompleteOptions& options);

  // The suggestions for `text`, everything typed so far (its whitespace at
  // the end included). With `learn`, the words it finished since the
  // previous call are learned first.
  Completion complete(std::string_view text);

  // Runs the forward passes that complete() will need for `texts` (lines
  // already waiting in a stream) together, in one batch: a stream of many
  // contexts goes faster, and what complete() returns is the same up to
  // float rounding (the batch's products split differently).
  void prefetch(std::span<const std::string> texts);

  // Learns every word of `text` as written by the writer (a history file).
  void learn(std::string_view text);

  const CompleteOptions& options() const { return options_; }
  // Forward passes run so far (one per distinct context, not per keystroke).
  int forward_passes() const { return forward_passes_; }

 private:
  // A word that can be suggested: a vocabulary word, a lexicon word outside
  // the vocabulary the writer has used, or a word only the writer has used.
  // (The lexicon's other words are offered from the index, never copied.)
  // Candidates [0, lexicon_begin_) are the vocabulary's words offered, read
  // from the vocabulary and the index when asked for (copying each would be
  // a large share of `complete` as a process); the rest are outside_.
  struct Candidate {
    std::string_view word;  // as the model or lexicon spells it
    std::string_view key;   // folded, for matching (text/words.h)
    // A word only the writer has used: its word then its key, shared by
    // the copies of a completer (never changed).
    std::shared_ptr<const std::string> own;
    double share = 0;  // count / oov_count for a lexicon word outside the vocabulary
    // Equal probabilities rank in this order: the vocabulary's words, the
    // lexicon's in its order, then the writer's own.
    int64_t tie = 0;
  };
  struct Ranked {
    double probability;
    int candidate;
    Source source;
    int64_t tie;
  };

  // p_model's weight in p(w): 1 - lambda - mu with learn, else 1.
  double model_share() const;
  // Best first: the higher probability, then the lower candidate index.
  static bool better(const Ranked& a, const Ranked& b);
  // The ranked context's logit of vocabulary id `id` (0 for all without logits).
  float logit(int id) const { return logits_.empty() ? 0.0f : logits_[static_cast<size_t>(id)]; }
  // p_model of vocabulary word `id` (with the mixture in parts, its
  // memory's part too).
  double model_probability(int id) const;
  // The transformer's part of p_model for a word with that logit.
  double transformer_probability(float logit) const;
  // Candidate i's place in the ranking of the context ranked last.
  Ranked rank(int i) const;
  // The part of `by_key` (candidates in the order of their keys) whose keys
  // start with `prefix_key`.
  std::pair<std::vector<int>::const_iterator, std::vector<int>::const_iterator> fitting(
      const std::vector<int>& by_key, const std::string& prefix_key) const;
  // Calls `offer` with the vocabulary's words and the cached words that fit
  // `prefix_key`, best first, until it returns true (then true).
  bool offer_ranked(const std::string& prefix_key, const std::function<bool(const Ranked&)>& offer);
  // How many of the best logits offer_ranked ranks exactly before the rest.
  static constexpr size_t kFirstRanked = 64;
  // Lexicon words fitting a prefix that are gathered by key; more walk the lexicon.
  static constexpr size_t kLexiconFitting = 4096;

  int candidate_for(const std::string& key, std::string_view word);
  // Ranks every candidate for `tail` (a forward pass), unless it is the
  // context ranked last.
  void rank_context(std::string_view tail);
  // Learns the words of `text` (whitespace-separated chunks of it);
  // `sentence_start`: whether its first word starts a sentence.
  // `context`: the context vector the first word followed, or empty.
  void learn_words(std::string_view text, bool sentence_start, std::span<const float> context = {});
  // Learns what `text` finished beyond what earlier calls learned.
  void learn_typed(std::string_view text, size_t context_end);
  // The no-repeat filter for this word: forgets what was offered when
  // another word is being typed.
  void track_offered(std::string_view tail, const std::string& prefix_key);

  const Model& model_;
  const LexiconIndex* lexicon_;  // never null: own_index_ without one given
  std::shared_ptr<const LexiconIndex>
      own_index_;  // the vocabulary's, for a model without a lexicon
  CompleteOptions options_;
  Predictor predictor_;
  std::vector<Candidate> outside_;  // candidates [lexicon_begin_, ...)
  int candidate_count() const { return lexicon_begin_ + static_cast<int>(outside_.size()); }
  const Candidate& outside(int i) const {
    return outside_[static_cast<size_t>(i - lexicon_begin_)];
  }
  // Candidate i's vocabulary id, or -1 for a word outside the vocabulary.
  int id_of(int i) const {
    return i < lexicon_begin_ ? vocabulary_ids_[static_cast<size_t>(i)] : -1;
  }
  std::string_view key_of(int i) const;
  std::string_view word_of(int i) const;
  // The best candidate of each key, from the first word learned on.
  std::unordered_map<std::string, int> by_key_;
  // The vocabulary's candidates, [0, lexicon_begin_), in their
  // order and in the order of their keys, with their vocabulary ids.
  std::vector<int> vocabulary_, vocabulary_ids_;
  std::vector<int> vocabulary_by_key_, vocabulary_key_ids_;
  std::vector<int> candidate_of_id_;  // each vocabulary id's candidate, or -1
  int lexicon_begin_ = 0;             // candidates [lexicon_begin_, ...) are outside the vocabulary
  WordCache cache_;
  std::vector<int> cache_candidates_;  // the candidate of each of its entries
  ContextCache context_cache_;

  // The context ranked last (none before the first call).
  bool ranked_ = false;
  std::string ranked_tail_;
  double p_unk_ = 0;
  std::vector<float> logits_;    // its logits / T (empty: a uniform p_model)
  double log_normalizer_ = 0;    // log of the sum of their exps
  std::vector<double> cache_p_;  // per candidate: lambda p_cache + mu p_context
  std::vector<int> cached_;      // the candidates cache_p_ may give more than 0, ascending
  std::vector<Ranked> order_;    // offer_ranked's candidates
  std::vector<float> gathered_;  // offer_ranked's logits (or memory parts) of the fitting words
  bool mixed_parts_ = false;     // the memory's mixture taken in parts_
  MixtureParts parts_;           // the ranked context's (with mixed_parts_)
  std::vector<size_t> fitting_;  // ranks of the lexicon words that fit the prefix
  std::vector<float> ranked_h_;  // the ranked context's vector (empty: none)
  size_t ranked_end_ = 0;        // where that context ends in the text
  bool learned_since_ranked_ = false;

  // Logits of contexts prefetched for the lines waiting, by context tail.
  struct Prefetched {
    std::vector<float> logits, hidden;
  };
  std::unordered_map<std::string, Prefetched> prefetched_;
  std::string learned_;  // the text whose words have been learned (with `learn`)
  std::unordered_set<std::string> offered_;
  std::string offered_tail_, offered_prefix_;
  int forward_passes_ = 0;
};

}  // namespace nextword
