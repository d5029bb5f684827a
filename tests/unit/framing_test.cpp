// The LSP base protocol's framing (src/lsp/framing.h): frames cut at every
// byte, several in one piece, and headers that are not frames.
#include "lsp/framing.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using nextword::lsp::Frame;
using nextword::lsp::frame;
using nextword::lsp::FrameReader;

namespace {

// Every frame `reader` has ready, as "body" or "!error".
std::vector<std::string> drain(FrameReader& reader) {
  std::vector<std::string> out;
  Frame f;
  while (reader.next(f)) out.push_back(f.ok ? f.body : "!" + f.error);
  return out;
}

}  // namespace

TEST_CASE("frames split at any byte, or several in one piece, read the same", "[framing]") {
  const std::string stream = frame("{\"a\":1}") + frame("") + frame("{\"b\":\"\xc3\xaf\"}");
  REQUIRE(stream.substr(0, 21) == "Content-Length: 7\r\n\r\n");
  const std::vector<std::string> expected = {"{\"a\":1}", "", "{\"b\":\"\xc3\xaf\"}"};
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameReader reader(1 << 20);
    reader.feed(stream.substr(0, cut));
    std::vector<std::string> got = drain(reader);
    reader.feed(stream.substr(cut));
    for (std::string& s : drain(reader)) got.push_back(s);
    REQUIRE(got == expected);
    REQUIRE_FALSE(reader.partial());
  }
  FrameReader bytewise(1 << 20);
  std::vector<std::string> got;
  for (const char c : stream) {
    bytewise.feed(std::string(1, c));
    for (std::string& s : drain(bytewise)) got.push_back(s);
  }
  CHECK(got == expected);
}

TEST_CASE("header fields: case, other fields, blank lines before", "[framing]") {
  FrameReader reader(100);
  reader.feed(
      "content-length:2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}");
  reader.feed("\r\nContent-Length: 3\r\n\r\n[1]");
  CHECK(drain(reader) == std::vector<std::string>{"{}", "[1]"});
}

TEST_CASE("a header that is not a frame is one error, and reading goes on", "[framing]") {
  FrameReader reader(10);
  reader.feed("Content-Length: abc\r\n\r\n");
  reader.feed("Content-Type: x\r\n\r\n");
  reader.feed("no colon\r\nContent-Length: 2\r\n\r\n{}");  // its body is skipped
  reader.feed("Content-Length: 1\r\nContent-Length: 1\r\n\r\nx");
  reader.feed("Content-Length: 11\r\n\r\n0123456789A");  // over the cap: skipped
  reader.feed("Content-Length: 2\r\n\r\nok");
  CHECK(drain(reader) == std::vector<std::string>{
                             "!Content-Length: 'abc' is not a byte count",
                             "!Content-Length: missing from the header",
                             "!header: line 'no colon' is not 'Name: value'",
                             "!Content-Length: given twice",
                             "!Content-Length: 11 bytes, over the 10 a message may have", "ok"});
}

TEST_CASE("a body over the cap is skipped as it comes, without being kept", "[framing]") {
  FrameReader reader(4);
  reader.feed("Content-Length: 1000\r\n\r\n");
  CHECK(drain(reader).size() == 1);
  for (int i = 0; i < 100; ++i) reader.feed(std::string(10, 'x'));
  CHECK(reader.partial() == false);
  reader.feed("Content-Length: 2\r\n\r\n{}");
  CHECK(drain(reader) == std::vector<std::string>{"{}"});
}

TEST_CASE("a header without its end is refused past 8 KiB", "[framing]") {
  FrameReader reader(100);
  reader.feed(std::string(nextword::lsp::kMaxHeaderBytes, 'x'));
  CHECK(drain(reader).empty());
  reader.feed("xx");
  CHECK(drain(reader) ==
        std::vector<std::string>{"!header: over 8192 bytes without its end (an empty line)"});
  reader.feed("\r\n\r\nContent-Length: 2\r\n\r\n{}");
  CHECK(drain(reader) ==
        std::vector<std::string>{"!header: line 'xxx' is not 'Name: value'", "{}"});
}
