// The line editor of `nextword type`, like a phone's suggestion bar: keys
// from the terminal edit one line, and below it the completer's best words
// for the text before the cursor are listed numbered ("1 time  2 tiny ...").
// Tab, Alt-N or FN accept one (cli/type_command.cpp lists every key).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "complete/completer.h"
#include "editor/terminal.h"

namespace nextword::editor {

// The line being typed; the cursor is a byte offset at a character's start.
struct Line {
  std::string text;
  size_t cursor = 0;

  std::string_view before() const { return std::string_view(text).substr(0, cursor); }
};

// How the editing ended: Enter, Ctrl-C, or Ctrl-D on an empty line.
enum class End { kAccepted, kInterrupted, kEndOfInput };

// Edits `line` on a started terminal until Enter, Ctrl-C, or Ctrl-D on an
// empty line; the suggestions come from `completer`.
End edit(Terminal& terminal, Completer& completer, Line& line);

}  // namespace nextword::editor
