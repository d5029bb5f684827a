// Standard base64 (RFC 4648): round trips, and the texts it must refuse.
#include "format/base64.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace nextword;

TEST_CASE("base64 round trip and rejects", "[model]") {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    CHECK(base64_decode(base64_encode(s)) == s);
  }
  CHECK(base64_encode("abc") == "YWJj");
  CHECK(base64_encode("ab") == "YWI=");
  CHECK_FALSE(base64_decode("YWI"));   // length
  CHECK_FALSE(base64_decode("YW=I"));  // padding inside
  CHECK_FALSE(base64_decode("Y!Jj"));  // alphabet
  CHECK_FALSE(base64_decode("===="));
}
