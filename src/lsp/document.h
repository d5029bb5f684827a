// An open document of the Language Server Protocol: its text, and the
// edits an editor sends applied to it in order.
//
// Positions are (line, character) as LSP 3.17 counts them: lines end at
// "\n", "\r\n" or "\r", and a character is a code unit of the position
// encoding the client and server agreed on (UTF-16 by default, so a letter
// outside the Basic Multilingual Plane such as an emoji counts 2). A
// position past the end of its line is the line's end, and one past the
// last line is the document's end, as the protocol asks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nextword::lsp {

// What a position's "character" counts.
enum class Encoding { kUtf16, kUtf8, kUtf32 };

// "utf-16", "utf-8", "utf-32": the protocol's names (PositionEncodingKind).
const char* encoding_name(Encoding encoding);

struct Position {
  size_t line = 0;
  size_t character = 0;
};

// The start of each line is kept, so that a position costs the same at the
// end of a long document as at its start, and an edit the bytes it moves.
class Document {
 public:
  explicit Document(std::string text = {}) { set(std::move(text)); }

  const std::string& text() const { return text_; }
  // The byte offset of a position (clamped to its line's end, and to the
  // document's end past its last line).
  size_t offset(Position position, Encoding encoding) const;
  // The position of a byte offset (at a character's start).
  Position position(size_t offset, Encoding encoding) const;
  // Replaces the text between two positions with `text` (an incremental
  // change); `from` after `to` is taken as the other way round.
  void replace(Position from, Position to, std::string_view text, Encoding encoding);
  // Replaces the whole text (a full change).
  void set(std::string text);

 private:
  // The byte offset where line `line` starts, or the text's size past the last.
  size_t line_start(size_t line) const;
  // The byte offset where line `line` ends (before its line end).
  size_t line_end(size_t line) const;
  // Whether a line starts at byte `i` (> 0): a line end ends before it.
  bool starts_line(size_t i) const;

  std::string text_;
  std::vector<size_t> starts_;  // where each line starts: 0, then after each line end
};

}  // namespace nextword::lsp
