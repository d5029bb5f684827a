// complete/typed_text.h: the word being typed and the context before it.
#include "complete/typed_text.h"

#include <catch2/catch.hpp>
#include <string>

using namespace nextword;

namespace {
std::pair<std::string, std::string> split(std::string_view text) {
  const TypedText t = split_typed(text);
  CHECK(std::string(t.context) + std::string(t.prefix) == text);
  return {std::string(t.context), std::string(t.prefix)};
}
}  // namespace

TEST_CASE("the prefix is the word being typed at the end of the text", "[typed]") {
  using P = std::pair<std::string, std::string>;
  CHECK(split("once upon a ti") == P{"once upon a ", "ti"});
  CHECK(split("once upon a ") == P{"once upon a ", ""});
  CHECK(split("") == P{"", ""});
  CHECK(split("Li") == P{"", "Li"});
  // Apostrophes and hyphens inside or after the word belong to it.
  CHECK(split("I don'") == P{"I ", "don'"});
  CHECK(split("a mom-and-d") == P{"a ", "mom-and-d"});
  CHECK(split("I don\xE2\x80\x99t") == P{"I ", "don\xE2\x80\x99t"});
  // Before it they are punctuation: a quote, a dash.
  CHECK(split("he said 'ti") == P{"he said '", "ti"});
  CHECK(split("well -no") == P{"well -", "no"});
  // Text ending in punctuation or an opening quote waits for the next word.
  CHECK(split("time,") == P{"time,", ""});
  CHECK(split("she said \"") == P{"she said \"", ""});
  CHECK(split("time,th") == P{"time,", "th"});
  CHECK(split("caf\xC3\xA9") == P{"", "caf\xC3\xA9"});
  CHECK(split("x \xFF") == P{"x \xFF", ""});  // an invalid byte is not a letter
  CHECK(split("room 10") == P{"room ", "10"});
}

TEST_CASE("the context's tail keeps the last N whitespace-separated chunks", "[typed]") {
  CHECK(context_tail("a b c ", 2) == " b c ");
  CHECK(context_tail("a b c", 2) == " b c");
  CHECK(context_tail("a b c", 3) == "a b c");
  CHECK(context_tail("  a\n\tb  ", 5) == "  a\n\tb  ");
  CHECK(context_tail("", 4) == "");
  CHECK(context_tail("a b", 0) == "");
}
