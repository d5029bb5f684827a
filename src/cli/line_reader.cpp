#include "cli/line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "model/error.h"

namespace nextword::cli {

bool LineReader::next(std::string& line) {
  for (;;) {
    const size_t newline = buffer_.find('\n', start_);
    if (newline != std::string::npos || (end_ && start_ < buffer_.size())) {
      const size_t stop = newline == std::string::npos ? buffer_.size() : newline;
      line.assign(buffer_, start_, stop - start_);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      start_ = newline == std::string::npos ? buffer_.size() : newline + 1;
      return true;
    }
    if (end_) return false;
    fill();
  }
}

bool LineReader::ready() {
  for (;;) {
    if (end_ || buffer_.find('\n', start_) != std::string::npos) return true;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;  // nothing there yet
    fill();
  }
}

void LineReader::fill() {
  if (start_ > 0 && start_ * 2 >= buffer_.size()) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ExitCode::kIo, "cannot read standard input");
    if (n == 0) end_ = true;
    buffer_.append(chunk, static_cast<size_t>(n));
    return;
  }
}

}  // namespace nextword::cli
