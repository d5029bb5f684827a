// nextword type: a line typed with predictive text, like a phone's
// suggestion bar. Below the line being typed, the best words for the word
// before the cursor (or the next word, after a space) are listed numbered:
// "1 time  2 tiny  3 tired ...". Enter prints the line on stdout.
//
// Choices (also in --help):
//   - Suggestions are for the text before the cursor; accepting one replaces
//     the start of the word just before the cursor with it, plus a space.
//   - Tab takes suggestion 1; Alt-N or FN takes suggestion N (1 to 9). A
//     terminal sends Alt-N as Escape then N, so Escape pressed alone and
//     then a digit picks too.
//   - Enter prints the line exactly as typed (a space at its end included),
//     then appends it to --history FILE when there is one and the line is
//     not empty; exit 0. Ctrl-C quits with nothing printed, exit 130.
//     Ctrl-D quits the same way with exit 0 on an empty line (the end of
//     input, as in a shell) and deletes the character under the cursor
//     otherwise (as readline does).
//   - The line is drawn on one row, scrolled sideways when it is too long
//     for it; suggestions that do not fit the row are left out.
//   - Keys are read from /dev/tty and the rows drawn there, so that stdout
//     may be a pipe: msg=$(nextword type). Without a terminal, exit 2.
//   - Ctrl-Z does nothing: the terminal's keyboard signals are off (Ctrl-C
//     is a key), and a suspended editor would leave the shell a raw terminal.
#include <optional>
#include <string>

#include "base/error.h"
#include "base/file_output.h"
#include "base/threading.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "editor/line_editor.h"
#include "editor/terminal.h"

namespace nextword::cli {
namespace {

using editor::End;

constexpr const char* kKeys =
    "Keys:\n"
    "  typing            inserts at the cursor (any UTF-8 text)\n"
    "  Tab               accepts suggestion 1\n"
    "  Alt-N, FN         accept suggestion N, 1 to 9 (Alt-N: also Escape, then N)\n"
    "  Backspace         deletes the character before the cursor\n"
    "  Delete, Ctrl-D    delete the character under the cursor\n"
    "  Ctrl-W            deletes the word before the cursor\n"
    "  Ctrl-U, Ctrl-K    delete to the start of the line, to its end\n"
    "  Left, Right       move by one character (also Ctrl-B, Ctrl-F)\n"
    "  Home, End         move to the start, the end (also Ctrl-A, Ctrl-E)\n"
    "  Enter             prints the line on stdout, exactly as typed, and appends it to\n"
    "                    --history FILE (when not empty); exit 0\n"
    "  Ctrl-C            quits, nothing printed; exit 130\n"
    "  Ctrl-D            on an empty line: quits, nothing printed; exit 0\n"
    "Suggestions are for the text before the cursor: accepting one replaces the start of\n"
    "the word before the cursor with it, and adds a space. The line and the suggestions\n"
    "are drawn on the terminal (/dev/tty), so stdout may be a pipe: msg=$(nextword type).\n"
    "Without a terminal: exit 2 (for scripts, use nextword complete).";

struct TypeCommand {
  ModelOptions model;
  CompletionOptions completion;

  void add_to(CLI::App& c) {
    model.add_to(c);
    completion.add_to(c);
    c.footer(kKeys);
  }

  int run() const {
    set_threading(Threading::kRows, 1);  // one context per forward pass: too small to split
    editor::Terminal terminal;           // first: without a terminal, nothing else is worth doing
    const Model m = model.load();
    const std::optional<LexiconIndex> lexicon = completion.load_lexicon_index(m);
    Completer completer = completion.make_completer(m, lexicon ? &*lexicon : nullptr);
    terminal.start();  // only now: a model or history error above leaves the terminal as it was
    editor::Line line;
    const End end = edit(terminal, completer, line);
    terminal.restore();  // before stdout: it may be the same terminal
    if (end == End::kInterrupted) return kInterrupted;
    if (end == End::kEndOfInput) return 0;
    write_line(line.text);
    if (!completion.history.empty() && !line.text.empty()) {
      append_to_file(completion.history, line.text + "\n");
    }
    return 0;
  }
};

}  // namespace

CLI::App* add_type_command(CLI::App& app, std::function<int()>& run) {
  return add_command<TypeCommand>(
      app, "type",
      "Type a line with predictive text: suggestions below it as you type, Tab or Alt-N to "
      "accept one; Enter prints the line",
      run);
}

}  // namespace nextword::cli
