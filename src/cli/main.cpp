// nextword: the program. main() sets up CLI11, registers every command (each
// in its own src/cli/*_command.cpp; `serve` and `lsp` call the libraries of
// src/serve and src/lsp) and turns errors into exit codes; all the math is in
// the engine library (src/math, src/model, ...).

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <new>
#include <string>
#include <string_view>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/lsp_command.h"
#include "cli/serve_command.h"
#include "cli/stop_signals.h"
#include "math/kernel_paths.h"
#include "math/q8_activations.h"

namespace nextword::cli {
namespace {

int run(int argc, char** argv) {
  CLI::App app{
      "nextword: predict the next word of a phrase with a small attention model.\n"
      "Exit codes: 0 ok, 1 internal error, 2 usage, 3 model file, 4 input phrase, 5 I/O.",
      "nextword"};
  app.set_version_flag("--version", std::string("nextword ") + NEXTWORD_VERSION);
  app.require_subcommand(1);

  // Registered in the order `nextword --help` lists them.
  using AddCommand = CLI::App* (*)(CLI::App&, std::function<int()>&);
  constexpr AddCommand kCommands[] = {
      add_predict_command,   add_complete_command, add_type_command,     add_attention_command,
      add_score_command,     add_tokenize_command, add_lens_command,     add_trace_command,
      add_attribute_command, add_info_command,     add_models_command,   add_adapt_command,
      add_train_command,     add_memory_command,   add_lexicon_command,  add_eval_command,
      add_convert_command,   add_bench_command,    add_generate_command, add_serve_command,
      add_lsp_command};
  std::function<int()> runs[std::size(kCommands)];
  CLI::App* commands[std::size(kCommands)];
  for (size_t i = 0; i < std::size(kCommands); ++i) commands[i] = kCommands[i](app, runs[i]);

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

  // A NEXTWORD_KERNELS this CPU cannot run is a usage error before any work.
  (void)kernel_path();
  // Products of block-quantized weights (GGUF's Q4_0 .. Q6_K) round their
  // activations to 8 bits a block, for the whole run, unless
  // NEXTWORD_ACTIVATIONS=f32 (math/q8_activations.h; docs/performance.md
  // measures both).
  const char* activations = std::getenv("NEXTWORD_ACTIVATIONS");
  const std::string_view choice(activations != nullptr && *activations != '\0' ? activations
                                                                               : "q8");
  if (choice != "q8" && choice != "f32") {
    throw usage_error("NEXTWORD_ACTIVATIONS: \"" + std::string(choice) + "\" is not q8 or f32");
  }
  set_q8_activations(choice == "q8");
  for (size_t i = 0; i < std::size(commands); ++i) {
    if (!commands[i]->parsed()) continue;
    const int status = runs[i]();
    // A stream stopped by a signal: what it wrote is whole; say why it ended
    // early (train says so itself, and returns kInterrupted).
    if (stop_signal() != 0 && status != kInterrupted) {
      report(std::string("stopped by ") + signal_name(stop_signal()) +
             "; every record before it was written whole");
      return kInterrupted;
    }
    return status;
  }
  return static_cast<int>(ExitCode::kUsage);  // not reached: require_subcommand(1)
}

}  // namespace
}  // namespace nextword::cli

int main(int argc, char** argv) {
  using nextword::ExitCode;
  // Answered before the command line's parser is built: scripts ask this
  // to check what is installed, and it should cost them nothing.
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    std::printf("nextword %s\n", NEXTWORD_VERSION);
    return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : static_cast<int>(ExitCode::kIo);
  }
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
