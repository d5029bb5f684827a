// Text into documents (text/documents.h): a document ends at a blank line,
// at a line `<|endoftext|>` and at the end of each file; its words are the
// tokenizer's; empty documents are dropped; unreadable files are named.
#include "text/documents.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "temp_dir.h"

using namespace nextword;

namespace {

std::vector<Document> split(const std::string& text, TokenizerOptions options = {}) {
  std::vector<Document> out;
  split_documents(text, options, out);
  return out;
}

}  // namespace

TEST_CASE("documents end at blank lines, <|endoftext|> and the end of the text", "[documents]") {
  CHECK(split("The cat sat.\nIt slept!\n\nA dog.\n") ==
        std::vector<Document>{{"the", "cat", "sat", ".", "it", "slept", "!"}, {"a", "dog", "."}});
  // Whitespace-only lines are blank; the separator may carry spaces and \r.
  CHECK(split("one two\r\n \t \r\nthree\n  <|endoftext|>\r\nfour\nfive") ==
        std::vector<Document>{{"one", "two"}, {"three"}, {"four", "five"}});
  // Runs of separators make no empty documents.
  CHECK(split("\n\n<|endoftext|>\n\nx\n<|endoftext|>\n<|endoftext|>\n\n") ==
        std::vector<Document>{{"x"}});
  CHECK(split("").empty());
  CHECK(split(" \n\t\n").empty());
  // Inside a line, the separator is only a word (split as punctuation).
  CHECK(split("a <|endoftext|> b", {false, false}) ==
        std::vector<Document>{{"a", "<|endoftext|>", "b"}});
  // The tokenizer's options apply: no lowercasing, no punctuation split.
  CHECK(split("The cat, sat.", {false, false}) == std::vector<Document>{{"The", "cat,", "sat."}});
  // Appends to what is there.
  std::vector<Document> out{{"kept"}};
  split_documents("new", {}, out);
  CHECK(out == std::vector<Document>{{"kept"}, {"new"}});
}

TEST_CASE("each file ends a document; unreadable files are named", "[documents]") {
  testing::TempDir dir;
  const std::string a = dir.write("a.txt", "first file\nstill first");
  const std::string b = dir.write("b.txt", "second\n\nthird\n");
  CHECK(read_documents({a, b}, {}) ==
        std::vector<Document>{{"first", "file", "still", "first"}, {"second"}, {"third"}});
  CHECK(read_documents({b, a}, {})[0] == Document{"second"});
  CHECK(read_documents({}, {}).empty());
  try {
    read_documents({a, (dir.dir / "missing.txt").string()}, {});
    FAIL("read a missing file");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kIo);
    CHECK(
        std::string(e.what()).starts_with((dir.dir / "missing.txt").string() + ": cannot open: "));
  }
  try {
    read_documents({dir.dir.string()}, {});
    FAIL("read a directory");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kIo);
    CHECK(std::string(e.what()) == dir.dir.string() + ": is a directory, expected a text file");
  }
}
