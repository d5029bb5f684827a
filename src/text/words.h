// What a word is to a person typing: letters and digits, where sentences
// start, and how a suggested word is capitalized. Predictive text entry
// (src/complete) and keystroke counting share these rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nextword {

// Whitespace, which separates words: space, tab, newline, carriage return,
// vertical tab and form feed (the tokenizer's, data/FORMAT.md).
constexpr bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// A word byte for the tokenizer's in-word apostrophe/hyphen rule: an
// ASCII letter or digit, or any byte of a non-ASCII character.
constexpr bool is_word_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

// A letter or digit: an ASCII letter or digit, or a code point from U+00C0
// to U+10FFFF that is not in the General Punctuation block (U+2000..U+206F).
bool is_letter_or_digit(uint32_t code_point);

// What code_point_at() gives for a byte that does not start valid UTF-8:
// beyond Unicode, so neither a letter nor any character.
constexpr uint32_t kInvalidByte = 0x110000;

// The code point at text[i] and its length in bytes (an invalid byte counts
// as one code point of its own, kInvalidByte, so any input can be walked).
uint32_t code_point_at(std::string_view text, size_t i, size_t* length);

// How many code points `text` holds (invalid bytes count one each).
size_t code_point_count(std::string_view text);

// A token holding at least one letter or digit: a word, not punctuation.
bool has_letter_or_digit(std::string_view token);

// Case folded for matching: A-Z and the Latin-1 capitals lowered, curly
// apostrophes and quotes made straight (the tokenizer's own normalization).
std::string fold_case(std::string_view text);

// `text` with A-Z and the Latin-1 capitals lowered and nothing else changed:
// the same word up to case, as keystroke counting compares words ("it’s" and
// "it's" are two spellings there, one word to fold_case).
std::string lowercase(std::string_view text);

// Does `text` end a sentence: is its last character '.', '!' or '?'?
constexpr bool ends_sentence(std::string_view text) {
  return !text.empty() && (text.back() == '.' || text.back() == '!' || text.back() == '?');
}

// Does a word written right after `before` start a sentence? Yes at the
// start of the text, after ". ", "! " or "? " (quotes between allowed), and
// right after an opening quote that follows a space.
bool starts_sentence(std::string_view before);

// True when text[0] is a capital letter (A-Z or Latin-1).
bool starts_with_capital(std::string_view text);

// `word` as a person writes it: its first letter capitalized when
// `capitalize`, and "i" (also in "i'm", "i'll") always as "I".
std::string written_form(std::string_view word, bool capitalize);

// The apostrophe a writer uses, judged by the last quote mark or apostrophe
// in `text`: U+2019 (’) when it is typographic (’ ‘ “ ”), else "'" (also when
// `text` has none). Writers who type curly quotes type curly apostrophes.
std::string_view writers_apostrophe(std::string_view text);

// `word` with each "'" written as `apostrophe`.
std::string with_apostrophe(std::string word, std::string_view apostrophe);

}  // namespace nextword
