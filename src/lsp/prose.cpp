#include "lsp/prose.h"

#include <algorithm>

namespace nextword::lsp {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The start of the line holding the end of `text`.
size_t line_start(std::string_view text) {
  const size_t at = text.find_last_of("\r\n");
  return at == std::string_view::npos ? 0 : at + 1;
}

// A fence line opens or closes a fenced code block (CommonMark): up to three
// spaces, then three or more backticks or tildes. Sets the fence's
// character and length.
bool fence(std::string_view line, char& c, size_t& length) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i == line.size() || (line[i] != '`' && line[i] != '~')) return false;
  c = line[i];
  const size_t start = i;
  while (i < line.size() && line[i] == c) ++i;
  length = i - start;
  return length >= 3;
}

// Whether the end of `text` lies inside a fenced code block.
bool in_fenced_code(std::string_view text) {
  bool open = false;
  char open_char = 0;
  size_t open_length = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = text.size();
    char c = 0;
    size_t length = 0;
    // The cursor's own line counts too: typing "```" opens a block.
    if (fence(text.substr(start, end - start), c, length)) {
      if (!open) {
        open = true;
        open_char = c;
        open_length = length;
      } else if (c == open_char && length >= open_length) {
        open = false;
      }
    }
    start = end + 1;
  }
  return open;
}

// Whether the end of `line` lies inside an inline code span: a run of
// backticks opens one, closed by a run of the same length.
bool in_inline_code(std::string_view line) {
  size_t open = 0;  // the opening run's length, 0: none
  for (size_t i = 0; i < line.size();) {
    if (line[i] != '`') {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < line.size() && line[i] == '`') ++i;
    const size_t run = i - start;
    if (open == 0) {
      open = run;
    } else if (run == open) {
      open = 0;
    }
  }
  return open != 0;
}

// Whether the chunk being typed (since the last whitespace) is a URL, an
// e-mail address or a link's destination.
bool in_url(std::string_view line) {
  size_t start = line.size();
  while (start > 0 && !is_space(line[start - 1])) --start;
  const std::string_view chunk = line.substr(start);
  return chunk.find("://") != std::string_view::npos || chunk.starts_with("www.") ||
         chunk.find("](") != std::string_view::npos || chunk.starts_with("<") ||
         chunk.starts_with("mailto:") || chunk.find('@') != std::string_view::npos;
}

}  // namespace

bool in_prose(std::string_view before, std::string_view language) {
  const std::string_view line = before.substr(line_start(before));
  if (language == "gitcommit") return !line.starts_with("#");
  if (language != "markdown") return true;
  return !in_fenced_code(before) && !in_inline_code(line) && !in_url(line);
}

}  // namespace nextword::lsp
