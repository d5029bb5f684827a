// What `complete`, `type` and `eval --ksr` share: the completer's options on
// the command line, the lexicon beside the model, the history file, and the
// stream of completion records.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/line_reader.h"
#include "cli/record_stream.h"
#include "complete/completer.h"
#include "model/lexicon.h"
#include "model/lexicon_index.h"
#include "model/model_file.h"
#include "views/records.h"

namespace nextword::cli {

struct CompletionOptions {
  CompleteOptions options;
  std::string lexicon;  // --lexicon FILE; default: the lexicon beside vocab.json, if there
  std::string history;  // --history FILE: learned at start (and appended to by `type`)

  // -k, --no-repeat, --learn, --history, --lexicon.
  void add_to(CLI::App& command);
  // The lexicon to use, if any (a named one must exist; throws model errors).
  std::optional<Lexicon> load_lexicon(const ModelPaths& paths) const;
  // The same, indexed for completing: --lexicon's file indexed in memory,
  // else the index beside the model (model/lexicon_index.h).
  std::optional<LexiconIndex> load_lexicon_index(const Model& model) const;
  // A completer for `model`, with the history learned (throws Error naming
  // the history file and line when it is not text).
  Completer make_completer(const Model& model, const LexiconIndex* lexicon) const;
};

// The end of history file `path` (at most kMaxHistoryBytes, from a line
// start; an absent file is empty), checked to be plain text (throws Error
// naming the file and line when it is not).
std::string read_history_text(const std::string& path);

// The value at fraction q (0: the least, 1: the most) of `values`, by
// nearest rank below; 0 for none. For the latency figures of eval --ksr and bench.
double quantile(std::vector<double> values, double q);

// The most a history file may hold: its last 16 MiB are read (the cache
// forgets older words anyway).
constexpr size_t kMaxHistoryBytes = size_t{16} << 20;

// Reads `input` to its end, one text per line (its whitespace at the end
// kept), and writes one record per line, in order: the lines are successive
// states of one typing session. Lines already waiting have their contexts
// run together, up to `batch` lines at a time; a line typed by hand is
// answered at once. `notes`: say when a line was cut to its last 64 KiB.
void stream_completions(Completer& completer, LineReader& input, views::Format format, bool notes,
                        int batch, const RecordSink& sink);

}  // namespace nextword::cli
