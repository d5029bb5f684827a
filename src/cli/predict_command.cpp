// nextword predict PHRASE: the most likely next words.
#include <memory>

#include "cli/commands.h"
#include "cli/phrase_command.h"

namespace nextword::cli {

CLI::App* add_predict_command(CLI::App& app, std::function<int()>& run) {
  auto predict = std::make_shared<PhraseCommand>();
  CLI::App* command = app.add_subcommand(
      "predict", "Print the most likely next words of a phrase with their probabilities");
  predict->add_to(*command);
  command->add_option("-f,--format", predict->format, "Output: text, tsv or json (JSON Lines)")
      ->check(CLI::IsMember({"text", "tsv", "json"}))
      ->capture_default_str();
  command->add_flag("--explain", predict->options.explain,
                    "After the predictions, the words the last word attended to most in "
                    "each layer (mean over heads)");
  run = [predict] { return predict->run(); };
  return command;
}

}  // namespace nextword::cli
