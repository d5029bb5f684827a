#include "cli/default_model.h"

#include <cstdlib>
#include <filesystem>

#include "model/installed_models.h"

namespace nextword::cli {

std::vector<std::string> data_directories() {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.parent_path().filename() == "bin") {
    dirs.push_back((exe.parent_path().parent_path() / NEXTWORD_INSTALL_DATA_SUBDIR).string());
  }
  dirs.emplace_back(NEXTWORD_SOURCE_DATA_DIR);
  return dirs;
}

std::string model_directory(const std::string& value) {
  if (!value.empty()) return resolve_model(value, data_directories());
  if (const char* env = std::getenv("NEXTWORD_MODEL"); env != nullptr && *env != '\0') {
    return resolve_model(env, data_directories());
  }
  return resolve_model(kDefaultModel, data_directories());
}

}  // namespace nextword::cli
