// nextword models: the models along the search path (cli/default_model.h),
// by name, with what their cards say.
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "model/installed_models.h"
#include "text/documents.h"

namespace nextword::cli {
namespace {

// card.json beside a model (data/FORMAT.md): {"text": ..., "headline": ...},
// and an adapted model's "base".
nlohmann::json read_card(const std::string& dir) {
  const std::string path = dir + "/card.json";
  try {
    nlohmann::json card = nlohmann::json::parse(read_text_file(path));
    if (card.is_object()) return card;
  } catch (const std::exception&) {  // no card, or not JSON: the model is listed without it
  }
  return nlohmann::json::object();
}

std::string field(const nlohmann::json& card, const char* name) {
  const auto it = card.find(name);
  return it != card.end() && it->is_string() ? it->get<std::string>() : "";
}

struct ModelsCommand {
  std::string format = "text";
  bool names = false;

  void add_to(CLI::App& c) {
    auto* f = c.add_option("-f,--format", format, "Output: text or json (one object per model)")
                  ->check(CLI::IsMember({"text", "json"}))
                  ->capture_default_str();
    c.add_flag("--names", names,
               "Only the names, one a line, without reading the models (for scripts and the "
               "shell's completion)")
        ->excludes(f);
  }

  int run() const {
    const std::vector<std::string> search_path = model_search_path();
    const std::vector<InstalledModel> found = installed_models(search_path);
    if (names) {
      for (const InstalledModel& installed : found) write_line(installed.name);
      return 0;
    }
    // The default is the model a command given no --model would load.
    std::string default_dir;
    try {
      default_dir = resolve_model(default_model(), search_path);
    } catch (const Error&) {  // no default model: none is marked
    }
    int status = 0;
    for (const InstalledModel& installed : found) {
      std::optional<Model> m;
      try {
        m.emplace(load_model(ModelPaths::in_directory(installed.dir)));
      } catch (const Error& e) {  // listed on stderr; the others are still listed
        report(e.message());
        status = static_cast<int>(e.code());
        continue;
      }
      const nlohmann::json card = read_card(installed.dir);
      const bool is_default = installed.dir == default_dir;
      if (format == "json") {
        write_line(nlohmann::ordered_json{{"name", installed.name},
                                          {"default", is_default},
                                          {"directory", installed.dir},
                                          {"parameters", m->weights.parameter_count()},
                                          {"vocabulary", m->vocab.size()},
                                          {"text", field(card, "text")},
                                          {"headline", field(card, "headline")},
                                          {"base", field(card, "base")}}
                       .dump());
        continue;
      }
      std::string line = installed.name + (is_default ? " (default)" : "") + "\n  " +
                         std::to_string(m->weights.parameter_count()) + " parameters, " +
                         std::to_string(m->vocab.size()) + " words, " + installed.dir;
      for (const char* name : {"text", "headline"}) {
        if (!field(card, name).empty()) line += "\n  " + field(card, name);
      }
      write_line(line);
    }
    return status;
  }
};

}  // namespace

CLI::App* add_models_command(CLI::App& app, std::function<int()>& run) {
  return add_command<ModelsCommand>(app, "models",
                                    "List the models --model finds by name ($NEXTWORD_MODELS, "
                                    "~/.local/share/nextword/models, the installed ones)",
                                    run);
}

}  // namespace nextword::cli
