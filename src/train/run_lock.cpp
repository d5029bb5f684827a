#include "train/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/error.h"

namespace nextword {

RunLock::RunLock(const std::string& dir)
    : path_((std::filesystem::path(dir) / "train.lock").string()) {
  // A run that ends removes the file while it holds the lock; a run that
  // opened the file just before that may then lock a file no longer in the
  // directory, so it checks and tries again.
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(ExitCode::kIo, path_ + ": cannot open: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      char pid[32] = {};
      const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
      ::close(fd_);
      fd_ = -1;
      if (error != EWOULDBLOCK) {
        throw Error(ExitCode::kIo, path_ + ": cannot lock: " + std::strerror(error));
      }
      const std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "unknown";
      throw Error(ExitCode::kIo,
                  dir + ": another nextword train is running on it (pid " + holder + ")");
    }
    struct stat locked {
    }, named{};
    if (::fstat(fd_, &locked) == 0 && ::stat(path_.c_str(), &named) == 0 &&
        locked.st_ino == named.st_ino && locked.st_dev == named.st_dev) {
      break;
    }
    ::close(fd_);
  }
  // Ours now: say who holds it, for a run that will be refused.
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
    throw Error(ExitCode::kIo, path_ + ": cannot write: " + std::strerror(error));
  }
}

RunLock::~RunLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still locked: see the constructor
  ::close(fd_);             // closing the last descriptor drops the lock
}

}  // namespace nextword
