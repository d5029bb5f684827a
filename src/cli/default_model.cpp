#include "cli/default_model.h"

#include <cstdlib>
#include <filesystem>

#include "model/error.h"

namespace nextword::cli {

std::string default_model_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("NEXTWORD_MODEL"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path installed =
      exe.parent_path().parent_path() / NEXTWORD_INSTALL_DATA_SUBDIR / "default";
  const fs::path source = fs::path(NEXTWORD_SOURCE_DATA_DIR) / "default";
  std::string looked;
  // Only an installed binary (<prefix>/bin/nextword) has an installed model.
  const bool have_exe = !ec && exe.parent_path().filename() == "bin";
  for (const fs::path& dir : {installed, source}) {
    if (dir == installed && !have_exe) continue;
    if (fs::is_regular_file(dir / "weights.json", ec)) return dir.string();
    looked += (looked.empty() ? "" : ", ") + dir.string();
  }
  throw Error(ExitCode::kModel, "no default model (looked in $NEXTWORD_MODEL, " + looked +
                                    "); pass --model DIR, e.g. --model " NEXTWORD_SOURCE_DATA_DIR
                                    "/examples/fruit");
}

}  // namespace nextword::cli
