// An LSP document's positions and edits (src/lsp/document.h), on texts
// whose offsets are counted by hand.
#include "lsp/document.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// In the namespace of the class: a unity build (NEXTWORD_UNITY) may bring
// other tests' `using namespace nextword`, where Document is a text's lines.
namespace nextword::lsp {

namespace {

// "Naïve 😀 once upon a Ti": ï is 2 bytes and 1 UTF-16 unit, 😀 4 bytes and
// 2 UTF-16 units (a surrogate pair); 26 bytes, 23 UTF-16 units, 22 code points.
const std::string kLine = "Na\xc3\xafve \xf0\x9f\x98\x80 once upon a Ti";

}  // namespace

TEST_CASE("a position's character counts the agreed code units", "[document]") {
  const Document d(kLine);
  REQUIRE(d.text().size() == 26);
  CHECK(d.offset({0, 23}, Encoding::kUtf16) == 26);
  CHECK(d.offset({0, 26}, Encoding::kUtf8) == 26);
  CHECK(d.offset({0, 22}, Encoding::kUtf32) == 26);
  // "Ti" starts after 21 units: N a ï v e ' ' (6) 😀 (2) ' ' (1) "once upon a " (12).
  CHECK(d.offset({0, 21}, Encoding::kUtf16) == 24);
  CHECK(d.offset({0, 8}, Encoding::kUtf16) == 11);   // just after the emoji
  CHECK(d.offset({0, 7}, Encoding::kUtf16) == 7);    // inside its pair: its start
  CHECK(d.offset({0, 3}, Encoding::kUtf16) == 4);    // after ï
  CHECK(d.offset({0, 99}, Encoding::kUtf16) == 26);  // past the line's end: its end
  CHECK(d.position(24, Encoding::kUtf16).character == 21);
  CHECK(d.position(24, Encoding::kUtf8).character == 24);
  CHECK(d.position(24, Encoding::kUtf32).character == 20);
  CHECK(d.position(11, Encoding::kUtf16).character == 8);
}

TEST_CASE("lines end at \\n, \\r\\n or \\r", "[document]") {
  const Document d("once\r\nupon a\r\nti\rx\ny");
  // once(0-3) \r\n(4-5) "upon a"(6-11) \r\n(12-13) ti(14-15) \r(16) x(17) \n(18) y(19)
  CHECK(d.offset({1, 0}, Encoding::kUtf16) == 6);
  CHECK(d.offset({1, 100}, Encoding::kUtf16) == 12);  // the line's end, before \r\n
  CHECK(d.offset({2, 2}, Encoding::kUtf16) == 16);
  CHECK(d.offset({3, 0}, Encoding::kUtf16) == 17);
  CHECK(d.offset({4, 1}, Encoding::kUtf16) == 20);
  CHECK(d.offset({9, 0}, Encoding::kUtf16) == 20);  // past the last line: the end
  for (const size_t at : {0u, 6u, 12u, 14u, 17u, 19u, 20u}) {
    const Position p = d.position(at, Encoding::kUtf16);
    CHECK(d.offset(p, Encoding::kUtf16) == at);
  }
  CHECK(d.position(14, Encoding::kUtf16).line == 2);
  CHECK(d.position(19, Encoding::kUtf16).line == 4);
  CHECK(Document("a\n").offset({1, 0}, Encoding::kUtf16) == 2);  // the empty last line
}

TEST_CASE("incremental edits after an emoji and line deletions", "[document]") {
  Document d(
      "\xf0\x9f\x98\x80"
      "ab\ncd\nef");
  d.replace({0, 2}, {0, 3}, "X", Encoding::kUtf16);  // 'a' -> 'X'
  CHECK(d.text() ==
        "\xf0\x9f\x98\x80"
        "Xb\ncd\nef");
  d.replace({1, 0}, {2, 0}, "", Encoding::kUtf16);  // the line "cd" deleted
  CHECK(d.text() ==
        "\xf0\x9f\x98\x80"
        "Xb\nef");
  d.replace({1, 2}, {1, 2}, "\r\ngh", Encoding::kUtf16);  // insert at the end
  CHECK(d.text() ==
        "\xf0\x9f\x98\x80"
        "Xb\nef\r\ngh");
  d.replace({2, 1}, {0, 4}, "-", Encoding::kUtf16);  // from after to before: the same range
  CHECK(d.text() ==
        "\xf0\x9f\x98\x80"
        "Xb-h");
  d.replace({0, 0}, {9, 9}, "new", Encoding::kUtf8);  // past the end: the whole text
  CHECK(d.text() == "new");
}

TEST_CASE("invalid UTF-8 counts a unit a byte", "[document]") {
  const Document d("a\xff\xc3z");
  CHECK(d.offset({0, 2}, Encoding::kUtf16) == 2);
  CHECK(d.offset({0, 4}, Encoding::kUtf16) == 4);
  CHECK(d.position(4, Encoding::kUtf16).character == 4);
  CHECK(std::string(nextword::lsp::encoding_name(Encoding::kUtf16)) == "utf-16");
}

namespace {

// LSP 3.17's offset of a position, counted from the text's start with
// nothing kept (the independent reference of the line index): code points
// in UTF-16 units, lines ending at \n, \r\n or \r.
size_t reference_offset(const std::string& text, Position p) {
  size_t i = 0;
  for (size_t line = 0; line < p.line; ++line) {
    while (i < text.size() && text[i] != '\n' && text[i] != '\r') ++i;
    if (i == text.size()) return text.size();
    i += text.compare(i, 2, "\r\n") == 0 ? 2 : 1;
  }
  size_t units = 0;
  while (i < text.size() && text[i] != '\n' && text[i] != '\r') {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t bytes = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    const size_t more = bytes == 4 ? 2 : 1;
    if (units + more > p.character) break;
    units += more;
    i += bytes;
  }
  return i;
}

}  // namespace

TEST_CASE("the line index follows random edits that split and join line ends", "[document]") {
  // Pieces that make line ends meet: "\r" then "\n" inserted after it joins
  // them into one "\r\n"; deleting between them splits them again.
  const std::vector<std::string> pieces = {
      "a", "bc", "\r", "\n", "\r\n", "\xc3\xaf", "\xf0\x9f\x98\x80", "long line of text ", ""};
  uint32_t state = 12345;
  auto next = [&](uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  Document d;
  std::string text;
  for (int step = 0; step < 3000; ++step) {
    std::string insert;
    for (uint32_t k = next(4); k > 0; --k) insert += pieces[next(pieces.size())];
    const Position from{next(8), next(24)}, to{next(8), next(24)};
    size_t a = reference_offset(text, from), b = reference_offset(text, to);
    if (a > b) std::swap(a, b);
    text.replace(a, b - a, insert);
    d.replace(from, to, insert, Encoding::kUtf16);
    REQUIRE(d.text() == text);
    for (size_t line = 0; line < 10; ++line) {
      for (size_t character = 0; character < 30; character += 3) {
        const size_t at = reference_offset(text, {line, character});
        REQUIRE(d.offset({line, character}, Encoding::kUtf16) == at);
        const Position back = d.position(at, Encoding::kUtf16);
        REQUIRE(reference_offset(text, back) == at);
      }
    }
  }
}

}  // namespace nextword::lsp
