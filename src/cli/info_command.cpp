// nextword info: the model's config, parameter count and files.
#include "cli/commands.h"
#include "views/records.h"

namespace nextword::cli {

using namespace views;
namespace {

struct InfoCommand {
  ModelOptions model;
  std::string format = "text";

  void add_to(CLI::App& c) {
    model.add_to(c);
    c.add_option("-f,--format", format, "Output: text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() const {
    const Model m = model.load();
    write_line(model_info(m, format == "json" ? Format::kJson : Format::kText));
    return 0;
  }
};

}  // namespace

CLI::App* add_info_command(CLI::App& app, std::function<int()>& run) {
  return add_command<InfoCommand>(app, "info", "Show the model's config, parameter count and files",
                                  run);
}

}  // namespace nextword::cli
