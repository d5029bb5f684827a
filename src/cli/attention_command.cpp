// nextword attention PHRASE: which earlier words each word attended to.
#include <memory>

#include "cli/commands.h"
#include "cli/phrase_command.h"

namespace nextword::cli {

CLI::App* add_attention_command(CLI::App& app, std::function<int()>& run) {
  auto attention = std::make_shared<PhraseCommand>();
  attention->options.attention = true;
  attention->format = "json";
  CLI::App* command = app.add_subcommand(
      "attention",
      "Show attention: a heatmap in the terminal, SVG, a self-contained HTML page, or JSON");
  attention->add_to(*command);
  command
      ->add_option("-f,--format", attention->format,
                   "json: every weight; text: a heatmap; svg; html: every layer and head; bertviz")
      ->check(CLI::IsMember({"json", "text", "svg", "html", "bertviz"}))
      ->capture_default_str();
  command->add_option("--layer", attention->layer,
                      "Layer shown by text and svg: 1 to L, or mean (default: the last)");
  command->add_option("--head", attention->head, "Head shown: 1 to h, or mean")
      ->capture_default_str();
  command->add_option("--color", attention->color, "Colors in the text heatmap")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  command->add_option("-o,--output", attention->output,
                      "Write to this file instead of stdout (svg and html)");
  run = [attention] { return attention->run(); };
  return command;
}

}  // namespace nextword::cli
