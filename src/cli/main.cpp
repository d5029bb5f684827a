// nextword: the command-line front end. It parses arguments with CLI11, loads
// the model through the engine and writes records; all the math is in the
// engine library (src/math, src/model, src/text, src/predict).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/threading.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/line_reader.h"
#include "cli/output.h"
#include "cli/record_stream.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "predict/predictor.h"
#include "text/tokenizer.h"

namespace nextword::cli {
namespace {

// predict and attention share everything but the record they print.
struct PhraseCommand {
  ModelOptions model;
  std::vector<std::string> words;
  std::string format = "text";
  RecordOptions options;
  int threads = 0;
  std::string layer, head = "mean", color = "auto", output;

  int run() {
    set_threading(Threading::kRows, threads > 0 ? threads : available_cores());
    options.format = format == "json"  ? Format::kJson
                     : format == "tsv" ? Format::kTsv
                                       : Format::kText;
    if (options.explain && options.format == Format::kTsv) {
      throw Error(ExitCode::kUsage, "--explain needs --format text or json");
    }
    const Model m = model.load();
    if (options.attention) choose_view(m.config);
    Predictor predictor(m);
    std::string written;  // with -o: the records, for the file
    const RecordSink sink{[&](const std::string& record) {
                            if (output.empty()) {
                              write_line(record);
                            } else {
                              written += record + "\n";
                            }
                          },
                          report};
    int status = 0;
    if (!words.empty()) {
      const std::string phrase = join(words);
      write_prediction(
          m, phrase, predictor.predict(phrase, options.top_k, options.attention || options.explain),
          "", options, sink);
    } else {
      LineReader input(STDIN_FILENO);
      status = stream_records(m, predictor, input, options, sink);
    }
    if (!output.empty()) write_file_atomically(output, written);
    return status;
  }

  // --format, --layer, --head and --color of `attention`.
  void choose_view(const Config& c) {
    options.view = format == "text"      ? View::kText
                   : format == "svg"     ? View::kSvg
                   : format == "html"    ? View::kHtml
                   : format == "bertviz" ? View::kBertviz
                                         : View::kJson;
    const bool picture = options.view == View::kSvg || options.view == View::kHtml;
    if (picture && words.empty()) {
      throw Error(ExitCode::kUsage, "--format " + format + " draws one phrase: give it as PHRASE");
    }
    auto pick = [](const std::string& value, int count, const char* what) {
      if (value == "mean") return -1;
      int n = 0;
      try {
        n = std::stoi(value);
      } catch (const std::exception&) {
        n = 0;
      }
      if (n < 1 || n > count || std::to_string(n) != value) {
        throw Error(ExitCode::kUsage, std::string("--") + what + ": " + value +
                                          " is not \"mean\" or a number from 1 to " +
                                          std::to_string(count));
      }
      return n - 1;
    };
    if (options.view == View::kText || options.view == View::kSvg) {
      if (c.n_layers == 0) throw Error(ExitCode::kUsage, "this model has no attention layers");
      options.choice.layer =
          pick(layer.empty() ? std::to_string(c.n_layers) : layer, c.n_layers, "layer");
      options.choice.head = pick(head, c.n_heads, "head");
    }
    options.color = color == "never" ? Color::kNone
                    : color == "always"
                        ? (terminal_color() == Color::kTrue ? Color::kTrue : Color::k256)
                    : output.empty() ? terminal_color()
                                     : Color::kNone;
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
  attention.options.attention = true;
  attention.format = "json";
  auto add_phrase_options = [](CLI::App& command, PhraseCommand& c) {
    c.model.add_to(command);
    command.add_option("phrase", c.words, "The phrase (no phrase: one per line from stdin)");
    command.add_option("-k,--top-k", c.options.top_k, "How many predictions to print")
        ->check(CLI::Range(1, 1 << 24))
        ->capture_default_str();
    command.add_flag("-q,--quiet", c.options.quiet,
                     "No notes on stderr (unknown words, truncation)");
    command
        .add_option("--batch", c.options.batch,
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
  predict_cmd->add_flag("--explain", predict.options.explain,
                        "After the predictions, the words the last word attended to most in "
                        "each layer (mean over heads)");

  CLI::App* attention_cmd = app.add_subcommand(
      "attention",
      "Show attention: a heatmap in the terminal, SVG, a self-contained HTML page, or JSON");
  add_phrase_options(*attention_cmd, attention);
  attention_cmd
      ->add_option("-f,--format", attention.format,
                   "json: every weight; text: a heatmap; svg; html: every layer and head; bertviz")
      ->check(CLI::IsMember({"json", "text", "svg", "html", "bertviz"}))
      ->capture_default_str();
  attention_cmd->add_option("--layer", attention.layer,
                            "Layer shown by text and svg: 1 to L, or mean (default: the last)");
  attention_cmd->add_option("--head", attention.head, "Head shown: 1 to h, or mean")
      ->capture_default_str();
  attention_cmd->add_option("--color", attention.color, "Colors in the text heatmap")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  attention_cmd->add_option("-o,--output", attention.output,
                            "Write to this file instead of stdout (svg and html)");

  ModelOptions info_model;
  std::string info_format = "text";
  CLI::App* info_cmd =
      app.add_subcommand("info", "Show the model's config, parameter count and files");
  info_model.add_to(*info_cmd);
  info_cmd->add_option("-f,--format", info_format, "Output: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  std::function<int()> train_run, eval_run, convert_run, bench_run, generate_run;
  CLI::App* train_cmd = add_train_command(app, train_run);
  CLI::App* eval_cmd = add_eval_command(app, eval_run);
  CLI::App* convert_cmd = add_convert_command(app, convert_run);
  CLI::App* bench_cmd = add_bench_command(app, bench_run);
  CLI::App* generate_cmd = add_generate_command(app, generate_run);

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
  if (generate_cmd->parsed()) return generate_run();
  const Model m = info_model.load();
  write_line(model_info(m, info_format == "json" ? Format::kJson : Format::kText));
  return 0;
}

}  // namespace
}  // namespace nextword::cli

// Training alternates OpenMP's threads (the engine's row loops) with
// OpenBLAS's own threads (its large products, Threading::kBlas) many times
// per step. libgomp by default spins for ~300,000 rounds after each parallel
// loop, which starves OpenBLAS: training ran at 4,700 tokens/s with the
// default and at 8,700 with a short spin (2 cores). libgomp reads the setting
// only when it loads, so `train` sets it and starts again, once, unless the
// user chose their own. Every other command runs its products and loops on
// OpenMP's one pool (Threading::kRows), has nothing to tune, and starts once.
void tune_openmp_for_training(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "train") return;
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) {
    return;
  }
  setenv("GOMP_SPINCOUNT", "1000", 0);
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

int main(int argc, char** argv) {
  using nextword::ExitCode;
  tune_openmp_for_training(argc, argv);
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
