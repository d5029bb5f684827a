// What the stream fuzzers share: a fuzz input written into a real pipe, to be
// read back as stdin is, and the count of lines a stream must answer.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <string>

namespace nextword::fuzz {

// The read end of a pipe holding `input` (closed for writing), or traps.
inline int pipe_holding(const std::string& input) {
  int fds[2];
  if (::pipe(fds) != 0) __builtin_trap();
  if (::write(fds[1], input.data(), input.size()) != static_cast<ssize_t>(input.size())) {
    __builtin_trap();
  }
  ::close(fds[1]);
  return fds[0];
}

// Lines in `input`, a last one without "\n" included: one record each.
inline size_t line_count(const std::string& input) {
  size_t lines = 0;
  for (const char c : input) lines += c == '\n' ? 1 : 0;
  if (!input.empty() && input.back() != '\n') ++lines;
  return lines;
}

}  // namespace nextword::fuzz
