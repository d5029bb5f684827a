#include "lsp/document.h"

#include <algorithm>
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

// The length of the line end at `i` ("\r\n" 2, "\n" or "\r" 1), 0 if none.
size_t line_end_at(std::string_view text, size_t i) {
  if (i >= text.size()) return 0;
  if (text[i] == '\n') return 1;
  if (text[i] != '\r') return 0;
  return i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
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

size_t Document::line_start(size_t line) const {
  size_t i = 0;
  for (size_t seen = 0; seen < line; ++seen) {
    i = line_end(i);
    const size_t end = line_end_at(text_, i);
    if (end == 0) return text_.size();  // past the last line
    i += end;
  }
  return i;
}

size_t Document::line_end(size_t start) const {
  const size_t at = text_.find_first_of("\r\n", start);
  return at == std::string::npos ? text_.size() : at;
}

size_t Document::offset(Position p, Encoding encoding) const {
  const size_t start = line_start(p.line);
  const size_t end = line_end(start);
  size_t i = start, counted = 0;
  while (i < end) {
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
  size_t start = 0;
  for (;;) {
    const size_t end = line_end(start);
    const size_t next = end + line_end_at(text_, end);
    if (offset < next || next == end) break;  // within this line, or it is the last
    start = next;
    ++p.line;
  }
  for (size_t i = start; i < offset;) {
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
}

}  // namespace nextword::lsp
