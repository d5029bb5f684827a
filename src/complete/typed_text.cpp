#include "complete/typed_text.h"

#include "text/words.h"

namespace nextword {
namespace {

// Joins a word: an apostrophe (straight or U+2019) or a hyphen.
size_t joiner_before(std::string_view text, size_t end) {
  if (end >= 1 && (text[end - 1] == '\'' || text[end - 1] == '-')) return 1;
  if (end >= 3 && text.substr(end - 3, 3) == "\xE2\x80\x99") return 3;
  return 0;
}

// The length of the letter or digit that ends at `end`, or 0. A UTF-8
// sequence is found by walking back over its continuation bytes.
size_t letter_before(std::string_view text, size_t end) {
  size_t start = end;
  while (start > 0 && end - start < 4) {
    --start;
    if ((static_cast<unsigned char>(text[start]) & 0xC0) != 0x80) break;
  }
  if (start == end) return 0;
  size_t length = 0;
  const uint32_t c = code_point_at(text, start, &length);
  return start + length == end && is_letter_or_digit(c) ? length : 0;
}

}  // namespace

TypedText split_typed(std::string_view text) {
  size_t start = text.size();
  size_t word_start = text.size();  // where the run's first letter or digit starts
  for (;;) {
    if (const size_t n = letter_before(text, start)) {
      start -= n;
      word_start = start;
    } else if (const size_t j = joiner_before(text, start)) {
      start -= j;
    } else {
      break;
    }
  }
  // Joiners before the first letter are punctuation; with no letter at all
  // (the text ends in whitespace or punctuation) the prefix is empty.
  return {text.substr(0, word_start), text.substr(word_start)};
}

std::string_view context_tail(std::string_view context, int words) {
  size_t i = context.size();
  int chunks = 0;
  while (i > 0) {
    while (i > 0 && is_space(context[i - 1])) --i;
    if (i == 0) break;
    if (chunks == words) return context.substr(i);
    while (i > 0 && !is_space(context[i - 1])) --i;
    ++chunks;
  }
  return context.substr(i);
}

}  // namespace nextword
