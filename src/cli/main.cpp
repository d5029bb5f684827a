// nextword: the command-line front end. It parses arguments with CLI11, loads
// the model through the engine and writes records; all the math is in the
// engine library (src/math, src/model, src/text, src/predict).
#include <omp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/line_reader.h"
#include "cli/output.h"
#include "math/layers.h"
#include "model/error.h"
#include "model/model_file.h"
#include "predict/predictor.h"
#include "text/tokenizer.h"

namespace nextword::cli {
namespace {

// predict and attention share everything but the record they print.
struct PhraseCommand {
  ModelOptions model;
  std::vector<std::string> words;
  int top_k = 5;
  std::string format = "text";
  bool quiet = false;
  bool attention = false;
  int batch = 64;
  int threads = 0;

  int run() const {
    set_threading(Threading::kRows, threads > 0 ? threads : omp_get_num_procs());
    const Model m = model.load();
    Predictor predictor(m);
    if (!words.empty()) {
      const std::string phrase = join(words);
      write_record(m, phrase, predictor.predict(phrase, top_k, attention), "");
      return 0;
    }
    // One record per input line, in order. Lines that are already waiting
    // are predicted together, up to --batch of them in one forward pass; a
    // line typed by hand is answered as soon as it is read.
    LineReader input(STDIN_FILENO);
    int status = 0;
    long number = 0;
    std::vector<std::string> lines;
    std::vector<bool> cut;
    std::string line;
    bool line_cut = false;
    while (input.next(line, &line_cut)) {
      lines.assign(1, line);
      cut.assign(1, line_cut);
      while (static_cast<int>(lines.size()) < batch && input.ready() &&
             input.next(line, &line_cut)) {
        lines.push_back(line);
        cut.push_back(line_cut);
      }
      for (size_t i = 0; i < cut.size(); ++i) {
        if (cut[i] && !quiet && output_format() != Format::kJson) {
          note("<stdin>:" + std::to_string(number + 1 + static_cast<long>(i)) + ": ",
               "line longer than 64 KiB: only its last 64 KiB were read");
        }
      }
      if (predict_lines(m, predictor, lines, number)) status = static_cast<int>(ExitCode::kInput);
      number += static_cast<long>(lines.size());
    }
    return status;
  }

  // Predicts lines `first + 1` .. of stdin in one pass and writes their
  // records in order; true when some line had no prediction.
  bool predict_lines(const Model& m, Predictor& predictor, const std::vector<std::string>& lines,
                     long first) const {
    std::vector<Encoded> inputs;
    std::vector<std::optional<Error>> errors(lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      try {
        inputs.push_back(encode(m, lines[i]));
      } catch (const Error& e) {
        if (e.code() != ExitCode::kInput) throw;
        errors[i] = e;
      }
    }
    std::vector<Prediction> predictions = predictor.predict(std::move(inputs), top_k, attention);
    size_t next = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string where =
          "<stdin>:" + std::to_string(first + 1 + static_cast<long>(i)) + ": ";
      if (errors[i]) {
        report(where + errors[i]->message());
        write_line(error_record(lines[i], *errors[i], output_format()));
      } else {
        write_record(m, lines[i], predictions[next++], where);
      }
    }
    return std::any_of(errors.begin(), errors.end(), [](const auto& e) { return e.has_value(); });
  }

  Format output_format() const {
    return format == "json" ? Format::kJson : format == "tsv" ? Format::kTsv : Format::kText;
  }

  void write_record(const Model& m, const std::string& phrase, const Prediction& p,
                    const std::string& where) const {
    const Format f = output_format();
    // JSON records carry "unknown" and "truncated" themselves.
    const bool notes = !quiet && f != Format::kJson;
    if (notes && p.input.truncated) {
      note(where,
           "phrase cut to its last " + std::to_string(m.config.max_len) + " tokens (max_len)");
    }
    if (notes && !p.input.unknown.empty()) {
      note(where, "not in the vocabulary: " + join(p.input.unknown));
    }
    write_line(attention ? attention_record(m, phrase, p) : prediction_record(m, phrase, p, f));
  }
};

int run(int argc, char** argv) {
  CLI::App app{
      "nextword: predict the next word of a phrase with a small attention model.\n"
      "Exit codes: 0 ok, 1 internal error, 2 usage, 3 model file, 4 input phrase, 5 I/O.",
      "nextword"};
  app.set_version_flag("--version", std::string("nextword ") + NEXTWORD_VERSION);
  app.require_subcommand(1);

  PhraseCommand predict, attention;
  attention.attention = true;
  attention.format = "json";
  auto add_phrase_options = [](CLI::App& command, PhraseCommand& c) {
    c.model.add_to(command);
    command.add_option("phrase", c.words, "The phrase (no phrase: one per line from stdin)");
    command.add_option("-k,--top-k", c.top_k, "How many predictions to print")
        ->check(CLI::Range(1, 1 << 24))
        ->capture_default_str();
    command.add_flag("-q,--quiet", c.quiet, "No notes on stderr (unknown words, truncation)");
    command
        .add_option("--batch", c.batch,
                    "Phrases from stdin predicted together, at most (lines already waiting; "
                    "a typed line is answered at once)")
        ->check(CLI::Range(1, 1 << 16))
        ->capture_default_str();
    command.add_option("-t,--threads", c.threads, "Threads (default: every core)")
        ->check(CLI::Range(1, 1024));
  };

  CLI::App* predict_cmd = app.add_subcommand(
      "predict", "Print the most likely next words of a phrase with their probabilities");
  add_phrase_options(*predict_cmd, predict);
  predict_cmd->add_option("-f,--format", predict.format, "Output: text, tsv or json (JSON Lines)")
      ->check(CLI::IsMember({"text", "tsv", "json"}))
      ->capture_default_str();

  CLI::App* attention_cmd = app.add_subcommand(
      "attention", "Dump every layer's and head's attention weights for a phrase as JSON");
  add_phrase_options(*attention_cmd, attention);
  attention_cmd->add_option("-f,--format", attention.format, "Output: json")
      ->check(CLI::IsMember({"json"}))
      ->capture_default_str();

  ModelOptions info_model;
  std::string info_format = "text";
  CLI::App* info_cmd =
      app.add_subcommand("info", "Show the model's config, parameter count and files");
  info_model.add_to(*info_cmd);
  info_cmd->add_option("-f,--format", info_format, "Output: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  std::function<int()> train_run, eval_run, convert_run, bench_run;
  CLI::App* train_cmd = add_train_command(app, train_run);
  CLI::App* eval_cmd = add_eval_command(app, eval_run);
  CLI::App* convert_cmd = add_convert_command(app, convert_run);
  CLI::App* bench_cmd = add_bench_command(app, bench_run);

  auto is_command = [&app](const std::string& name) {
    for (const CLI::App* command : app.get_subcommands({})) {
      if (command->check_name(name)) return true;
    }
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::string names;
    for (const CLI::App* command : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + command->get_name();
    }
    report(std::string("unknown command '") + argv[1] + "' (commands: " + names +
           "; see nextword --help)");
    return static_cast<int>(ExitCode::kUsage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    nextword::cli::report(std::string(e.what()) + " (see nextword --help)");
    return static_cast<int>(ExitCode::kUsage);
  }

  if (predict_cmd->parsed()) return predict.run();
  if (attention_cmd->parsed()) return attention.run();
  if (train_cmd->parsed()) return train_run();
  if (eval_cmd->parsed()) return eval_run();
  if (convert_cmd->parsed()) return convert_run();
  if (bench_cmd->parsed()) return bench_run();
  const Model m = info_model.load();
  write_line(model_info(m, info_format == "json" ? Format::kJson : Format::kText));
  return 0;
}

}  // namespace
}  // namespace nextword::cli

// OpenMP's threads (the engine's row loops) and OpenBLAS's threads (its
// matrix products) take turns on the same cores many times per step. libgomp
// by default spins for ~300,000 rounds after each parallel loop, which
// starves OpenBLAS: training ran at 4,700 tokens/s with the default and at
// 8,700 with a short spin (2 cores). libgomp reads the setting only when it
// loads, so set it and start again, once, unless the user chose their own.
void tune_openmp_and_restart(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) {
    return;
  }
  setenv("GOMP_SPINCOUNT", "1000", 0);
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

int main(int argc, char** argv) {
  using nextword::ExitCode;
  tune_openmp_and_restart(argv);
  try {
    return nextword::cli::run(argc, argv);
  } catch (const nextword::Error& e) {
    nextword::cli::report(e.message());
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "nextword: out of memory\n");
  } catch (const std::exception& e) {
    nextword::cli::report(std::string("internal error: ") + e.what());
  }
  return static_cast<int>(ExitCode::kFailure);
}
