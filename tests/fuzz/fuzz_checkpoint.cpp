// libFuzzer: the checkpoint reader of `train --resume DIR` on any bytes as
// DIR/checkpoint.json. It must accept a checkpoint whose options obey the
// command line's rules and whose vocabulary and tensors fit them, or refuse
// it naming the file (a model error, or a usage error for a checkpoint of
// another number of ranks); and never allocate for sizes the file does not
// hold.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "train/checkpoint.h"

namespace {

const std::string& directory() {
  static const std::string dir = [] {
    const auto path = std::filesystem::temp_directory_path() /
                      ("nextword-fuzz-checkpoint-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    return path.string();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = directory() + "/checkpoint.json";
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    const nextword::Checkpoint checkpoint(directory());
    // Accepted: the sizes agree, so restoring allocates only what is there.
    const int64_t n = checkpoint.stored_floats("params");
    std::vector<float> values(static_cast<size_t>(n));
    for (const char* field : {"params", "adam_m", "adam_v"}) {
      checkpoint.restore(field, values.data(), values.size());
    }
  } catch (const nextword::Error& e) {
    const bool ranks = e.code() == nextword::ExitCode::kUsage;  // "ranks" other than this run's
    if ((e.code() != nextword::ExitCode::kModel && !ranks) ||
        e.message().rfind(file + ":", 0) != 0) {
      __builtin_trap();
    }
  }
  return 0;
}
