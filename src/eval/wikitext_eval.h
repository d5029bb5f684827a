// `nextword eval --wikitext`: the WikiText-103 measure, comparable with the
// published tables, in windows of max_len tokens half a window apart
// (eval/wikitext.h reads the file). See docs/models.md, "eval --wikitext".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eval/wikitext.h"
#include "model/lexicon.h"
#include "model/model_file.h"
#include "predict/unknown_words.h"

namespace nextword {

struct WikitextEvalOptions {
  bool cache = false;
  int cache_size = 2000;        // positions kept
  double cache_weight = 0.1;    // lambda_c, in [0, 1)
  double cache_sharpness = 10;  // theta of e^(theta cos(h, h_i))
};

// The loss of the scored model tokens of one frequency band: a band of
// vocabulary ids (the adaptive softmax's head and each of its clusters, or
// the whole vocabulary), or the words outside the vocabulary. A word
// outside is scored -ln p(unk) - ln q(word): unk_nats holds the first part.
struct LossBand {
  std::string name;  // "head", "cluster 1", ..., "vocabulary", "outside"
  int first_id = 0;  // the band's ids [first_id, end_id); both 0 for "outside"
  int end_id = 0;
  int64_t tokens = 0;   // scored model tokens in the band
  double nats = 0;      // their summed -ln p
  double unk_nats = 0;  // of which -ln p(unk) (outside only; the rest is -ln q)
};

struct WikitextEvalResult {
  int64_t documents = 0;
  int64_t wikitext_tokens = 0;  // whitespace tokens of the file
  int64_t unknown = 0;          // of which <unk>, context only
  int64_t heading_marks = 0;    // and `=` of headings, not scored
  int64_t scored = 0;           // N: the WikiText tokens scored
  int64_t model_tokens = 0;     // the model's tokens scored (they stand for the N)
  int64_t oov = 0;              // of which outside the vocabulary
  double total_nats = 0;        // sum of -ln p over the scored model tokens
  int64_t top1 = 0;             // scored model tokens ranked first
  int64_t top5 = 0;             // ... among the first five
  bool lexicon = false;         // q used the lexicon's counts
  size_t lexicon_words = 0;     // the lexicon's words outside the vocabulary
  // With the cache: the same positions scored by the model alone, in the
  // same pass (the tables' row without the cache; the same bits as a run
  // without --cache).
  double model_only_nats = 0;
  int64_t model_only_top1 = 0, model_only_top5 = 0;
  // Where the loss goes: total_nats split by band (loss_bands(model)'s),
  // the bands summing to total_nats and model_tokens.
  std::vector<LossBand> bands;

  double cross_entropy() const;  // total_nats / N: nats per WikiText token
  double perplexity() const;     // e^cross_entropy
  double oov_rate() const;       // oov / model_tokens
  double top1_accuracy() const;  // top1 / model_tokens
  double top5_accuracy() const;
  double model_only_perplexity() const;  // e^(model_only_nats / N)
};

// The bands of a model, empty: the adaptive softmax's head and clusters (or
// the whole vocabulary without one), then "outside".
std::vector<LossBand> loss_bands(const Model& model);

// One scored model token, for a caller that looks closer (the tests).
struct WikitextTokenScore {
  size_t document = 0;  // index in Wikitext::documents
  size_t position = 0;  // index of the token in its document
  double log_prob = 0;  // ln p, as summed
  bool oov = false;     // outside the vocabulary
  int rank = 0;         // 1 + the candidates ranked before it, at most 6; 0: not ranked (a miss)
  // With a memory (predict/memory_mixture.h): ln p of the transformer alone
  // and of the memory alone (of unk, for a word outside the vocabulary),
  // and the mixture weight's bucket; -1 without one.
  double transformer_log_prob = 0;
  double memory_log_prob = 0;
  int memory_bucket = -1;
};

struct WikitextEvalHooks {
  // progress(done, total): scored model tokens, after each forward pass.
  std::function<void(int64_t, int64_t)> progress;
  // Every scored model token, in text order.
  std::function<void(const WikitextTokenScore&)> each;
};

// Scores `text` (read by read_wikitext with the model's tokenizer options and
// unk_token). `lexicon` (may be null) gives q's counts. Throws
// std::invalid_argument for options out of range.
WikitextEvalResult evaluate_wikitext(const Model& model, const Wikitext& text,
                                     const Lexicon* lexicon, const WikitextEvalOptions& options,
                                     const WikitextEvalHooks& hooks = {});

}  // namespace nextword
