#include "model/installed_models.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/error.h"

namespace nextword {

namespace fs = std::filesystem;

namespace {

// A directory meant as a model holds one of a model's files; whether they
// load is load_model's to say (its errors name the file and the field).
bool looks_like_model(const fs::path& dir) {
  std::error_code ec;
  for (const char* file : {"vocab.json", "weights.safetensors", "weights.json"}) {
    if (fs::is_regular_file(dir / file, ec)) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

std::vector<InstalledModel> installed_models(const std::vector<std::string>& search_path) {
  std::vector<InstalledModel> models;
  std::set<std::string> names;
  for (const std::string& dir : search_path) {
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      std::string name = entry.path().filename().string();
      // A GGUF file NAME.gguf is the model NAME, beside the directories.
      const bool gguf = name.ends_with(".gguf") && name.size() > 5 && entry.is_regular_file(ec);
      if (gguf) {
        name.resize(name.size() - 5);
        if (names.insert(name).second) models.push_back({name, entry.path().string()});
        continue;
      }
      // The first directory of a name is what the name means, model or not.
      if (entry.is_directory(ec) && names.insert(name).second && looks_like_model(entry.path())) {
        models.push_back({name, entry.path().string()});
      }
    }
  }
  std::sort(models.begin(), models.end(),
            [](const InstalledModel& a, const InstalledModel& b) { return a.name < b.name; });
  return models;
}

bool is_model_name(const std::string& value) {
  std::error_code ec;
  return !value.empty() && value.find('/') == std::string::npos && value != "." && value != ".." &&
         !fs::is_directory(value, ec) && !fs::is_regular_file(value, ec);
}

std::string resolve_model(const std::string& value, const std::vector<std::string>& search_path) {
  if (!is_model_name(value)) return value;
  std::vector<std::string> names;
  for (const InstalledModel& m : installed_models(search_path)) {
    if (m.name == value) return m.dir;
    names.push_back(m.name);
  }
  for (const std::string& dir : search_path) {
    std::error_code ec;
    if (fs::is_directory(fs::path(dir) / value, ec)) {
      throw Error(ExitCode::kModel, (fs::path(dir) / value).string() +
                                        ": not a model: no vocab.json, weights.safetensors or "
                                        "weights.json");
    }
  }
  throw Error(ExitCode::kModel, value + ": no model of that name (found: " +
                                    (names.empty() ? "none" : joined(names)) + "; looked in " +
                                    (search_path.empty() ? "nothing" : joined(search_path)) +
                                    "); a directory is given as ./" + value);
}

}  // namespace nextword
