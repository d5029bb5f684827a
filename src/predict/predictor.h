// From a phrase to its most likely next words: tokenize, look up ids, run the
// transformer, rank the vocabulary. This is the engine's main entry point.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_file.h"
#include "predict/logit_row.h"
#include "transformer/cache.h"
#include "transformer/transformer.h"

namespace nextword {

// The model's input for a phrase.
struct Encoded {
  std::vector<std::string> tokens;   // exactly what the model reads (bos included)
  std::vector<int> ids;              // token ids, unknown words as unk_id
  std::vector<std::string> unknown;  // input words that are not in the vocabulary
  bool truncated = false;            // the phrase was cut to its last max_len tokens
};

struct Candidate {
  int id = 0;
  float probability = 0;  // softmax over the whole vocabulary
  float logit = 0;
};

// A whole next word of a subword model (predict/word_search.h).
struct NextWord {
  std::string word;  // its pieces' text, without the space it begins with
  double probability = 0;
};

struct Prediction {
  Encoded input;
  std::vector<Candidate> top;    // best first; special tokens never appear
  std::vector<NextWord> words;   // a subword model's k best whole words (top: its pieces)
  std::vector<float> attention;  // [L][h][T][T] when asked for, else empty
};

// The k most likely words of logits [V] (predict/ranking.h's order, special
// tokens never), with their probabilities over the whole vocabulary.
void top_candidates(const Model& model, const float* logits, int k, std::vector<Candidate>& top);
// e^(logit - log_normalizer) as a float: every probability nextword prints.
float probability_of(float logit, double log_normalizer);

// Whether a phrase of unknown words only may be predicted.
enum class Unknowns { kRefuse, kAllow };

// Tokenizes and looks up a phrase. Throws Error(kInput) when the phrase has no
// words, or (with Unknowns::kRefuse) none that the vocabulary knows. With
// kAllow, a model with a bos token takes any phrase, even an empty one.
Encoded encode(const Model& model, std::string_view phrase, Unknowns unknowns = Unknowns::kRefuse);
// The window through which `complete`, `type` and `eval --ksr` read a text
// that grows word by word. Up to max_len tokens, encode's. Past it, the last
// max_len tokens after their first sentence end ('.', '!' or '?' ends a
// token) in the window's first half, so that the window moves once a
// sentence and the key/value cache serves every word in between; with no
// such sentence end, the last max_len tokens, as encode.
Encoded encode_growing(const Model& model, std::string_view text);
// encode_growing's window of a text held as tokens (`generate`'s, which
// grows by the words it chooses): the same rule over the last max_len of them.
Encoded growing_window(const Model& model, const Encoded& text);
// Every token of a text, bos first (when the model has one): nothing is cut
// and any text is taken, even one of unknown words or none. What `score` reads.
Encoded encode_text(const Model& model, std::string_view text);

// Not thread-safe: it reuses its buffers from call to call, so after the
// first call of a size, predicting allocates only the records it returns.
class Predictor {
 public:
  explicit Predictor(const Model& model) : model_(model) {}
  // A copy has the other's cache and buffers, but no hidden() until its
  // first call (the other's would point into the other's buffers).
  Predictor(const Predictor& other)
      : model_(other.model_),
        state_(other.state_),
        cache_(other.cache_),
        tokens_run_(other.tokens_run_),
        lengths_(other.lengths_),
        ids_(other.ids_),
        mixed_(other.mixed_),
        mix_(other.mix_) {}
  Predictor(Predictor&&) = default;  // hidden() moves with the buffers it points into
  Predictor& operator=(const Predictor&) = delete;

  // The k most likely next words (fewer if the vocabulary is smaller).
  Prediction predict(std::string_view phrase, int k, bool with_attention = false);
  Prediction predict(Encoded input, int k, bool with_attention = false);
  // Several phrases in one forward pass (one matrix product per projection
  // over all their tokens); the predictions come back in input order and
  // equal, bit for bit, those of predicting each phrase alone.
  std::vector<Prediction> predict(std::vector<Encoded> inputs, int k, bool with_attention = false);

  // The forward pass alone: the next-word logits of `input`, one per
  // vocabulary word, for a caller that ranks them itself (generation ranks
  // each word once, by predict/ranking.h). Valid until the next call. When
  // the input extends the last one given here (a word generated or typed
  // after it), only the new tokens run, through the key/value cache
  // (transformer/cache.h), with the same bits as a full pass; when it
  // shares only its first tokens with it, the tokens from the first that
  // differs.
  std::span<const float> next_logits(const Encoded& input);
  // next_logits for a caller that ranks a few words of the row and reads
  // their logits (generate): the same bits, but on an adaptive softmax
  // without the memory mixed in (mixing() off) each cluster is computed
  // only when the row is asked for it (predict/logit_row.h). Valid until
  // the next call.
  LogitRow& next_row(const Encoded& input);
  // Whether next_logits(input) would run only tokens that extend the cache.
  bool extends_cache(const Encoded& input) const;
  // The same for several inputs in one pass: row b ([b * V, (b + 1) * V))
  // holds input b's. Valid until the next call.
  std::span<const float> next_logits(std::span<const Encoded> inputs);

  // Continuations of `input` grown side by side, a token each per step in
  // one pass (the word search's partial words: transformer/cache.h's
  // KVBranches). start_branches is called after next_logits(input); false
  // when the cache does not hold the input (a model whose words see later
  // words, or threading other than Threading::kRows), and the caller then
  // runs each continuation through next_logits.
  bool start_branches(const Encoded& input);
  // Continuation b becomes continuation parents[b] of the last step followed
  // by ids[b] (at the first step, `parents` is empty and it is the input
  // followed by ids[b]). Row b ([b * V, (b + 1) * V)) is the same bits as
  // next_logits(the input followed by its tokens). Valid until the next call.
  // Continuations an earlier search on the same input ran are not run again
  // (KVBranches keeps them).
  std::span<const float> grow_branches(std::span<const int> parents, std::span<const int> ids);

  const Model& model() const { return model_; }
  // Whether the model's memory is mixed into the logits (the default), or
  // they stay the transformer's own (the inspection views).
  void set_mixing(bool mix) { mix_ = mix; }
  bool mixing() const { return mix_; }
  // Whether next_logits gives log-probabilities, whose softmax is their
  // exponential (an adaptive softmax's, or the mixture with the memory), so
  // that a caller may skip normalizing them (to float rounding).
  bool logits_normalized() const {
    return model_.config.adaptive() || (model_.memory != nullptr && mix_);
  }
  // Tokens run through the model by the last call (all of them, or the new
  // ones through the cache; of grow_branches, the continuations that no
  // earlier search on the same text ran).
  int tokens_run() const { return tokens_run_; }
  // Logits of the last phrase predicted, one per vocabulary word.
  std::span<const float> logits() const;
  // The context vectors [B, d] of the last call's inputs (their last
  // positions after final_norm, what the classifier read): row b is input
  // b's. Valid until the next call.
  std::span<const float> hidden() const { return hidden_; }

 private:
  // The forward pass over the inputs' ids, back to back.
  void run(std::span<const Encoded> inputs);
  // Runs input's new tokens through the cache (all of them when it does not
  // extend it); false when the cache cannot serve (nothing run).
  bool run_cached(const Encoded& input, bool with_logits);
  // The top k of logits row b into p.top (thread-safe).
  void rank(int b, int k, Prediction& p) const;

  const Model& model_;
  RunState state_;
  KVCache cache_;        // of the inputs of next_logits(const Encoded&)
  KVBranches branches_;  // continuations of the cache's text
  int tokens_run_ = 0;
  std::span<const float> hidden_;
  std::vector<int> lengths_;
  std::vector<int> ids_;
  std::vector<float> mixed_;  // next_logits' mixture with the memory, when the model has one
  bool mix_ = true;
  AdaptiveRow adaptive_row_{model_};
  FullRow full_row_{model_, {}};
};

// The transformer's own logits from `predictor` while it lives (when `off`),
// its mixing as it was after.
class MixingOff {
 public:
  MixingOff(Predictor& predictor, bool off) : predictor_(predictor), was_(predictor.mixing()) {
    if (off) predictor_.set_mixing(false);
  }
  ~MixingOff() { predictor_.set_mixing(was_); }
  MixingOff(const MixingOff&) = delete;
  MixingOff& operator=(const MixingOff&) = delete;

 private:
  Predictor& predictor_;
  bool was_;
};

}  // namespace nextword
