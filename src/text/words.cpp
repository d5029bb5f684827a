#include "text/words.h"

#include "text/tokenizer.h"
#include "text/utf8.h"

namespace nextword {
namespace {

bool is_ascii_alnum(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The Latin-1 capitals U+00C0..U+00DE but U+00D7 (the multiplication sign)
// are C3 80..C3 9E in UTF-8; their small letters are 0x20 above.
bool is_latin1_capital(std::string_view text) {
  if (text.size() < 2 || static_cast<unsigned char>(text[0]) != 0xC3) return false;
  const auto next = static_cast<unsigned char>(text[1]);
  return next >= 0x80 && next <= 0x9E && next != 0x97;
}

}  // namespace

bool is_letter_or_digit(uint32_t code_point) {
  if (code_point < 0x80) return is_ascii_alnum(code_point);
  return code_point >= 0xC0 && code_point <= 0x10FFFF &&
         !(code_point >= 0x2000 && code_point <= 0x206F);
}

uint32_t code_point_at(std::string_view text, size_t i, size_t* length) {
  const char* p = text.data() + i;
  const size_t n = utf8_sequence_length(p, text.data() + text.size());
  if (n == 0) {
    *length = 1;
    return kInvalidByte;
  }
  *length = n;
  const auto b = [p](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(p[k])); };
  switch (n) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

size_t code_point_count(std::string_view text) {
  size_t count = 0;
  for (size_t i = 0, n = 0; i < text.size(); i += n) {
    code_point_at(text, i, &n);
    ++count;
  }
  return count;
}

bool has_letter_or_digit(std::string_view token) {
  for (size_t i = 0, n = 0; i < token.size(); i += n) {
    if (is_letter_or_digit(code_point_at(token, i, &n))) return true;
  }
  return false;
}

std::string fold_case(std::string_view text) {
  return normalized_text(text, TokenizerOptions{.lowercase = true, .split_punctuation = true});
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] >= 'A' && out[i] <= 'Z') {
      out[i] = static_cast<char>(out[i] - 'A' + 'a');
    } else if (is_latin1_capital(std::string_view(out).substr(i))) {
      out[i + 1] = static_cast<char>(out[i + 1] + 0x20);
      ++i;
    }
  }
  return out;
}

bool starts_sentence(std::string_view before) {
  size_t i = before.size();
  if (i > 0 && before[i - 1] == '"' && (i == 1 || is_space(before[i - 2]))) return true;
  while (i > 0 && (is_space(before[i - 1]) || before[i - 1] == '"')) --i;
  return i == 0 || ends_sentence(before.substr(0, i));
}

bool starts_with_capital(std::string_view text) {
  return (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') || is_latin1_capital(text);
}

std::string written_form(std::string_view word, bool capitalize) {
  std::string out(word);
  const bool lone_i = word == "i" || word.starts_with("i'");
  if (out.empty() || !(capitalize || lone_i)) return out;
  if (out[0] >= 'a' && out[0] <= 'z') {
    out[0] = static_cast<char>(out[0] - 'a' + 'A');
  } else if (out.size() >= 2 && static_cast<unsigned char>(out[0]) == 0xC3) {
    const auto next = static_cast<unsigned char>(out[1]);
    if (next >= 0xA0 && next <= 0xBE && next != 0xB7) out[1] = static_cast<char>(next - 0x20);
  }
  return out;
}

namespace {
constexpr std::string_view kRightSingleQuote = "\xE2\x80\x99";  // ’, U+2019
}  // namespace

std::string_view writers_apostrophe(std::string_view text) {
  // ’ ‘ “ ” are E2 80 98, 99, 9C and 9D in UTF-8.
  for (size_t i = text.size(); i-- > 0;) {
    if (text[i] == '\'' || text[i] == '"') return "'";
    if (i >= 2 && text.substr(i - 2, 2) == "\xE2\x80") {
      const auto last = static_cast<unsigned char>(text[i]);
      if (last == 0x98 || last == 0x99 || last == 0x9C || last == 0x9D) return kRightSingleQuote;
    }
  }
  return "'";
}

std::string with_apostrophe(std::string word, std::string_view apostrophe) {
  if (apostrophe == "'") return word;
  for (size_t at = word.find('\''); at != std::string::npos; at = word.find('\'', at)) {
    word.replace(at, 1, apostrophe);
    at += apostrophe.size();
  }
  return word;
}

}  // namespace nextword
