// text/words.h: what a word is to a person typing, where sentences start and
// how a suggested word is written.
#include "text/words.h"

#include <catch2/catch.hpp>

#include "text/tokenizer.h"

using namespace nextword;

TEST_CASE("letters and digits: ASCII, Latin and beyond, but not punctuation", "[words]") {
  size_t n = 0;
  for (const char* letter : {"a", "Z", "7", "\xC3\xA9" /* é */, "\xC3\x80" /* À */,
                             "\xD0\xB4" /* д */, "\xE4\xB8\xAD" /* 中 */}) {
    CHECK(is_letter_or_digit(code_point_at(letter, 0, &n)));
  }
  for (const char* mark :
       {"'", "-", ",", "\"", " ", "\xC2\xAB" /* « */, "\xC2\xBF" /* ¿ */, "\xE2\x80\x99" /* ’ */,
        "\xE2\x80\x94" /* — */, "\xE2\x80\xA6" /* … */}) {
    CHECK_FALSE(is_letter_or_digit(code_point_at(mark, 0, &n)));
  }
  CHECK(code_point_at("\xE2\x80\x99x", 0, &n) == 0x2019);
  CHECK(n == 3);
  // An invalid byte is one code point of its own.
  CHECK(code_point_at("\xFFx", 0, &n) == kInvalidByte);
  CHECK_FALSE(is_letter_or_digit(kInvalidByte));
  CHECK(is_letter_or_digit(0xFFFD));  // a replacement character in valid text is not punctuation
  CHECK(n == 1);
  CHECK(code_point_count("caf\xC3\xA9 \xFF!") == 7);
  CHECK(has_letter_or_digit("didn't"));
  CHECK(has_letter_or_digit("\"3"));
  CHECK_FALSE(has_letter_or_digit("..."));
  CHECK_FALSE(has_letter_or_digit(""));
}

TEST_CASE("folding for matching lowers capitals and straightens apostrophes", "[words]") {
  CHECK(fold_case("Lily") == "lily");
  CHECK(fold_case("\xC3\x89T\xC3\x89") == "\xC3\xA9t\xC3\xA9");  // ÉTÉ -> été
  CHECK(fold_case("Don\xE2\x80\x99t") == "don't");
  CHECK(fold_case("\xC3\x97") == "\xC3\x97");  // the multiplication sign has no small letter
}

TEST_CASE("sentences start at the text's start, after . ! ? and after an opening quote",
          "[words]") {
  CHECK(starts_sentence(""));
  CHECK(starts_sentence("   "));
  CHECK(starts_sentence("It was late. "));
  CHECK(starts_sentence("Stop! \""));
  CHECK(starts_sentence("Why? \" "));
  CHECK(starts_sentence("she said, \""));
  CHECK_FALSE(starts_sentence("once upon a "));
  CHECK_FALSE(starts_sentence("she said, "));
  CHECK_FALSE(starts_sentence("3.5"));
  CHECK_FALSE(starts_sentence("\"hi\""));  // a closing quote glued to its word
}

TEST_CASE("a suggestion is written with the writer's capital, and I always big", "[words]") {
  CHECK(written_form("lily", true) == "Lily");
  CHECK(written_form("lily", false) == "lily");
  CHECK(written_form("i", false) == "I");
  CHECK(written_form("i'm", false) == "I'm");
  CHECK(written_form("it", false) == "it");
  CHECK(written_form("\xC3\xA9t\xC3\xA9", true) == "\xC3\x89t\xC3\xA9");
  CHECK(written_form("3rd", true) == "3rd");
  CHECK(starts_with_capital("Li"));
  CHECK(starts_with_capital("\xC3\x89t"));
  CHECK_FALSE(starts_with_capital("li"));
  CHECK_FALSE(starts_with_capital(""));
}

TEST_CASE("the tokenizer's normalization, as text", "[words]") {
  CHECK(normalized_text("Caf\xC3\x89 \xE2\x80\x9CHi\xE2\x80\x9D", {}) == "caf\xC3\xA9 \"hi\"");
  CHECK(normalized_text("ABC", {.lowercase = false, .split_punctuation = true}) == "ABC");
}

TEST_CASE("apostrophes as the writer's last quote mark or apostrophe, and case alone", "[words]") {
  const std::string curly = "\xE2\x80\x99";  // ’
  CHECK(writers_apostrophe("") == "'");
  CHECK(writers_apostrophe("it's") == "'");
  CHECK(writers_apostrophe("it" + curly + "s") == curly);
  CHECK(writers_apostrophe("it's \xE2\x80\x9CHi") == curly);           // “ after the straight one
  CHECK(writers_apostrophe("\xE2\x80\x9CHi\xE2\x80\x9D, \"") == "'");  // " after ” and “
  CHECK(writers_apostrophe("\xE2\x80\x98x") == curly);                 // ‘
  CHECK(writers_apostrophe("a \xE2\x80\x94 b") == "'");                // a dash is no quote
  CHECK(with_apostrophe("don't", "'") == "don't");
  CHECK(with_apostrophe("rock'n'roll", curly) == "rock" + curly + "n" + curly + "roll");
  CHECK(with_apostrophe("pie", curly) == "pie");
  // Keystroke counting's comparison: capitals lowered, apostrophes kept.
  CHECK(lowercase("Don" + curly + "T") == "don" + curly + "t");
  CHECK(lowercase("\xC3\x89T\xC3\x89") == "\xC3\xA9t\xC3\xA9");
  CHECK(lowercase("\xC3\x97") == "\xC3\x97");
}
