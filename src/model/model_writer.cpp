#include "model/model_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "model/weights_file.h"

namespace nextword {
namespace {

Error io_error(const std::string& path, const std::string& what) {
  return Error(ExitCode::kIo, path + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string temp = path + ".tmp." + std::to_string(getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw io_error(temp, "cannot create");
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const Error e = io_error(temp, "cannot write");
      ::close(fd);
      ::unlink(temp.c_str());
      throw e;
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const Error e = io_error(temp, "cannot flush");
    ::unlink(temp.c_str());
    throw e;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const Error e = io_error(path, "cannot replace");
    ::unlink(temp.c_str());
    throw e;
  }
  // Make the rename itself durable.
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void save_model(const Model& model, const ModelPaths& paths) {
  write_file_atomically(paths.vocab, nlohmann::json(model.vocab.words()).dump() + "\n");
  write_file_atomically(paths.weights,
                        encode_weights(model.config, model.weights, format_of_path(paths.weights)));
}

}  // namespace nextword
