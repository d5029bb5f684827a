#include "cli/default_model.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "model/installed_models.h"
#include "model/ollama_store.h"

namespace nextword::cli {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

std::string user_models_directory() {
  // The XDG base directories: a relative $XDG_DATA_HOME is to be ignored.
  const std::string xdg = environment("XDG_DATA_HOME");
  const std::string home = environment("HOME");
  if (!xdg.empty() && xdg.front() == '/') return xdg + "/nextword/models";
  if (!home.empty()) return home + "/.local/share/nextword/models";
  return "";
}

std::vector<std::string> model_search_path() {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  // Empty entries of a colon-separated list name nothing (not the current
  // directory, as they would in $PATH): a model there is given as ./NAME.
  const std::string listed = environment("NEXTWORD_MODELS");
  for (size_t start = 0; start <= listed.size();) {
    const size_t end = std::min(listed.find(':', start), listed.size());
    if (end > start) dirs.push_back(listed.substr(start, end - start));
    start = end + 1;
  }
  if (const std::string user = user_models_directory(); !user.empty()) dirs.push_back(user);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.parent_path().filename() == "bin") {
    dirs.push_back((exe.parent_path().parent_path() / NEXTWORD_INSTALL_MODELS_SUBDIR).string());
  } else {
    dirs.emplace_back(NEXTWORD_SOURCE_DATA_DIR);
  }
  return dirs;
}

std::string default_model() {
  const std::string env = environment("NEXTWORD_MODEL");
  return env.empty() ? kDefaultModel : env;
}

std::string model_directory(const std::string& value) {
  const std::string chosen = value.empty() ? default_model() : value;
  if (is_ollama_reference(chosen)) {
    return find_ollama_model(ollama_store(), chosen.substr(std::string(kOllamaPrefix).size())).blob;
  }
  return resolve_model(chosen, model_search_path());
}

}  // namespace nextword::cli
