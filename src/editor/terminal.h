// The controlling terminal, for `nextword type`: keys in, two rows drawn in
// place (the line being typed and the one below it), and the terminal put
// back as it was on every way out.
//
// It talks to /dev/tty, not to stdin and stdout (as fzf does), so that
// stdout can be a pipe: `msg=$(nextword type)`. Output uses the terminal's
// own strings from terminfo (ncurses' term.h, kept inside terminal.cpp: its
// macros name capabilities like `lines` and `columns`); keys are read in
// raw mode (termios) with keypad transmit on, so that arrows, Home, End and
// the function keys send the strings terminfo names.
#pragma once

#include <termios.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextword::editor {

enum class KeyKind {
  kText,       // a printable character; Key::text holds its UTF-8 bytes
  kControl,    // a control byte (Ctrl-A is 0x01, Enter 0x0D, Tab 0x09); Key::number holds it
  kBackspace,  // Backspace (DEL or Ctrl-H)
  kDelete,     // Delete: the character under the cursor
  kLeft,
  kRight,
  kHome,
  kEnd,
  kPick,    // Alt-N (Escape then a digit) or the function key FN; Key::number holds N
  kEscape,  // Escape alone (nothing followed it at once)
  kResize,  // not a key: the window changed size
  kOther,   // a key the line editor has no use for
};

struct Key {
  KeyKind kind = KeyKind::kOther;
  std::string text;
  int number = 0;
};

class Terminal {
 public:
  // Opens /dev/tty and reads its terminfo entry. Throws Error(kUsage) when
  // there is no controlling terminal or terminfo cannot drive it.
  Terminal();
  // Restores the terminal (restore()).
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // Enters raw mode with keypad transmit on, and makes room for the row
  // below the cursor's. SIGTERM, SIGHUP and SIGINT then restore the
  // terminal before the process exits with 128 + the signal.
  void start();
  // The next key; waits for it. Throws Error(kIo) when the terminal is gone.
  Key read_key();
  // The window's width in columns (at least 1).
  int width() const;
  // Redraws the two rows: `input` on the row of the line being typed, with
  // the cursor left `cursor_column` columns into it, and `below` under it.
  // Neither may be wider than width() - 1 (a full row would wrap).
  void draw(std::string_view input, int cursor_column, std::string_view below);
  // After start(): clears the row below, leaves the cursor at its start,
  // turns keypad transmit off and puts the modes back; the signal handlers
  // go. Then closes the terminal. Done once; later calls do nothing.
  void restore();

 private:
  enum class Fill { kRead, kTimeout, kSignal };
  // Reads what the terminal has sent into pending_, waiting up to
  // timeout_ms (-1: for ever).
  Fill fill(int timeout_ms);
  // The key at the start of pending_, consumed; false when its bytes may
  // not all have come yet and `wait` allows waiting for them.
  bool take_key(bool wait, Key& key);
  bool take_escape(bool wait, Key& key);
  Key consume(size_t bytes, Key key);
  void put_back();
  // Moves the cursor right by `count` columns.
  std::string move_right(int count) const;
  void write_all(const std::string& bytes) const;

  int fd_ = -1;
  termios saved_{};
  bool started_ = false;
  bool closed_ = false;
  std::string pending_;                            // bytes read and not decoded yet
  std::vector<std::pair<std::string, Key>> keys_;  // terminfo's key strings, longest first
  // Terminfo strings with their padding applied, and the two that take a
  // column (hpa, cuf) as they are.
  std::string cr_, el_, cuu1_, cud1_, cuf1_, hpa_, cuf_;
};

// Columns that UTF-8 text takes on a terminal (wide characters two,
// combining marks none).
int display_width(std::string_view text);
// The bytes of the longest start of `text` that fits in `room` columns.
size_t fitting_bytes(std::string_view text, int room);

}  // namespace nextword::editor
