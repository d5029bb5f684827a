// Lines from standard input, with a way to ask whether another whole line is
// already there without waiting for it: phrases that arrive together (from a
// pipe or a file) are predicted together in one batch, while a line typed at
// a terminal is answered at once.
#pragma once

#include <string>

namespace nextword::cli {

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  // The next line, without its "\n" or "\r\n"; false at the end of the
  // input. Waits for input. Throws Error(kIo) when reading fails.
  bool next(std::string& line);
  // True when next() would return without waiting.
  bool ready();

 private:
  // Appends one read()'s worth; notes the end of input.
  void fill();

  int fd_;
  std::string buffer_;
  size_t start_ = 0;  // buffer_[start_..] is not returned yet
  bool end_ = false;
};

}  // namespace nextword::cli
