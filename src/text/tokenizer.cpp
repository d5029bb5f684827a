#include "text/tokenizer.h"

#include <array>
#include <utility>

#include "text/words.h"

namespace nextword {
namespace {

bool is_ascii_punctuation(unsigned char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}

struct Replacement {
  std::string_view from, to;
  bool punctuation;  // a mark of its own when split_punctuation is on
};

// Multi-byte UTF-8 marks the tokenizer knows. Curly quotes become straight
// ones so that "don’t" and "don't" are the same word.
constexpr std::array<Replacement, 7> kUnicodeMarks = {{
    {"\xE2\x80\x98", "'", true},             // U+2018 left single quote
    {"\xE2\x80\x99", "'", true},             // U+2019 right single quote / apostrophe
    {"\xE2\x80\x9C", "\"", true},            // U+201C left double quote
    {"\xE2\x80\x9D", "\"", true},            // U+201D right double quote
    {"\xE2\x80\x93", "\xE2\x80\x93", true},  // U+2013 en dash
    {"\xE2\x80\x94", "\xE2\x80\x94", true},  // U+2014 em dash
    {"\xE2\x80\xA6", "\xE2\x80\xA6", true},  // U+2026 ellipsis
}};

// One character of the input after normalization.
struct Unit {
  std::string text;
  bool punctuation;
  bool space;
};

std::vector<Unit> normalize(std::string_view text, bool lowercase) {
  std::vector<Unit> units;
  units.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    bool matched = false;
    for (const Replacement& r : kUnicodeMarks) {
      if (text.substr(i, r.from.size()) == r.from) {
        units.push_back({std::string(r.to), r.punctuation, false});
        i += r.from.size();
        matched = true;
        break;
      }
    }
    if (matched) continue;
    auto c = static_cast<unsigned char>(text[i]);
    // Latin-1 capitals U+00C0..U+00DE (but not U+00D7, the multiplication
    // sign) are C3 80..C3 9E in UTF-8; their small letters are 0x20 higher.
    // (Only before a continuation byte: in invalid UTF-8 a C3 must not
    // swallow the next character, found by fuzzing: "\xC3A" kept its "A".)
    if (lowercase && c == 0xC3 && i + 1 < text.size() &&
        (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
      auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9E && next != 0x97)
        next = static_cast<unsigned char>(next + 0x20);
      units.push_back({std::string{static_cast<char>(c), static_cast<char>(next)}, false, false});
      i += 2;
      continue;
    }
    if (lowercase && c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a');
    units.push_back({std::string(1, static_cast<char>(c)), is_ascii_punctuation(c),
                     is_space(static_cast<char>(c))});
    ++i;
  }
  return units;
}

bool joins_word(const std::vector<Unit>& units, size_t i) {
  const std::string& t = units[i].text;
  if (t != "'" && t != "-") return false;
  if (i == 0 || i + 1 >= units.size()) return false;
  const Unit& before = units[i - 1];
  const Unit& after = units[i + 1];
  return !before.punctuation && !before.space &&
         is_word_byte(static_cast<unsigned char>(before.text.back())) && !after.punctuation &&
         !after.space && is_word_byte(static_cast<unsigned char>(after.text.front()));
}

}  // namespace

std::string normalized_text(std::string_view text, const TokenizerOptions& options) {
  std::string out;
  for (const Unit& u : normalize(text, options.lowercase)) out += u.text;
  return out;
}

std::vector<std::string> tokenize(std::string_view text, const TokenizerOptions& options) {
  const std::vector<Unit> units = normalize(text, options.lowercase);
  std::vector<std::string> tokens;
  std::string word;
  auto finish_word = [&] {
    if (!word.empty()) tokens.push_back(std::move(word));
    word.clear();
  };
  for (size_t i = 0; i < units.size(); ++i) {
    const Unit& u = units[i];
    if (u.space) {
      finish_word();
    } else if (options.split_punctuation && u.punctuation && !joins_word(units, i)) {
      finish_word();
      tokens.push_back(u.text);
    } else {
      word += u.text;
    }
  }
  finish_word();
  return tokens;
}

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) {
    if (!text.empty()) text += ' ';
    text += word;
  }
  return text;
}

}  // namespace nextword
