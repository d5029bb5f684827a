// One trainer per directory: `train -o DIR` and `train --resume DIR` hold a
// lock on DIR/train.lock while they run, so a second run on the same
// directory is refused at once, before it touches a file, rather than the two
// overwriting each other's checkpoints. The lock is flock(2)'s: the kernel
// drops it when its process ends however it ends, so a run that was killed
// leaves nothing that blocks the next one (only the file, unlocked, which
// the next run takes over); a run that ends removes the file.
#pragma once

#include <string>

namespace nextword {

class RunLock {
 public:
  // Takes the lock on `dir` (which must exist) or throws Error(kIo) naming
  // the directory and the pid of the run that holds it.
  explicit RunLock(const std::string& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace nextword
