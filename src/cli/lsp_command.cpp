// nextword lsp: predictive text in editors over the Language Server Protocol (src/lsp).
#include "cli/lsp_command.h"

#include <unistd.h>

#include <csignal>
#include <optional>

#include "base/error.h"
#include "base/threading.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "complete/settings.h"
#include "lsp/stdio.h"

namespace nextword {
namespace {

struct LspCommand {
  cli::ModelOptions model;
  cli::CompletionOptions completion;
  std::string languages;
  lsp::Settings settings;

  void add_to(CLI::App& c) {
    model.add_to(c);
    completion.add_to(c);
    std::string defaults;
    for (const std::string& l : settings.languages) defaults += (defaults.empty() ? "" : ",") + l;
    languages = defaults;
    c.add_option("--languages", languages,
                 "The editor's languageIds to suggest words in, comma-separated (*: every one)")
        ->capture_default_str();
    c.add_option("--trigger-characters", settings.trigger_characters,
                 "Characters that ask for suggestions as they are typed, besides letters (\" \": "
                 "the next word is suggested before its first letter)");
    c.footer(
        "Speaks LSP 3.17 on stdin and stdout; logs go to stderr. An editor may set the same "
        "options by their long names in initializationOptions or "
        "workspace/didChangeConfiguration: {\"top-k\": 3, \"learn\": true, \"languages\": "
        "[\"markdown\"], \"history\": FILE}. With a history, the new lines of each saved document "
        "are appended to "
        "FILE.");
  }

  int run() {
    // One completion at a time, one context each: too small to split.
    set_threading(Threading::kRows, 1);
    // A client gone: its pipe's write fails with EPIPE, the server exits.
    std::signal(SIGPIPE, SIG_IGN);
    const Model m = model.load();
    const std::optional<LexiconIndex> lexicon = completion.load_lexicon_index(m);
    lsp::ServerSetup setup;
    setup.settings = settings;
    setup.settings.complete = completion.options;
    setup.settings.languages = lsp::split_list(languages);
    setup.settings.history = completion.history;
    if (!completion.history.empty()) {
      setup.history_text = cli::read_history_text(completion.history);
    }
    setup.read_history = cli::read_history_text;
    setup.version = NEXTWORD_VERSION;
    if (const std::string problem = complete_options_problem(setup.settings.complete, "--");
        !problem.empty()) {
      throw Error(ExitCode::kUsage, problem);
    }
    cli::report("lsp: serving " + m.paths.weights + " on stdin and stdout");
    return lsp::serve_stdio(m, lexicon ? &*lexicon : nullptr, std::move(setup), STDIN_FILENO,
                            STDOUT_FILENO,
                            [](const std::string& line) { cli::report("lsp: " + line); });
  }
};

}  // namespace

CLI::App* add_lsp_command(CLI::App& app, std::function<int()>& run) {
  return cli::add_command<LspCommand>(
      app, "lsp", "Suggest words in editors: a Language Server Protocol server on stdin and stdout",
      run);
}

}  // namespace nextword
