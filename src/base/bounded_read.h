// Reading a whole file, pipe or device into memory without trusting it to
// end: every reader of a file that is not memory-mapped goes through here,
// so "refused while reading, not after" is one rule in one place.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace nextword {

// A descriptor that is closed when it goes out of scope (-1: none).
struct FileDescriptor {
  int fd;
  explicit FileDescriptor(int descriptor) : fd(descriptor) {}
  ~FileDescriptor();
  // Closes it now; false (errno set) when close() reports a failure, such as
  // a write the file system could not complete.
  bool close();
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
};

// A text file (not a directory) opened for reading; throws Error(kIo)
// naming it when it cannot be.
FileDescriptor open_text_file(const std::string& path);

// The most a pipe or a device may bring when `most` is the format's limit:
// that, or half the memory free now, whichever is smaller (an endless one is
// refused before the system runs out of memory).
size_t pipe_limit(size_t most);

enum class ReadEnd {
  kComplete,  // the end of the input
  kTooLarge,  // `out` would have passed `most` bytes: reading stopped
  kFailed,    // read() failed; errno says why
};

// Appends what `fd` holds to `out`, 64 KiB at a time. `check(out, fresh)`,
// when given, sees each read as it arrives (`fresh`, the new end of `out`)
// and may throw to stop.
ReadEnd read_bounded(int fd, size_t most, std::string& out,
                     const std::function<void(const std::string&, std::string_view)>& check = {});

}  // namespace nextword
