#include "train/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/error.h"

namespace nextword {

RunLock::RunLock(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "train.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ExitCode::kIo, path + ": cannot open: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char pid[32] = {};
    const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (error != EWOULDBLOCK) {
      throw Error(ExitCode::kIo, path + ": cannot lock: " + std::strerror(error));
    }
    const std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
    throw Error(ExitCode::kIo, dir + ": another nextword train is running on it (pid " +
                                   (holder.empty() ? std::string("unknown") : holder) + ")");
  }
  // Ours now: say who holds it, for the run that will be refused.
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(ExitCode::kIo, path + ": cannot write: " + std::strerror(error));
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor drops the lock
}

}  // namespace nextword
