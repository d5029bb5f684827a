#include "cli/line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/error.h"
#include "cli/stop_signals.h"

namespace nextword::cli {

LineReader LineReader::standard_input() {
  catch_stop_signals();
  return LineReader(STDIN_FILENO);
}

size_t LineReader::find_newline() {
  const size_t at = buffer_.find('\n', std::max(start_, scanned_));
  scanned_ = at == std::string::npos ? buffer_.size() : at;
  return at;
}

bool LineReader::next_batch(std::vector<std::string>& lines, std::vector<char>& cut, int most) {
  lines.clear();
  cut.clear();
  std::string line;
  bool lost = false;
  while (static_cast<int>(lines.size()) < most && (lines.empty() || ready()) && next(line, &lost)) {
    lines.push_back(std::move(line));
    cut.push_back(lost);
  }
  return !lines.empty();
}

bool LineReader::next(std::string& line, bool* cut) {
  for (;;) {
    if (stop_signal() != 0) return false;
    const size_t newline = find_newline();
    if (newline != std::string::npos || (end_ && start_ < buffer_.size())) {
      size_t begin = start_;
      size_t stop = newline == std::string::npos ? buffer_.size() : newline;
      start_ = newline == std::string::npos ? buffer_.size() : newline + 1;
      if (stop > begin && buffer_[stop - 1] == '\r') --stop;
      // The cap holds however the reads split the line (fill() caps only a
      // line whose end has not come yet).
      if (stop - begin > kMaxLine) {
        begin = stop - kMaxLine;
        cut_ = true;
      }
      line.assign(buffer_, begin, stop - begin);
      if (cut != nullptr) *cut = cut_;
      cut_ = false;
      return true;
    }
    if (end_) return false;
    fill();
  }
}

bool LineReader::ready() {
  for (;;) {
    if (end_ || stop_signal() != 0 || find_newline() != std::string::npos) return true;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;  // nothing there yet
    fill();
  }
}

void LineReader::fill() {
  if (start_ > 0 && start_ * 2 >= buffer_.size()) {
    buffer_.erase(0, start_);
    scanned_ -= std::min(scanned_, start_);
    start_ = 0;
  }
  // Wait for input or a stop signal, whichever comes first.
  pollfd waits[2] = {{fd_, POLLIN, 0}, {stop_descriptor(), POLLIN, 0}};
  while (::poll(waits, 2, -1) < 0 && errno == EINTR) {  // a descriptor of -1 is skipped
  }
  if (stop_signal() != 0) return;
  char chunk[1 << 16];
  ssize_t n = 0;
  do {
    n = ::read(fd_, chunk, sizeof chunk);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    throw Error(ExitCode::kIo, std::string("standard input: cannot read: ") + std::strerror(errno));
  }
  if (n == 0) end_ = true;
  buffer_.append(chunk, static_cast<size_t>(n));
  // One byte more than the cap, in case it is the '\r' of a "\r\n".
  if (buffer_.size() - start_ > kMaxLine + 1 && find_newline() == std::string::npos) {
    // One line longer than the cap so far: keep its last bytes.
    buffer_.erase(start_, buffer_.size() - start_ - kMaxLine - 1);
    scanned_ = buffer_.size();
    cut_ = true;
  }
}

}  // namespace nextword::cli
