#include "base/file_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/bounded_read.h"
#include "base/error.h"

namespace nextword {
namespace {

Error cannot_write(const std::string& path, int error) {
  return Error(ExitCode::kIo, path + ": cannot write: " + std::strerror(error));
}

// Devices and the process's own descriptors (/dev/stdout, /dev/full,
// /proc/self/fd/1): written in place, since no file can be put beside them
// and renamed over them.
bool written_in_place(const std::string& path, const struct stat& info) {
  return !S_ISREG(info.st_mode) || path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0;
}

// The file a symbolic link names (the link itself stays), or `path`.
std::string link_target(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return path;
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

}  // namespace

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = ENOSPC;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void write_file_atomically(const std::string& path, std::string_view content) {
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;
  if (exists && S_ISDIR(info.st_mode)) {
    throw Error(ExitCode::kIo, path + ": is a directory, expected a file");
  }
  if (exists && written_in_place(path, info)) {
    FileDescriptor d(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (d.fd < 0 || !write_all(d.fd, content) || !d.close()) throw cannot_write(path, errno);
    return;
  }
  const std::string target = link_target(path);
  const std::string temp = target + ".tmp." + std::to_string(::getpid());
  FileDescriptor d(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (d.fd < 0) throw cannot_write(path, errno);
  // The replaced file keeps its permissions.
  bool ok = (!exists || ::fchmod(d.fd, info.st_mode & 07777) == 0) && write_all(d.fd, content) &&
            ::fsync(d.fd) == 0 && d.close();
  int error = errno;
  if (ok && std::rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    throw cannot_write(path, error);
  }
  // Make the rename itself durable.
  const std::string dir = std::filesystem::path(target).parent_path().string();
  const FileDescriptor directory(
      ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.fd >= 0) ::fsync(directory.fd);
}

void append_to_file(const std::string& path, std::string_view content) {
  FileDescriptor d(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (d.fd < 0) throw cannot_write(path, errno);
  struct stat info {};
  const bool regular = ::fstat(d.fd, &info) == 0 && S_ISREG(info.st_mode);
  if (write_all(d.fd, content) && (!regular || ::fsync(d.fd) == 0) && d.close()) return;
  const int error = errno;
  if (regular) {
    // Never half a record at the end: what the next run reads stays whole.
    if (::truncate(path.c_str(), info.st_size) != 0) {
      throw Error(ExitCode::kIo,
                  path + ": cannot write: " + std::strerror(error) +
                      ", and cannot cut back what was written: " + std::strerror(errno));
    }
  }
  throw cannot_write(path, error);
}

}  // namespace nextword
