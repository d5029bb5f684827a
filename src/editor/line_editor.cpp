#include "editor/line_editor.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace nextword::editor {
namespace {

constexpr int ctrl(char letter) { return letter & 0x1F; }

// The start of the character before byte i (UTF-8: back over continuation bytes).
size_t previous_char(std::string_view text, size_t i) {
  if (i == 0) return 0;
  --i;
  while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  return i;
}

// The start of the character after the one at byte i.
size_t next_char(std::string_view text, size_t i) {
  if (i >= text.size()) return text.size();
  ++i;
  while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  return i;
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Where Ctrl-W deletes back to: over blanks, then over the word before them
// (readline's unix-word-rubout).
size_t word_start_before(std::string_view text, size_t i) {
  while (i > 0 && is_blank(text[i - 1])) --i;
  while (i > 0 && !is_blank(text[i - 1])) --i;
  return i;
}

void insert(Line& line, std::string_view s) {
  line.text.insert(line.cursor, s);
  line.cursor += s.size();
}

// Deletes text[from, to); the cursor stays on the same text.
void erase(Line& line, size_t from, size_t to) {
  line.text.erase(from, to - from);
  if (line.cursor >= to) {
    line.cursor -= to - from;
  } else if (line.cursor > from) {
    line.cursor = from;
  }
}

// Accepts suggestion n (from 1) of `shown`, the completion of the text
// before the cursor: the word's start there becomes the word and a space.
void pick(Line& line, const Completion& shown, int n) {
  if (n < 1 || static_cast<size_t>(n) > shown.suggestions.size()) return;
  erase(line, line.cursor - shown.prefix.size(), line.cursor);
  insert(line, shown.suggestions[static_cast<size_t>(n) - 1].word + " ");
}

std::optional<End> apply_control(int byte, Line& line, const Completion& shown) {
  switch (byte) {
    case '\r':
    case '\n': return End::kAccepted;
    case ctrl('C'): return End::kInterrupted;
    case ctrl('D'):
      if (line.text.empty()) return End::kEndOfInput;
      erase(line, line.cursor, next_char(line.text, line.cursor));
      break;
    case '\t': pick(line, shown, 1); break;
    case ctrl('A'): line.cursor = 0; break;
    case ctrl('E'): line.cursor = line.text.size(); break;
    case ctrl('B'): line.cursor = previous_char(line.text, line.cursor); break;
    case ctrl('F'): line.cursor = next_char(line.text, line.cursor); break;
    case ctrl('W'): erase(line, word_start_before(line.text, line.cursor), line.cursor); break;
    case ctrl('U'): erase(line, 0, line.cursor); break;
    case ctrl('K'): erase(line, line.cursor, line.text.size()); break;
    default: break;  // other control keys do nothing
  }
  return std::nullopt;
}

// What `key` does to the line; the end of the editing, if it ends it.
// `escape` is set when Escape came alone (a digit next picks).
std::optional<End> apply(const Key& key, Line& line, const Completion& shown, bool& escape) {
  switch (key.kind) {
    case KeyKind::kText: insert(line, key.text); break;
    case KeyKind::kControl: return apply_control(key.number, line, shown);
    case KeyKind::kPick: pick(line, shown, key.number); break;
    case KeyKind::kEscape: escape = true; break;
    case KeyKind::kBackspace:
      erase(line, previous_char(line.text, line.cursor), line.cursor);
      break;
    case KeyKind::kDelete: erase(line, line.cursor, next_char(line.text, line.cursor)); break;
    case KeyKind::kLeft: line.cursor = previous_char(line.text, line.cursor); break;
    case KeyKind::kRight: line.cursor = next_char(line.text, line.cursor); break;
    case KeyKind::kHome: line.cursor = 0; break;
    case KeyKind::kEnd: line.cursor = line.text.size(); break;
    case KeyKind::kResize:
    case KeyKind::kOther: break;
  }
  return std::nullopt;
}

// Control characters (a vocabulary may hold any) shown as '?', so that a
// word cannot move the cursor or change the terminal's modes.
std::string printable(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return text;
}

struct InputRow {
  std::string text;   // "> " and the part of the line in view
  int cursor_column;  // where the cursor goes in it
};

// The row of the line being typed, `width` columns wide. A line too long
// for it scrolls sideways to keep the cursor in view ("< " then shows that
// its start is out of view). The last column stays empty: a full row would
// wrap.
InputRow input_row(const Line& line, int width) {
  const int room = std::max(width - 3, 1);  // the prompt takes 2 columns
  const std::string_view text = line.text;
  int before = display_width(line.before());
  size_t start = 0;
  while (before >= room && start < line.cursor) {
    const size_t next = next_char(text, start);
    before -= display_width(text.substr(start, next - start));
    start = next;
  }
  const std::string_view shown = text.substr(start);
  std::string row = std::string(start == 0 ? "> " : "< ");
  row += shown.substr(0, fitting_bytes(shown, room));
  row.resize(fitting_bytes(row, std::max(width - 1, 0)));  // a terminal 1 or 2 columns wide
  return {printable(std::move(row)), std::min(2 + before, std::max(width - 1, 0))};
}

// "1 time  2 tiny  3 tired": the suggestions that fit in width - 1 columns
// (the first one cut when even it does not fit).
std::string suggestion_row(const Completion& shown, int width) {
  const int room = std::max(width - 1, 0);
  std::string row;
  for (size_t i = 0; i < shown.suggestions.size(); ++i) {
    const std::string entry =
        (i > 0 ? "  " : "") + std::to_string(i + 1) + " " + shown.suggestions[i].word;
    if (display_width(row) + display_width(entry) > room) {
      if (row.empty()) row = entry.substr(0, fitting_bytes(entry, room));
      break;
    }
    row += entry;
  }
  return printable(std::move(row));
}

void draw(Terminal& terminal, const Line& line, const Completion& shown) {
  const int width = terminal.width();
  const InputRow input = input_row(line, width);
  terminal.draw(input.text, input.cursor_column, suggestion_row(shown, width));
}

}  // namespace

// Edits `line` until Enter, Ctrl-C, or Ctrl-D on an empty line.
End edit(Terminal& terminal, Completer& completer, Line& line) {
  Completion shown;
  std::optional<std::string> completed;  // the text `shown` is for
  bool escape = false;                   // Escape came alone: a digit next picks
  for (;;) {
    // Only when the text before the cursor changed: with --no-repeat or
    // --learn, each call to complete() is a keystroke to the completer.
    if (completed != line.before()) {
      completed = std::string(line.before());
      shown = completer.complete(*completed);
    }
    draw(terminal, line, shown);
    const Key key = terminal.read_key();
    if (std::exchange(escape, false) && key.kind == KeyKind::kText && key.text.size() == 1 &&
        key.text[0] >= '1' && key.text[0] <= '9') {
      pick(line, shown, key.text[0] - '0');
      continue;
    }
    if (const std::optional<End> end = apply(key, line, shown, escape)) return *end;
  }
}

}  // namespace nextword::editor
