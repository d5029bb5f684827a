#include "lsp/document.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "text/utf8.h"

namespace nextword::lsp {
namespace {

// The bytes of the UTF-8 sequence at text[i] that ends by `end`: 1 for a
// byte that does not start a valid one (invalid text counts a unit a byte,
// as an editor that read it as Latin-1 would).
size_t sequence_at(std::string_view text, size_t i, size_t end) {
  const size_t n = utf8_sequence_length(text.data() + i, text.data() + end);
  return n == 0 ? 1 : n;
}

// The code units of `encoding` that the sequence of `bytes` bytes counts.
size_t units(size_t bytes, Encoding encoding) {
  switch (encoding) {
    case Encoding::kUtf8: return bytes;
    case Encoding::kUtf16: return bytes == 4 ? 2 : 1;
    case Encoding::kUtf32: return 1;
  }
  return 1;
}

// Whether the 8 bytes at p are all ASCII.
bool is_ascii8(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return (word & 0x8080808080808080ULL) == 0;
}

}  // namespace

const char* encoding_name(Encoding encoding) {
  switch (encoding) {
    case Encoding::kUtf8: return "utf-8";
    case Encoding::kUtf16: return "utf-16";
    case Encoding::kUtf32: return "utf-32";
  }
  return "utf-16";
}

void Document::set(std::string text) {
  text_ = std::move(text);
  starts_.assign(1, 0);
  for (size_t i = 1; i <= text_.size(); ++i) {
    if (starts_line(i)) starts_.push_back(i);
  }
}

bool Document::starts_line(size_t i) const {
  const char before = text_[i - 1];
  return before == '\n' || (before == '\r' && (i == text_.size() || text_[i] != '\n'));
}

size_t Document::line_start(size_t line) const {
  return line < starts_.size() ? starts_[line] : text_.size();
}

size_t Document::line_end(size_t line) const {
  if (line + 1 >= starts_.size()) return text_.size();
  const size_t next = starts_[line + 1];
  return next >= 2 && text_[next - 1] == '\n' && text_[next - 2] == '\r' ? next - 2 : next - 1;
}

size_t Document::offset(Position p, Encoding encoding) const {
  if (p.line >= starts_.size()) return text_.size();
  size_t i = starts_[p.line], counted = 0;
  const size_t end = line_end(p.line);
  while (i < end) {
    // Eight ASCII bytes at once: each one unit in every encoding.
    if (i + 8 <= end && counted + 8 <= p.character && is_ascii8(text_.data() + i)) {
      i += 8;
      counted += 8;
      continue;
    }
    const size_t bytes = sequence_at(text_, i, end);
    const size_t more = units(bytes, encoding);
    if (counted + more > p.character) break;  // the position is this character's start
    counted += more;
    i += bytes;
  }
  return i;
}

Position Document::position(size_t offset, Encoding encoding) const {
  offset = std::min(offset, text_.size());
  Position p;
  p.line = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) -
                               starts_.begin()) -
           1;
  for (size_t i = starts_[p.line]; i < offset;) {
    if (i + 8 <= offset && is_ascii8(text_.data() + i)) {
      i += 8;
      p.character += 8;
      continue;
    }
    const size_t bytes = sequence_at(text_, i, offset);
    p.character += units(bytes, encoding);
    i += bytes;
  }
  return p;
}

void Document::replace(Position from, Position to, std::string_view text, Encoding encoding) {
  size_t a = offset(from, encoding), b = offset(to, encoding);
  if (a > b) std::swap(a, b);
  text_.replace(a, b - a, text);
  // Line starts before `a` stay (the bytes before them did not change);
  // those after `b` move by the edit's length (the byte before each, and the
  // one at it, are as they were); between, they are found again.
  const size_t e = a + text.size();
  const auto index = [&](auto it) { return it - starts_.begin(); };
  const auto first =
      index(std::lower_bound(starts_.begin(), starts_.end(), std::max<size_t>(a, 1)));
  const auto last = index(std::upper_bound(starts_.begin(), starts_.end(), b));
  for (auto k = static_cast<size_t>(last); k < starts_.size(); ++k) starts_[k] = starts_[k] - b + e;
  std::vector<size_t> found;
  for (size_t i = std::max<size_t>(a, 1); i <= e; ++i) {
    if (starts_line(i)) found.push_back(i);
  }
  starts_.erase(starts_.begin() + first, starts_.begin() + last);
  starts_.insert(starts_.begin() + first, found.begin(), found.end());
}

}  // namespace nextword::lsp
