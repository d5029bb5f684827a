// Adapting an installed model to a person's own text (`nextword adapt`):
// the transformer fine-tuned on the text from the model's weights, with its
// vocabulary (train/initial_weights.h); the text's own n-gram counts as the
// memory, in place of the base's, its mixture weights fitted on a held-out
// tenth of the text; the text's words added to the spelling lexicon; all
// written as an ordinary model directory whose card.json names its base.
//
// The directory appears whole or not at all: everything is written into a
// staging directory beside it, renamed into place at the end, and removed
// on any failure. The base model is only read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "train/trainer.h"

namespace nextword::cli {

// A shorter text is refused: a tenth of it is held out to fit the memory's
// weights on, and a few hundred words teach the transformer nothing.
inline constexpr int64_t kMinAdaptWords = 2000;

struct AdaptOptions {
  std::string base;       // the base model's directory
  std::string base_name;  // as the user named it, for the card
  std::vector<std::string> texts;
  std::string out_dir;
  bool force = false;  // replace out_dir if it exists
  // Fine-tuning (data/english/ablations.md chose the defaults for the
  // English model on mail): `passes` over the text's training part, or
  // `steps`; stopped early after `minutes` (0: no bound), the weights then
  // being those of the last step.
  double passes = 2;
  int steps = 0;
  double minutes = 0;
  float lr = 1e-3f;
  int batch = 16;
  int threads = 0;
  uint64_t seed = 1;
};

struct AdaptHooks {
  std::function<void(const std::string&)> message;  // one line a phase
  std::function<void(const TrainProgress&)> progress;
  std::function<bool()> should_stop;  // Ctrl-C: the steps done so far are kept
};

struct AdaptSummary {
  std::string out_dir;
  int64_t words = 0, documents = 0;  // the text's
  int64_t held_out_words = 0;        // of which held out
  int steps = 0, steps_done = 0;
  bool stopped = false;  // fine-tuning stopped early (Ctrl-C or --minutes)
  bool memory = false;   // a memory of the text was written
  // Fine-tuning made the held-out words less likely than the base's own
  // transformer did, so the base's weights were kept.
  bool kept_base_weights = false;
  int64_t lexicon_words_added = 0;  // text words new to the lexicon
  // Perplexity on the held-out part: the base model, the adapted
  // transformer alone, and the adapted model with its memory.
  double base_perplexity = 0, transformer_perplexity = 0, perplexity = 0;
  double train_seconds = 0, seconds = 0;
};

// Throws Error: kUsage (out_dir exists without force, bad options), kModel
// (the base does not load), kInput (a text empty, binary or too short), kIo.
AdaptSummary adapt(const AdaptOptions& options, const AdaptHooks& hooks);

}  // namespace nextword::cli
