#include "cli/default_model.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "base/error.h"

namespace nextword::cli {

std::string default_model_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("NEXTWORD_MODEL"); env != nullptr && *env != '\0') {
    return env;
  }
  // The installed data directory (only for a binary in <prefix>/bin), then
  // the source tree's.
  std::vector<fs::path> data_dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.parent_path().filename() == "bin") {
    data_dirs.push_back(exe.parent_path().parent_path() / NEXTWORD_INSTALL_DATA_SUBDIR);
  }
  data_dirs.emplace_back(NEXTWORD_SOURCE_DATA_DIR);

  std::string looked, example;
  for (const fs::path& data : data_dirs) {
    if (fs::is_regular_file(data / "default" / "weights.safetensors", ec) ||
        fs::is_regular_file(data / "default" / "weights.json", ec)) {
      return (data / "default").string();
    }
    looked += ", " + (data / "default").string();
    if (example.empty() && fs::is_directory(data / "examples" / "fruit", ec)) {
      example = ", e.g. --model " + (data / "examples" / "fruit").string();
    }
  }
  throw Error(ExitCode::kModel, "no default model (looked in $NEXTWORD_MODEL" + looked +
                                    "); pass --model DIR" + example);
}

}  // namespace nextword::cli
