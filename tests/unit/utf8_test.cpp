// text/utf8.h: validity by RFC 3629, and bytes written out as one line of text.
#include "text/utf8.h"

#include <catch2/catch.hpp>
#include <string>

using nextword::escape_bytes;
using nextword::is_valid_utf8;

TEST_CASE("UTF-8 validity refuses overlong forms, surrogates and cut sequences", "[utf8]") {
  CHECK(is_valid_utf8("Na\xc3\xafve \xf0\x9f\x98\x80"));
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  CHECK_FALSE(is_valid_utf8("\xf0\x9f\x98"));      // cut short
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

TEST_CASE("escaped: control characters and bytes that are not UTF-8 as \\xNN", "[utf8]") {
  CHECK(escape_bytes("plain \xc3\xaf \xf0\x9f\x98\x80") == "plain \xc3\xaf \xf0\x9f\x98\x80");
  CHECK(escape_bytes(std::string("a\0b\tc\r\n\x7f", 8)) == "a\\x00b\\x09c\\x0d\\x0a\\x7f");
  CHECK(escape_bytes("\xff\xfe\xc3") == "\\xff\\xfe\\xc3");
  CHECK(is_valid_utf8(escape_bytes("\xed\xa0\x80 \xc0")));
}
