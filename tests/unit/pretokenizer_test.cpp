// text/pretokenizer.h: each pre-tokenizer's cuts worked by hand from its
// expressions, the pieces always covering the text, and inputs long enough
// to make a regular expression backtrack far (long runs of one character).
#include "text/pretokenizer.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "text/utf8.h"

using namespace nextword;

namespace {

std::vector<std::string> split(const char* name, std::string_view text) {
  const PreTokenizer pre(name);
  std::vector<std::string> out;
  for (const std::string_view piece : pre.split(text)) out.emplace_back(piece);
  return out;
}

using Pieces = std::vector<std::string>;

}  // namespace

TEST_CASE("pre-tokenizers: the cuts of each, by hand", "[pretokenizer]") {
  // A word keeps its space; of two spaces before a number the first stands
  // alone; contractions are pieces; white space at the end is one piece.
  CHECK(split("gpt-2", "Hello world's  3.14\n\n") ==
        Pieces{"Hello", " world", "'s", " ", " 3", ".", "14", "\n\n"});
  CHECK(split("mpt", "Hello world's  3.14\n\n") == split("gpt-2", "Hello world's  3.14\n\n"));
  // A tab before a word is not a space: a piece of its own.
  CHECK(split("gpt-2", "a\tb") == Pieces{"a", "\t", "b"});
  // Llama 3: numbers of up to three digits, contractions in capitals, line
  // ends with the white space before them, a word with the space before it.
  CHECK(split("llama-bpe", "12345 DON'T\r\n\n  x") ==
        Pieces{"123", "45", " DON", "'T", "\r\n\n", " ", " x"});
  CHECK(split("llama-bpe", "(hi)") == Pieces{"(hi", ")"});
  // Qwen 2: each digit alone.
  CHECK(split("qwen2", "x12345") == Pieces{"x", "1", "2", "3", "4", "5"});
  // StarCoder, SmolLM, Refact: each digit first, then GPT-2's cuts.
  for (const char* name : {"starcoder", "smollm", "refact"}) {
    CHECK(split(name, "abc 123") == Pieces{"abc", " ", "1", "2", "3"});
  }
  // Falcon: runs of punctuation and symbols first, digits by three last.
  CHECK(split("falcon", "x=12345!") == Pieces{"x", "=", "123", "45", "!"});
  // default: punctuation, GPT-2's cuts, numbers, then digits by three.
  CHECK(split("default", "a1234 b") == Pieces{"a", "123", "4", " b"});
  // DeepSeek Coder: line ends alone, words, punctuation (not '=', a
  // symbol), Han runs, each digit.
  CHECK(split("deepseek-coder", "x = 42;\n\xE4\xBD\xA0\xE5\xA5\xBD") ==
        Pieces{"x", " = ", "4", "2", ";", "\n", "\xE4\xBD\xA0\xE5\xA5\xBD"});
  // DeepSeek LLM: U+3000 is white space and one of its punctuation marks,
  // so the space before it joins it in the punctuation's expression (and
  // the expression of Han and the scripts before it then takes U+3000
  // alone): the two spaces stay apart. llama.cpp reads U+3000 as a
  // vertical tab for that expression and keeps "  " whole.
  CHECK(split("deepseek-llm", "\xE3\x80\x82  \xE3\x80\x80\\") ==
        Pieces{"\xE3\x80\x82", " ", " ", "\xE3\x80\x80", "\\"});
  CHECK(split("deepseek-llm", "Hello  \n") == Pieces{"Hello", "  ", "\n"});
}

TEST_CASE("pre-tokenizers: white space is Unicode's White_Space", "[pretokenizer]") {
  // U+0085 and U+00A0 are white space; U+180E (a format character since
  // Unicode 6.3, which PCRE2's \s still takes) and U+200B are not.
  CHECK(split("gpt-2", "a\xC2\x85 b") == Pieces{"a", "\xC2\x85", " b"});
  CHECK(split("gpt-2", "a\xC2\xA0\xC2\xA0") == Pieces{"a", "\xC2\xA0\xC2\xA0"});
  CHECK(split("gpt-2", "a\xE1\xA0\x8E\xE1\xA0\x8E") == Pieces{"a", "\xE1\xA0\x8E\xE1\xA0\x8E"});
  CHECK(split("gpt-2", "a \xE2\x80\x8B") == Pieces{"a", " \xE2\x80\x8B"});
}

TEST_CASE("pre-tokenizers: the pieces cover the text", "[pretokenizer]") {
  std::mt19937 random(7);
  const std::vector<std::string> alphabet = {" ",
                                             "  ",
                                             "\t",
                                             "\n",
                                             "\r",
                                             "a",
                                             "Z",
                                             "7",
                                             "'",
                                             "s",
                                             "'ll",
                                             ".",
                                             "!",
                                             "$",
                                             "=",
                                             "\xC3\xA9",
                                             "\xE4\xB8\xAD",
                                             "\xF0\x9F\x98\x80",
                                             "\xC2\x85",
                                             "\xE3\x80\x80",
                                             "\xE2\x80\x8D",
                                             "\xCC\x81",
                                             "\xEF\xBC\x81",
                                             "\xC2\xBD"};
  for (const std::string& name : PreTokenizer::names()) {
    const PreTokenizer pre(name);
    for (int round = 0; round < 300; ++round) {
      std::string text;
      const int length = static_cast<int>(random() % 40);
      for (int k = 0; k < length; ++k) text += alphabet[random() % alphabet.size()];
      std::string joined;
      bool empty = false;
      for (const std::string_view piece : pre.split(text)) {
        empty = empty || piece.empty();
        joined += piece;
        REQUIRE(is_valid_utf8(piece));  // never inside a character
      }
      CHECK_FALSE(empty);
      REQUIRE(joined == text);
    }
  }
}

TEST_CASE("pre-tokenizers: long runs of one character", "[pretokenizer]") {
  const size_t n = size_t{1} << 18;
  const std::vector<std::string> texts = {std::string(n, ' ') + "x", std::string(n, ' ') + "7",
                                          std::string(n, '\n') + "x", std::string(n, '\'') + "s",
                                          " " + std::string(n, '7')};
  for (const std::string& name : PreTokenizer::names()) {
    const PreTokenizer pre(name);
    for (const std::string& text : texts) {
      size_t covered = 0;
      for (const std::string_view piece : pre.split(text)) covered += piece.size();
      CHECK(covered == text.size());
    }
  }
  // GPT-2, a megabyte of spaces: all but the last, then the last with the word.
  const std::string megabyte = std::string(size_t{1} << 20, ' ') + "x";
  const auto pieces = PreTokenizer("gpt-2").split(megabyte);
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0].size() == (size_t{1} << 20) - 1);
  CHECK(pieces[1] == " x");
}

TEST_CASE("pre-tokenizers: names", "[pretokenizer]") {
  for (const char* name : {"default", "gpt-2", "llama-bpe", "qwen2", "smollm", "deepseek-llm",
                           "deepseek-coder", "falcon", "starcoder", "refact", "mpt"}) {
    CHECK(PreTokenizer::known(name));
  }
  CHECK_FALSE(PreTokenizer::known("gpt-5"));
  CHECK_FALSE(PreTokenizer::known(""));
  CHECK(PreTokenizer("llama-bpe").whole_tokens_first());
  CHECK_FALSE(PreTokenizer("gpt-2").whole_tokens_first());
  CHECK_THROWS_AS(PreTokenizer("gpt-5"), Error);
  CHECK(PreTokenizer("qwen2").split("").empty());
}
