#include "base/bounded_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "base/error.h"

namespace nextword {

FileDescriptor::~FileDescriptor() { close(); }

bool FileDescriptor::close() {
  if (fd < 0) return true;
  const int result = ::close(std::exchange(fd, -1));
  return result == 0;
}

FileDescriptor open_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(ExitCode::kIo, path + ": is a directory, expected a text file");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ExitCode::kIo, path + ": cannot open: " + std::strerror(errno));
  return FileDescriptor(fd);
}

size_t pipe_limit(size_t most) {
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return most;
  return std::min(most, static_cast<size_t>(pages) * static_cast<size_t>(page) / 2);
}

ReadEnd read_bounded(int fd, size_t most, std::string& out,
                     const std::function<void(const std::string&, std::string_view)>& check) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ReadEnd::kFailed;
    if (n == 0) return ReadEnd::kComplete;
    if (out.size() + static_cast<size_t>(n) > most) return ReadEnd::kTooLarge;
    out.append(buffer, static_cast<size_t>(n));
    if (check) check(out, std::string_view(out).substr(out.size() - static_cast<size_t>(n)));
  }
}

}  // namespace nextword
