// Where nextword lsp suggests words (src/lsp/prose.h): Markdown's code and
// URLs, commit messages' comments.
#include "lsp/prose.h"

#include <catch2/catch.hpp>

using nextword::lsp::in_prose;

TEST_CASE("Markdown: fenced code blocks", "[prose]") {
  CHECK(in_prose("Once upon a ti", "markdown"));
  CHECK_FALSE(in_prose("```\nonce", "markdown"));
  CHECK_FALSE(in_prose("text\n   ~~~~ python\nx = 1\nonce", "markdown"));
  CHECK(in_prose("```\ncode\n```\nonce", "markdown"));
  // A shorter or other fence does not close it; a longer one does.
  CHECK_FALSE(in_prose("````\n```\nonce", "markdown"));
  CHECK_FALSE(in_prose("```\n~~~\nonce", "markdown"));
  CHECK(in_prose("```\n`````\nonce", "markdown"));
  // Four spaces: not a fence; CRLF lines.
  CHECK(in_prose("    ```\nonce", "markdown"));
  CHECK_FALSE(in_prose("```\r\nonce", "markdown"));
  CHECK(in_prose("```\r\nx\r\n```\r\nonce", "markdown"));
}

TEST_CASE("Markdown: inline code spans and URLs", "[prose]") {
  CHECK_FALSE(in_prose("Call `ti", "markdown"));
  CHECK(in_prose("Call `f()` at ti", "markdown"));
  CHECK_FALSE(in_prose("a ``x ` y", "markdown"));  // a run of 1 does not close 2
  CHECK(in_prose("a ``x ` y`` z", "markdown"));
  CHECK(in_prose("`code`\nnext li", "markdown"));  // spans end at the line here
  CHECK_FALSE(in_prose("See https://exam", "markdown"));
  CHECK_FALSE(in_prose("See www.exam", "markdown"));
  CHECK_FALSE(in_prose("A [link](doc", "markdown"));
  CHECK_FALSE(in_prose("Mail me@exa", "markdown"));
  CHECK(in_prose("See https://example.org and ti", "markdown"));
}

TEST_CASE("other languages: commit comments; plain text always", "[prose]") {
  CHECK_FALSE(in_prose("Subject\n# Please enter", "gitcommit"));
  CHECK(in_prose("Subject\n\nOnce upon a", "gitcommit"));
  CHECK(in_prose("```\nonce", "plaintext"));
  CHECK(in_prose("# heading", "markdown"));
}
