// nextword models: the models along the search path (cli/default_model.h),
// by name, with what their cards say; then ollama's (model/ollama_store.h).
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/default_model.h"
#include "model/installed_models.h"
#include "model/ollama_store.h"
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
    const std::vector<OllamaListed> ollama = ollama_models(ollama_store());
    if (names) {
      for (const InstalledModel& installed : found) write_line(installed.name);
      for (const OllamaListed& listed : ollama) write_line(kOllamaPrefix + listed.name);
      return 0;
    }
    // The default is the model a command given no --model would load.
    std::string default_dir, default_ollama;
    try {
      const std::string chosen = default_model();
      if (is_ollama_reference(chosen)) {
        default_ollama =
            find_ollama_model(ollama_store(), chosen.substr(std::string(kOllamaPrefix).size()))
                .name;
      } else {
        default_dir = resolve_model(chosen, search_path);
      }
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
      write_model(installed, *m, installed.dir == default_dir);
    }
    // ollama's, after: named by their manifests, not read (most are of
    // tensor types nextword does not read; --model says so of one).
    for (const OllamaListed& listed : ollama) {
      if (listed.error) {
        report(listed.error->message());
        status = static_cast<int>(listed.error->code());
        continue;
      }
      write_ollama(*listed.model, listed.name == default_ollama);
    }
    return status;
  }

  void write_model(const InstalledModel& installed, const Model& m, bool is_default) const {
    const nlohmann::json card = read_card(installed.dir);
    if (format == "json") {
      write_line(nlohmann::ordered_json{{"name", installed.name},
                                        {"default", is_default},
                                        {"directory", installed.dir},
                                        {"parameters", m.weights.parameter_count()},
                                        {"vocabulary", m.vocab.size()},
                                        {"text", field(card, "text")},
                                        {"headline", field(card, "headline")},
                                        {"base", field(card, "base")}}
                     .dump());
      return;
    }
    std::string line = installed.name + (is_default ? " (default)" : "") + "\n  " +
                       std::to_string(m.weights.parameter_count()) + " parameters, " +
                       std::to_string(m.vocab.size()) + " words, " + installed.dir;
    for (const char* name : {"text", "headline"}) {
      if (!field(card, name).empty()) line += "\n  " + field(card, name);
    }
    write_line(line);
  }

  // An ollama model as the others, its blob the "directory"; what would
  // need the model read (parameters, vocabulary) is null, and the blob's
  // size and manifest are given.
  void write_ollama(const OllamaModel& m, bool is_default) const {
    const std::string name = kOllamaPrefix + m.name;
    if (format == "json") {
      write_line(nlohmann::ordered_json{{"name", name},
                                        {"default", is_default},
                                        {"directory", m.blob},
                                        {"parameters", nullptr},
                                        {"vocabulary", nullptr},
                                        {"text", ""},
                                        {"headline", ""},
                                        {"base", ""},
                                        {"bytes", m.bytes},
                                        {"manifest", m.manifest}}
                     .dump());
      return;
    }
    write_line(name + (is_default ? " (default)" : "") + "\n  " + std::to_string(m.bytes) +
               " bytes, " + m.blob);
  }
};

}  // namespace

CLI::App* add_models_command(CLI::App& app, std::function<int()>& run) {
  return add_command<ModelsCommand>(app, "models",
                                    "List the models --model finds by name ($NEXTWORD_MODELS, "
                                    "~/.local/share/nextword/models, the installed ones), "
                                    "then ollama's as ollama:NAME:TAG ($OLLAMA_MODELS, "
                                    "~/.ollama/models)",
                                    run);
}

}  // namespace nextword::cli
