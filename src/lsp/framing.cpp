#include "lsp/framing.h"

#include <algorithm>
#include <cctype>

#include "text/utf8.h"

namespace nextword::lsp {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Printable, for an error line: at most 40 bytes, escaped.
std::string shown(std::string_view s) {
  return escape_bytes(s.substr(0, 40)) + (s.size() > 40 ? "..." : "");
}

}  // namespace

std::string frame(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

void FrameReader::feed(std::string_view bytes) {
  if (skip_ > 0) {
    const size_t n = std::min(skip_, bytes.size());
    skip_ -= n;
    bytes.remove_prefix(n);
  }
  if (read_ > 0 && read_ >= buffer_.size() / 2) {
    buffer_.erase(0, read_);
    read_ = 0;
  }
  buffer_.append(bytes);
  parse();
}

bool FrameReader::next(Frame& frame) {
  if (frames_.empty()) return false;
  frame = std::move(frames_.front());
  frames_.pop_front();
  return true;
}

void FrameReader::parse() {
  for (;;) {
    if (skip_ > 0) {
      const size_t n = std::min(skip_, buffer_.size() - read_);
      skip_ -= n;
      read_ += n;
      if (skip_ > 0) return;
    }
    if (in_body_) {
      if (buffer_.size() - read_ < body_length_) return;
      frames_.push_back({true, buffer_.substr(read_, body_length_), {}});
      read_ += body_length_;
      in_body_ = false;
      continue;
    }
    const size_t end = buffer_.find("\r\n\r\n", read_);
    if (end == std::string::npos) {
      if (buffer_.size() - read_ > kMaxHeaderBytes) {
        frames_.push_back({false,
                           {},
                           "header: over " + std::to_string(kMaxHeaderBytes) +
                               " bytes without its end (an empty line)"});
        // Keep the last 3 bytes: they may start the "\r\n\r\n" that ends it.
        read_ = buffer_.size() - 3;
      }
      return;
    }
    parse_header(end);
    read_ = end + 4;
  }
}

void FrameReader::parse_header(size_t end) {
  std::string_view header(buffer_.data() + read_, end - read_);
  bool have_length = false;
  size_t length = 0;
  std::string error;
  while (!header.empty()) {
    const size_t eol = header.find("\r\n");
    const std::string_view line = header.substr(0, eol);
    header.remove_prefix(eol == std::string_view::npos ? header.size() : eol + 2);
    if (line.empty()) continue;  // a blank line before a header: lenient
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      if (error.empty()) error = "header: line '" + shown(line) + "' is not 'Name: value'";
      continue;
    }
    const std::string_view name = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (!same_name(name, "Content-Length")) continue;  // Content-Type and others: ignored
    const bool digits =
        !value.empty() && value.size() <= 18 &&
        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
      if (error.empty()) error = "Content-Length: '" + shown(value) + "' is not a byte count";
      continue;
    }
    if (have_length) {
      if (error.empty()) error = "Content-Length: given twice";
      continue;
    }
    have_length = true;
    length = std::stoull(std::string(value));
  }
  if (!have_length && error.empty()) error = "Content-Length: missing from the header";
  if (have_length && length > max_body_) {
    error = "Content-Length: " + std::to_string(length) + " bytes, over the " +
            std::to_string(max_body_) + " a message may have";
  }
  if (!error.empty()) {
    frames_.push_back({false, {}, error});
    // Its body, when its length is known, is not a header: skip it.
    if (have_length) skip_ = length;
    return;
  }
  in_body_ = true;
  body_length_ = length;
}

}  // namespace nextword::lsp
