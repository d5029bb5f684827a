#include "model/installed_models.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/error.h"

namespace nextword {

namespace fs = std::filesystem;

namespace {

bool holds_model(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "vocab.json", ec) &&
         (fs::is_regular_file(dir / "weights.safetensors", ec) ||
          fs::is_regular_file(dir / "weights.json", ec));
}

}  // namespace

std::vector<InstalledModel> installed_models(const std::vector<std::string>& data_dirs) {
  std::vector<InstalledModel> models;
  std::set<std::string> names;
  for (const std::string& data : data_dirs) {
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(data, ec)) {
      const std::string name = entry.path().filename().string();
      if (holds_model(entry.path()) && names.insert(name).second) {
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
         !fs::is_directory(value, ec);
}

std::string resolve_model(const std::string& value, const std::vector<std::string>& data_dirs) {
  if (!is_model_name(value)) return value;
  const std::vector<InstalledModel> models = installed_models(data_dirs);
  std::string names;
  for (const InstalledModel& m : models) {
    if (m.name == value) return m.dir;
    names += (names.empty() ? "" : ", ") + m.name;
  }
  std::string looked;
  for (const std::string& data : data_dirs) looked += (looked.empty() ? "" : ", ") + data;
  throw Error(ExitCode::kModel,
              value + ": no model of that name (installed: " + (names.empty() ? "none" : names) +
                  ", in " + looked + "); a directory is given as ./" + value);
}

}  // namespace nextword
