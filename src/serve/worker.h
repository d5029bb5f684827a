// What a worker thread does with the calls it takes from the queue: its own
// run state (a predictor and a scorer; a completer per call) over the one
// mapped model, and the records the command line would print for them.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/lexicon.h"
#include "model/lexicon_index.h"
#include "model/model_file.h"
#include "predict/predictor.h"
#include "predict/scorer.h"
#include "predict/unknown_words.h"
#include "serve/call.h"

namespace nextword::serve {

// A call's answer: the body (a record, or {"results": [records]}, then a
// newline) with status 200, or an error body with its status.
struct Answer {
  int status = 200;
  std::string body;
};

// Which calls may share one forward pass: calls with the same key (-1: none).
// predict (with or without --explain), attention and score batch; every
// phrase of a batch gets the bits it would get alone.
int batch_key(const Call& call);

// Receives the events of a streamed generation, one word each; returns false
// when the reader has gone (generation stops).
using EventSink = std::function<bool(const std::string& event)>;

class Worker {
 public:
  // `lexicon` (for the spelling of words outside the vocabulary) and
  // `index` (for completing) may be null; they outlive the worker.
  Worker(const Model& model, const Lexicon* lexicon, const LexiconIndex* index);

  // Answers calls that share a batch key (or one call), in order.
  std::vector<Answer> run(std::span<const Call* const> calls);
  // Answers a generate call with "stream": each word to `events` as it comes
  // ({"word": W, "index": I}); the answer is the last event, generate's record.
  Answer stream(const Call& call, const EventSink& events);

 private:
  std::vector<Answer> predict(std::span<const Call* const> calls);
  std::vector<Answer> score(std::span<const Call* const> calls);
  Answer one(const Call& call);
  // attention's record, page or page data for one predicted phrase.
  std::string attention(const Call& call, const std::string& text, const Prediction& p);
  // The record of one text of `call` (complete, lens, trace, attribute,
  // generate); throws Error.
  std::string record(const Call& call, const std::string& text, Completer* completer);

  const Model& model_;
  const Lexicon* lexicon_;
  const LexiconIndex* index_;
  Predictor predictor_;
  Scorer scorer_;
  std::unique_ptr<UnknownWords> unknown_words_;  // q, made at the first word outside the vocabulary
};

}  // namespace nextword::serve
