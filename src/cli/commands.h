// Pieces the subcommands share, and the subcommands themselves (one file each).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/model_file.h"

namespace nextword::cli {

// -m/--model DIR, or --vocab FILE --weights FILE; the default model otherwise.
struct ModelOptions {
  std::string dir;
  std::string vocab;
  std::string weights;
  bool no_memory = false;  // leave the model's memory.bin out: the transformer alone

  void add_to(CLI::App& command);
  ModelPaths paths() const;
  Model load() const { return load_model(paths()); }
};

// --stride N of `eval` and `score --document`: how far apart the scoring
// windows of a long text start (Scorer::score); 0, the default, is half the
// model's max_len, and 1 slides the window word by word.
struct StrideOption {
  int stride = 0;

  CLI::Option* add_to(CLI::App& command);
  int of(const Model& model) const;  // the stride in tokens for this model
};

// One result line on stdout, flushed (throws Error(kIo) when stdout is gone).
void write_line(const std::string& line);
// "nextword: MESSAGE" as one line on stderr, written at once. Control
// characters in it (from a phrase or a file name) and bytes that are not
// UTF-8 are written as \xNN, so that the line stays one line of text and a
// NUL does not cut it short.
void report(const std::string& message);

// Exit code of a run stopped by Ctrl-C after saving (128 + SIGINT, as shells report it).
constexpr int kInterrupted = 130;

// Registers a subcommand whose options live in a `Command` (with add_to(app)
// and run()); `run` is set to run it once parsed.
template <typename Command>
CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description,
                      std::function<int()>& run) {
  auto command = std::make_shared<Command>();
  CLI::App* c = app.add_subcommand(name, description);
  command->add_to(*c);
  run = [command] { return command->run(); };
  return c;
}

// nextword predict PHRASE [-m DIR] [-k K] [-f text|tsv|json] [--explain]
CLI::App* add_predict_command(CLI::App& app, std::function<int()>& run);
// nextword attention PHRASE [-f json|text|svg|html|bertviz] [--layer L --head H]
CLI::App* add_attention_command(CLI::App& app, std::function<int()>& run);
// nextword info [-m DIR] [-f text|json]
CLI::App* add_info_command(CLI::App& app, std::function<int()>& run);
// nextword models [-f text|json]
CLI::App* add_models_command(CLI::App& app, std::function<int()>& run);
// nextword train CORPUS... -o DIR | --resume DIR
CLI::App* add_train_command(CLI::App& app, std::function<int()>& run);
// nextword adapt TEXT... (-o DIR | --name NAME) [--model BASE] [--minutes M]
CLI::App* add_adapt_command(CLI::App& app, std::function<int()>& run);
// nextword memory TEXT... [-m DIR] [--order N] [--cutoffs C,...] [--dev FILE]
CLI::App* add_memory_command(CLI::App& app, std::function<int()>& run);
// nextword lexicon [-m DIR] [--lexicon FILE] [-o FILE]
CLI::App* add_lexicon_command(CLI::App& app, std::function<int()>& run);
// nextword eval TEXT... [-m DIR]
CLI::App* add_eval_command(CLI::App& app, std::function<int()>& run);
// nextword convert INPUT OUTPUT [--numbers]
CLI::App* add_convert_command(CLI::App& app, std::function<int()>& run);
// nextword generate PHRASE [-n N] [--temperature T --top-k K --top-p P --seed S]
CLI::App* add_generate_command(CLI::App& app, std::function<int()>& run);
// nextword complete TEXT [-k N] [--learn] [--no-repeat] [-f text|tsv|json]
CLI::App* add_complete_command(CLI::App& app, std::function<int()>& run);
// nextword type [-k N] [--learn] [--history FILE]: a line typed with suggestions below it
CLI::App* add_type_command(CLI::App& app, std::function<int()>& run);
// nextword score [TEXT...] [-f text|tsv|json] [--min-perplexity X] [--max-perplexity Y]
CLI::App* add_score_command(CLI::App& app, std::function<int()>& run);
// nextword tokenize [TEXT] [-m MODEL] [-f text|json]
CLI::App* add_tokenize_command(CLI::App& app, std::function<int()>& run);
// nextword lens PHRASE [-k K] [--mid] [--all-positions]
CLI::App* add_lens_command(CLI::App& app, std::function<int()>& run);
// nextword trace PHRASE [--only GLOB] [-f json|text]
CLI::App* add_trace_command(CLI::App& app, std::function<int()>& run);
// nextword attribute PHRASE [--word W]
CLI::App* add_attribute_command(CLI::App& app, std::function<int()>& run);
// nextword bench [-m DIR]
CLI::App* add_bench_command(CLI::App& app, std::function<int()>& run);

}  // namespace nextword::cli
