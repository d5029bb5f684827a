#include "text/tokenizer.h"

#include <catch2/catch.hpp>

using namespace nextword;
using Tokens = std::vector<std::string>;

TEST_CASE("words are split on whitespace and lowercased", "[tokenizer]") {
  CHECK(tokenize("Once upon\ta  time\n", {}) == Tokens{"once", "upon", "a", "time"});
  CHECK(tokenize("   ", {}).empty());
  CHECK(tokenize("", {}).empty());
  CHECK(tokenize("ÉMILE Ça", {}) == Tokens{"émile", "ça"});
  CHECK(tokenize("×", {}) == Tokens{"×"});  // U+00D7 is not a capital
  CHECK(tokenize("Once Upon", {false, true}) == Tokens{"Once", "Upon"});
}

TEST_CASE("punctuation marks are words of their own", "[tokenizer]") {
  CHECK(tokenize("Hello, world!", {}) == Tokens{"hello", ",", "world", "!"});
  CHECK(tokenize("\"Stop,\" she said.", {}) == Tokens{"\"", "stop", ",", "\"", "she", "said", "."});
  CHECK(tokenize("wait...", {}) == Tokens{"wait", ".", ".", "."});
  CHECK(tokenize("Hello, world!", {true, false}) == Tokens{"hello,", "world!"});
}

TEST_CASE("apostrophes and hyphens inside a word stay in it", "[tokenizer]") {
  CHECK(tokenize("Don't stop", {}) == Tokens{"don't", "stop"});
  CHECK(tokenize("Lily's well-known cat", {}) == Tokens{"lily's", "well-known", "cat"});
  CHECK(tokenize("'quoted' - dash", {}) == Tokens{"'", "quoted", "'", "-", "dash"});
  CHECK(tokenize("rock-'n'-roll", {}) == Tokens{"rock", "-", "'", "n", "'", "-", "roll"});
}

TEST_CASE("curly quotes read as straight ones, dashes are marks", "[tokenizer]") {
  CHECK(tokenize("don\u2019t", {}) == Tokens{"don't"});
  CHECK(tokenize("\u201cHi\u201d", {}) == Tokens{"\"", "hi", "\""});
  CHECK(tokenize("yes\u2014no\u2026", {}) == Tokens{"yes", "\u2014", "no", "\u2026"});
}

TEST_CASE("invalid UTF-8 is passed through as word bytes", "[tokenizer]") {
  CHECK(tokenize("a\xff\xfe b", {}) == Tokens{"a\xff\xfe", "b"});
  CHECK(tokenize("\xC3", {}) == Tokens{"\xC3"});  // a truncated sequence at the end
}

TEST_CASE("a lone C3 byte does not swallow the character after it", "[tokenizer]") {
  // Found by fuzz_tokenizer: in invalid UTF-8, "\xC3" before an ASCII letter
  // or a space took that byte along, which kept capitals and merged words.
  const TokenizerOptions lower{true, true};
  CHECK(tokenize("\xC3"
                 "A b",
                 lower) == std::vector<std::string>{"\xC3"
                                                    "a",
                                                    "b"});
  CHECK(tokenize("x\xC3 y", lower) == std::vector<std::string>{"x\xC3", "y"});
  CHECK(tokenize("\xC3\x89T\xC3\x89", lower) == std::vector<std::string>{"\xC3\xA9t\xC3\xA9"});
}
