#include "editor/terminal.h"

#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "base/error.h"
#include "text/utf8.h"
#include "text/words.h"

// Last: its macros are the capabilities' long names (columns, lines, tab...).
#include <term.h>

namespace nextword::editor {
namespace {

constexpr char kEscape = '\x1b';
// How long the rest of a key's string may take once its first bytes came:
// a terminal sends a key's bytes together, so a lone Escape is one after this.
constexpr int kSequenceWaitMs = 50;
constexpr int kExitSignals[] = {SIGTERM, SIGHUP, SIGINT};

Key make_key(KeyKind kind, int number = 0, std::string_view text = {}) {
  return Key{kind, std::string(text), number};
}

// What the signal handlers need, set before they are installed: a handler
// cannot reach the Terminal, and may only call async-signal-safe functions.
struct SignalRestore {
  int fd = -1;
  termios saved{};
  std::array<char, 256> bytes{};  // clear the row below, keypad transmit off
  size_t size = 0;
};
SignalRestore g_restore;
bool g_open = false;  // a Terminal is open (there is one /dev/tty, and one cur_term)
struct sigaction g_old_actions[std::size(kExitSignals)];
struct sigaction g_old_winch;
volatile sig_atomic_t g_resized = 0;

void on_exit_signal(int signal) {
  if (write(g_restore.fd, g_restore.bytes.data(), g_restore.size) < 0) {
    // Nothing to do about it: the modes below matter more.
  }
  tcsetattr(g_restore.fd, TCSADRAIN, &g_restore.saved);
  _exit(128 + signal);
}

void on_resize(int) { g_resized = 1; }

// Handlers for the signals that end the process (one left ignored, as
// under nohup, stays ignored) and for a change of the window's size. No
// SA_RESTART: poll() returns at a resize, so the rows are redrawn.
void install_handlers() {
  struct sigaction action {};
  action.sa_handler = on_exit_signal;
  sigemptyset(&action.sa_mask);
  for (const int s : kExitSignals) sigaddset(&action.sa_mask, s);
  for (size_t i = 0; i < std::size(kExitSignals); ++i) {
    sigaction(kExitSignals[i], nullptr, &g_old_actions[i]);
    if (g_old_actions[i].sa_handler != SIG_IGN) sigaction(kExitSignals[i], &action, nullptr);
  }
  struct sigaction resize {};
  resize.sa_handler = on_resize;
  sigemptyset(&resize.sa_mask);
  sigaction(SIGWINCH, &resize, &g_old_winch);
}

void uninstall_handlers() {
  for (size_t i = 0; i < std::size(kExitSignals); ++i) {
    sigaction(kExitSignals[i], &g_old_actions[i], nullptr);
  }
  sigaction(SIGWINCH, &g_old_winch, nullptr);
}

// tputs() hands the bytes to a function of one int; this is where they go.
std::string* g_tputs_out = nullptr;
int put_byte(int c) {
  g_tputs_out->push_back(static_cast<char>(c));
  return c;
}

// A terminfo string with its padding applied (tputs), "" for none.
std::string padded(const char* s) {
  std::string out;
  if (s == nullptr) return out;
  g_tputs_out = &out;
  tputs(s, 1, put_byte);
  g_tputs_out = nullptr;
  return out;
}

// A string capability of the terminal, or nullptr when it has none.
const char* capability(const char* name) {
  const char* s = tigetstr(name);
  return s == reinterpret_cast<char*>(intptr_t{-1}) ? nullptr : s;
}

// A string capability as it is (with its parameters and padding), "" for none.
std::string unexpanded(const char* name) {
  const char* s = capability(name);
  return s != nullptr ? s : "";
}

// "type cannot drive the terminal TERM=xterm", the start of the messages
// about a terminal terminfo cannot drive.
std::string terminal_named() {
  const char* term = std::getenv("TERM");
  return std::string("type cannot drive the terminal TERM=") + (term != nullptr ? term : "(unset)");
}

// Reads TERM's terminfo entry for the terminal on `fd`.
void setup_terminfo(int fd) {
  int status = 0;
  setupterm(nullptr, fd, &status);
  if (status == 1) return;  // found (0: not found or not a screen; -1: no terminfo database)
  throw Error(ExitCode::kUsage, terminal_named() +
                                    ": not in the terminfo database; for scripts use nextword "
                                    "complete");
}

// The keys the editor knows, from terminfo, longest first so that the
// longest string that matches wins. After them, the other usual strings of
// the arrows, Home, End and Delete (the ANSI and VT220 forms, in and out of
// keypad transmit mode): terminfo describes one mode of one terminal, and a
// terminal that ignores smkx, or a TERM that names another terminal, sends
// those. Terminfo's meaning wins where they differ.
std::vector<std::pair<std::string, Key>> known_keys() {
  std::vector<std::pair<std::string, Key>> keys;
  const std::pair<const char*, KeyKind> named[] = {
      {"kcub1", KeyKind::kLeft}, {"kcuf1", KeyKind::kRight},  {"khome", KeyKind::kHome},
      {"kend", KeyKind::kEnd},   {"kdch1", KeyKind::kDelete}, {"kbs", KeyKind::kBackspace}};
  for (const auto& [name, kind] : named) {
    if (const char* s = capability(name)) keys.push_back({s, make_key(kind)});
  }
  for (int n = 1; n <= 9; ++n) {
    const std::string name = "kf" + std::to_string(n);
    if (const char* s = capability(name.c_str())) keys.push_back({s, make_key(KeyKind::kPick, n)});
  }
  std::erase_if(keys, [](const auto& k) { return k.first.empty(); });
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  const std::pair<const char*, KeyKind> usual[] = {
      {"\x1b[1~", KeyKind::kHome}, {"\x1b[4~", KeyKind::kEnd},  {"\x1b[3~", KeyKind::kDelete},
      {"\x1b[D", KeyKind::kLeft},  {"\x1b[C", KeyKind::kRight}, {"\x1b[H", KeyKind::kHome},
      {"\x1b[F", KeyKind::kEnd},   {"\x1bOD", KeyKind::kLeft},  {"\x1bOC", KeyKind::kRight},
      {"\x1bOH", KeyKind::kHome},  {"\x1bOF", KeyKind::kEnd}};
  for (const auto& [s, kind] : usual) keys.push_back({s, make_key(kind)});
  return keys;
}

// How many bytes the UTF-8 character that starts with `lead` has.
size_t expected_length(unsigned char lead) {
  return lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
}

// Columns one code point takes: wcwidth() in a UTF-8 locale of this thread
// only (the process's locale stays "C", which the engine's parsing expects).
int code_point_width(uint32_t code_point) {
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  if (code_point < 0x80 || utf8 == locale_t{}) return 1;
  const locale_t before = uselocale(utf8);
  const int width = wcwidth(static_cast<wchar_t>(code_point));
  uselocale(before);
  return width < 0 ? 1 : width;
}

}  // namespace

Terminal::Terminal() {
  if (g_open) throw std::logic_error("one Terminal at a time");
  fd_ = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) {
    throw Error(ExitCode::kUsage,
                "type needs a terminal (/dev/tty); for scripts use nextword complete");
  }
  try {
    setup_terminfo(fd_);
  } catch (...) {
    close(fd_);
    throw;
  }
  cr_ = padded(capability("cr"));
  el_ = padded(capability("el"));
  cuu1_ = padded(capability("cuu1"));
  cud1_ = padded(capability("cud1"));
  cuf1_ = padded(capability("cuf1"));
  hpa_ = unexpanded("hpa");
  cuf_ = unexpanded("cuf");
  if (cr_.empty() || el_.empty() || cuu1_.empty() || cud1_.empty() ||
      (cuf1_.empty() && hpa_.empty() && cuf_.empty()) || tcgetattr(fd_, &saved_) != 0) {
    del_curterm(cur_term);
    close(fd_);
    throw Error(ExitCode::kUsage, terminal_named() +
                                      " cannot move the cursor (terminfo has no cr, el, cuu1, "
                                      "cud1 or cuf); for scripts use nextword complete");
  }
  keys_ = known_keys();
  g_open = true;
}

Terminal::~Terminal() { restore(); }

void Terminal::start() {
  // What restore() writes, ready for the signal handlers too.
  const std::string undo = cud1_ + cr_ + el_ + padded(capability("rmkx"));
  g_restore.fd = fd_;
  g_restore.saved = saved_;
  g_restore.size = std::min(undo.size(), g_restore.bytes.size());
  std::copy_n(undo.data(), g_restore.size, g_restore.bytes.data());
  install_handlers();
  started_ = true;

  // Raw: bytes as they come, no echo, no signals from the keyboard (Ctrl-C
  // is a key here), no flow control, CR left alone. Output processing stays
  // on ("\n" still starts a row).
  termios raw = saved_;
  raw.c_iflag &= ~static_cast<tcflag_t>(BRKINT | ICRNL | INLCR | IGNCR | ISTRIP | IXON);
  raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | ISIG | IEXTEN);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  tcsetattr(fd_, TCSADRAIN, &raw);

  // Keypad transmit on; then make room for the row below (scrolling when
  // the cursor is on the last row) and go back up to the row to type on.
  const char* ind = capability("ind");
  write_all(padded(capability("smkx")) + cr_ + (ind != nullptr ? padded(ind) : cud1_) + cuu1_);
}

void Terminal::restore() {
  if (closed_) return;
  closed_ = true;
  if (started_) put_back();
  del_curterm(cur_term);
  close(fd_);
  g_open = false;
}

void Terminal::put_back() {
  // The exit signals wait until the terminal is back as it was: one that
  // comes meanwhile then acts as it would have without us.
  sigset_t block, before;
  sigemptyset(&block);
  for (const int s : kExitSignals) sigaddset(&block, s);
  pthread_sigmask(SIG_BLOCK, &block, &before);
  try {
    write_all(std::string(g_restore.bytes.data(), g_restore.size));
  } catch (const Error&) {
    // The terminal is gone: nothing left to clear.
  }
  tcsetattr(fd_, TCSADRAIN, &saved_);
  uninstall_handlers();
  g_restore.fd = -1;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

Key Terminal::read_key() {
  Key key;
  for (;;) {
    if (pending_.empty()) {
      // (A resize between this test and poll() is seen at the next key.)
      if (g_resized) {
        g_resized = 0;
        return make_key(KeyKind::kResize);
      }
      fill(-1);
      continue;
    }
    if (take_key(/*wait=*/true, key)) return key;
    if (fill(kSequenceWaitMs) == Fill::kTimeout) {
      take_key(/*wait=*/false, key);
      return key;
    }
  }
}

Terminal::Fill Terminal::fill(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  const int ready = poll(&p, 1, timeout_ms);
  if (ready == 0) return Fill::kTimeout;
  char buffer[256];
  const ssize_t n = ready < 0 ? -1 : read(fd_, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return Fill::kSignal;
  if (n < 0) throw Error(ExitCode::kIo, std::string("/dev/tty: cannot read: ") + strerror(errno));
  if (n == 0) throw Error(ExitCode::kIo, "/dev/tty: the terminal is gone");
  pending_.append(buffer, static_cast<size_t>(n));
  return Fill::kRead;
}

bool Terminal::take_key(bool wait, Key& key) {
  const std::string_view in = pending_;
  bool longer = false;  // in is the start of a key's string
  for (const auto& [bytes, known] : keys_) {
    if (in.starts_with(bytes)) {
      key = consume(bytes.size(), known);
      return true;
    }
    longer = longer || std::string_view(bytes).starts_with(in);
  }
  if (longer && wait) return false;
  const auto lead = static_cast<unsigned char>(in[0]);
  if (lead == kEscape) return take_escape(wait, key);
  if (lead < 0x20 || lead == 0x7F) {
    key = consume(1, lead == 0x7F || lead == 0x08 ? make_key(KeyKind::kBackspace)
                                                  : make_key(KeyKind::kControl, lead));
    return true;
  }
  const size_t length = utf8_sequence_length(in.data(), in.data() + in.size());
  if (length == 0 && wait && in.size() < expected_length(lead)) return false;
  key = length > 0 ? consume(length, make_key(KeyKind::kText, 0, in.substr(0, length)))
                   : consume(1, make_key(KeyKind::kOther));  // not UTF-8: dropped
  return true;
}

// Escape and what follows it: Escape alone, Alt-digit (the terminal sends
// Escape then the digit), or a key terminfo does not name (a CSI or SS3
// string, skipped whole).
bool Terminal::take_escape(bool wait, Key& key) {
  const std::string_view in = pending_;
  if (in.size() == 1) {
    if (wait) return false;
    key = consume(1, make_key(KeyKind::kEscape));
    return true;
  }
  const char next = in[1];
  if (next >= '1' && next <= '9') {
    key = consume(2, make_key(KeyKind::kPick, next - '0'));
    return true;
  }
  if (next == '[' || next == 'O') {
    size_t end = 2;  // CSI: parameter and intermediate bytes, then one final byte
    while (next == '[' && end < in.size() && in[end] >= 0x20 && in[end] <= 0x3F) ++end;
    if (end >= in.size() && wait) return false;
    key = consume(std::min(end + 1, in.size()), make_key(KeyKind::kOther));
    return true;
  }
  // Escape twice: the first is Escape alone; Alt with any other key: unused.
  key = next == kEscape ? consume(1, make_key(KeyKind::kEscape))
                        : consume(2, make_key(KeyKind::kOther));
  return true;
}

Key Terminal::consume(size_t bytes, Key key) {
  pending_.erase(0, bytes);
  return key;
}

int Terminal::width() const {
  winsize size{};
  if (ioctl(fd_, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  const int from_terminfo = tigetnum("cols");
  return from_terminfo > 0 ? from_terminfo : 80;
}

void Terminal::draw(std::string_view input, int cursor_column, std::string_view below) {
  std::string out = cr_;
  out += input;
  out += el_;
  out += cud1_;
  out += cr_;
  out += below;
  out += el_;
  out += cuu1_;
  out += cr_;
  out += move_right(cursor_column);
  write_all(out);
}

std::string Terminal::move_right(int count) const {
  if (count <= 0) return {};
  if (!hpa_.empty()) return padded(tiparm(hpa_.c_str(), count));
  if (!cuf_.empty()) return padded(tiparm(cuf_.c_str(), count));
  std::string out;
  for (int i = 0; i < count; ++i) out += cuf1_;
  return out;
}

void Terminal::write_all(const std::string& bytes) const {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(ExitCode::kIo, std::string("/dev/tty: cannot write: ") + strerror(errno));
    done += static_cast<size_t>(n);
  }
}

int display_width(std::string_view text) {
  int width = 0;
  for (size_t i = 0, length = 0; i < text.size(); i += length) {
    width += code_point_width(code_point_at(text, i, &length));
  }
  return width;
}

size_t fitting_bytes(std::string_view text, int room) {
  int width = 0;
  size_t i = 0;
  for (size_t length = 0; i < text.size(); i += length) {
    width += code_point_width(code_point_at(text, i, &length));
    if (width > room) break;
  }
  return i;
}

}  // namespace nextword::editor
