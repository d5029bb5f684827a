// model/lexicon.h: lexicon.tsv read, checked line by line, and written.
#include "model/lexicon.h"

#include <catch2/catch.hpp>

#include "base/error.h"

using namespace nextword;

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_lexicon("m/lexicon.tsv", text);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kModel);
    return e.message();
  }
  return "no error";
}
}  // namespace

TEST_CASE("a lexicon is read into its order: most frequent first, ties by bytes", "[lexicon]") {
  const Lexicon l = parse_lexicon("x", "pear\t3\nbanana\t7\napple\t3\nz\xC3\xA9\t1");
  REQUIRE(l.entries.size() == 4);
  CHECK(l.entries[0].word == "banana");
  CHECK(l.entries[0].count == 7);
  CHECK(l.entries[1].word == "apple");
  CHECK(l.entries[2].word == "pear");
  CHECK(l.entries[3].word == "z\xC3\xA9");
  CHECK(format_lexicon(l) == "banana\t7\napple\t3\npear\t3\nz\xC3\xA9\t1\n");
  CHECK(parse_lexicon("x", format_lexicon(l)).entries.size() == 4);
  CHECK(parse_lexicon("x", "").entries.empty());
  CHECK(parse_lexicon("x", "big\t9223372036854775807\n").entries[0].count == INT64_MAX);
}

TEST_CASE("a broken lexicon line is refused naming the file and line", "[lexicon]") {
  CHECK(error_of("a\t1\nb 2\n") == "m/lexicon.tsv:2: expected WORD<TAB>COUNT");
  CHECK(error_of("a\t1\n\n") == "m/lexicon.tsv:2: expected WORD<TAB>COUNT");
  CHECK(error_of("\t3\n") == "m/lexicon.tsv:1: the word is empty");
  CHECK(error_of("a b\t3\n") == "m/lexicon.tsv:1: the word holds a space or control character");
  CHECK(error_of("a\x01\t3\n") == "m/lexicon.tsv:1: the word holds a space or control character");
  CHECK(error_of("a\t3\r\n") ==
        "m/lexicon.tsv:1: the count is not a whole number from 1 to 2^63 - 1 without a sign or "
        "leading zero: \"3\r\"");
  CHECK(error_of("\xFF\t3\n") == "m/lexicon.tsv:1: the word is not valid UTF-8");
  for (const char* count : {"0", "-1", "+1", "01", "1.5", "x", "", "9223372036854775808"}) {
    CAPTURE(count);
    CHECK(error_of(std::string("a\t") + count + "\n").find("m/lexicon.tsv:1: the count is not") ==
          0);
  }
  CHECK(error_of("a\t1\nb\t2\na\t3\n") == "m/lexicon.tsv:3: \"a\" appears twice");
  CHECK(error_of("a\t1\tx\n").find("m/lexicon.tsv:1: the count") == 0);
}

TEST_CASE("a missing lexicon file is a model error naming it", "[lexicon]") {
  try {
    read_lexicon("/nonexistent/lexicon.tsv");
    FAIL("read a missing file");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kModel);
    CHECK(e.message().find("/nonexistent/lexicon.tsv: cannot open") == 0);
  }
}
