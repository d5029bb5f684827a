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

// Whether the end of `text` lies inside a fenced code block (CommonMark):
// a fence is a line of up to three spaces, then three or more backticks or
// tildes; the block ends at a fence of the same character, at least as long.
// Only the runs of three are looked at (found as memchr finds a byte), so a
// long document costs little more than a read of it.
bool in_fenced_code(std::string_view text) {
  bool open = false;
  char open_char = 0;
  size_t open_length = 0;
  for (size_t from = 0;;) {
    const size_t at = std::min(text.find("```", from), text.find("~~~", from));
    if (at == std::string_view::npos) return open;
    const char c = text[at];
    size_t end = at;
    while (end < text.size() && text[end] == c) ++end;
    from = end;
    size_t indent = 0;
    while (indent < at && indent < 4 && text[at - indent - 1] == ' ') ++indent;
    const bool line_start =
        indent == at || text[at - indent - 1] == '\n' || text[at - indent - 1] == '\r';
    if (!line_start || indent > 3) continue;
    const size_t length = end - at;
    if (!open) {
      open = true;
      open_char = c;
      open_length = length;
    } else if (c == open_char && length >= open_length) {
      open = false;
    }
    // The rest of a fence line (an info string) holds no other fence.
    from = std::min(text.find_first_of("\r\n", end), text.size());
  }
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
