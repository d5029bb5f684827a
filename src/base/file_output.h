// Writing results where a failure cannot go unnoticed: every write checked up
// to the final close (and rename), so a full disk, a full device or a
// read-only directory is one Error(kIo) naming the file, and a file that was
// there before is left as it was.
#pragma once

#include <string>
#include <string_view>

namespace nextword {

// Writes all of `bytes` to `fd`, again after a signal or a short write.
// False (errno set) when the system refuses; a write that makes no progress
// sets ENOSPC.
bool write_all(int fd, std::string_view bytes);

// `content` replaces `path` all at once: a temporary file beside it, flushed
// to the disk and renamed over it, so a reader (or a crash) never sees half a
// file and a failure leaves the old one and no temporary. A symbolic link is
// followed (the file it names is replaced, the link stays). A path that is
// not a regular file (a device such as /dev/stdout or /dev/full, a FIFO) is
// written to in place. Throws Error(kIo) "PATH: cannot write: why".
void write_file_atomically(const std::string& path, std::string_view content);

// Appends `content` to `path` (created when missing) and flushes it to the
// disk; when that fails the file is cut back to its length before, so it
// never ends in half a record. Throws Error(kIo) "PATH: cannot write: why".
void append_to_file(const std::string& path, std::string_view content);

}  // namespace nextword
