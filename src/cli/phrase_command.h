// What `predict` and `attention` share: phrases in (one as arguments, or one
// per line from stdin), one record per phrase out. They differ only in the
// record they print and in their --format choices.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/record_stream.h"
#include "model/model_file.h"

namespace nextword::cli {

struct PhraseCommand {
  ModelOptions model;
  std::vector<std::string> words;
  std::string format = "text";
  RecordOptions options;
  int threads = 0;
  std::string layer, head = "mean", color = "auto", output;

  // The model options, the phrase, -k, -q, --batch and -t (not --format).
  void add_to(CLI::App& command);
  int run();

 private:
  // --format, --layer, --head and --color of `attention`.
  void choose_view(const Config& c);
};

}  // namespace nextword::cli
