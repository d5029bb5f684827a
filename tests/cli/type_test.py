#!/usr/bin/env python3
"""nextword type at a terminal, driven as a person would drive it: in a
detached tmux session (100x20, TERM=screen) running bash, keys go in with
send-keys, the screen comes back with capture-pane, and each step polls
until the screen shows what it should (never a fixed long sleep).

    python3 tests/cli/type_test.py build/nextword data

Exits 77 (skipped) when tmux is missing, 1 when a check fails.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tmux_session import Failure, Tmux, run_test_methods  # noqa: E402  (tests/tmux_session.py)

TIMEOUT = 5  # seconds for the screen (or a file) to show what is expected

# The shell in the pane: a plain prompt, and the commands the checks run.
# t: nextword type, stdout to `out`, stderr to `err`, its status to `st`;
# cap: the same through $(...), the line and the status to `cap`.
BASHRC = """PS1='$ '
unset HISTFILE
t() { "$NW" type -m "$MODEL" "$@" > out 2> err; echo "status=$?" > st; }
cap() { msg=$("$NW" type -m "$MODEL" "$@"); s=$?; printf '%s|%s\\n' "$msg" "$s" > cap; }
"""


class Terminal(Tmux):
    """One tmux server (its own socket, in the test's folder); each check
    starts a session of its own, 100x20, running bash with BASHRC."""

    def __init__(self, workdir, nextword, model):
        super().__init__(workdir, {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                   "HOME": workdir, "LANG": "C.UTF-8", "NW": nextword,
                                   "MODEL": model}, TIMEOUT)
        with open(os.path.join(workdir, "bashrc"), "w") as f:
            f.write(BASHRC)
        self.sessions = 0

    def start(self):
        """A new session (the last one goes only then: the server would end
        with its last session, and starting it again races its exit)."""
        for name in ("out", "err", "st", "cap", "stty.txt"):
            if os.path.exists(self.path(name)):
                os.remove(self.path(name))
        last, self.sessions = self.session, self.sessions + 1
        self.new_session(f"s{self.sessions}", 100, 20, "bash --noprofile --rcfile bashrc")
        if last is not None:
            self.tmux("kill-session", "-t", last)
        self.wait(lambda s: s[0].startswith("$"), "the shell's prompt")


def rows(lines):
    """(input, suggestions, prompt) of nextword type on the screen, or None:
    the input row starts with the prompt "> " ("< " when the line's start is
    scrolled out of view), the suggestions are on the row below."""
    for i in range(len(lines) - 1, -1, -1):
        if re.match(r"^[<>]( |$)", lines[i]):
            return lines[i][2:], (lines[i + 1] if i + 1 < len(lines) else ""), lines[i][0]
    return None


def children_named(parent, name):
    """The pids of parent's children called `name` (from /proc, as pgrep -P)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid ...: comm may hold spaces and parentheses.
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == parent and comm == name:
            found.append(int(entry))
    return found


class Checks:
    def __init__(self, term, nextword, model):
        self.term, self.nextword, self.model = term, nextword, model

    def complete(self, text):
        """nextword complete's suggestions for `text` (the same model, no history)."""
        r = subprocess.run([self.nextword, "complete", "-m", self.model, "-f", "json"],
                           input=text + "\n", capture_output=True, text=True, check=True)
        return [s["word"] for s in json.loads(r.stdout)["suggestions"]]

    def row_for(self, text, width=100):
        """The suggestion row nextword type should show for `text`."""
        row = ""
        for i, word in enumerate(self.complete(text)):
            entry = ("  " if i else "") + f"{i + 1} {word}"
            if len(row) + len(entry) > width - 1:
                break
            row += entry
        return row

    def start_type(self, args="", shell=None):
        """A new session running `t ARGS` (or the command line `shell`),
        once nextword type shows its input row."""
        self.term.start()
        self.term.command(shell or f"t {args}".strip())
        self.term.wait(rows, "nextword type's input row")

    def wait_rows(self, text, suggestions=None, cursor=None, prompt=">"):
        """Waits for the input row to show `text` after `prompt` (and the
        suggestion row `suggestions`, the cursor at column `cursor`, when
        given)."""
        def ready(lines):
            r = rows(lines)
            if r is None or r[0] != text.rstrip() or r[2] != prompt:
                return False
            if suggestions is not None and r[1] != suggestions:
                return False
            return cursor is None or self.term.cursor_x() == cursor
        what = f"input {text!r}"
        if suggestions is not None:
            what += f", suggestions {suggestions!r}"
        if cursor is not None:
            what += f", the cursor at column {cursor}"
        self.term.wait(ready, what)

    def wait_status(self, expected):
        status = self.term.wait_file("st", "the exit status")
        if status != f"status={expected}\n":
            raise Failure(f"exit status {status.strip()!r}, expected {expected}; stderr: "
                          f"{self.term.read('err')!r}")

    def check_restored(self):
        """After nextword type: no suggestion row left, keypad transmit off,
        canonical mode and echo back, and the shell takes a command."""
        numbered = re.compile(r"\b\d \S+  \d \S+")  # "2 tiny  3 tired", even half overwritten
        self.term.wait(lambda s: not any(numbered.search(line) for line in s),
                       "the suggestion row cleared")
        flags = self.term.show("keypad_cursor_flag", "keypad_flag").split()
        if flags != ["0", "0"]:
            raise Failure(f"keypad transmit still on (tmux flags {flags})")
        self.term.command("stty -a > stty.txt")
        stty = self.term.wait_file("stty.txt", "stty -a")
        for mode in ("icanon", "echo", "isig", "icrnl"):
            if not re.search(rf"(?<![-\w]){mode}\b", stty):
                raise Failure(f"stty -a after exit has no '{mode}':\n{stty}")
        self.term.command("echo o''k")
        self.term.wait(lambda s: "ok" in s, "the output of echo ok")

    # (1) (2) (3) (5): suggestions, Tab, Alt-2 and F2 and Escape 3, Enter.
    def test_suggest_accept_pick(self):
        self.start_type()
        self.term.type("once upon a ti")
        first = self.row_for("once upon a ti")
        if not first.startswith("1 time  2 "):
            raise Failure(f"complete's own suggestions for 'once upon a ti': {first!r}")
        self.wait_rows("once upon a ti", first, cursor=2 + 14)
        self.term.keys("Tab")
        text = "once upon a time "
        after_tab = self.row_for(text)
        if after_tab == first:
            raise Failure("the suggestions did not change after Tab")
        self.wait_rows(text, after_tab, cursor=2 + len(text))
        self.term.keys("M-2")
        text += self.complete(text)[1] + " "
        self.wait_rows(text, self.row_for(text), cursor=2 + len(text))
        self.term.type("l")
        self.wait_rows(text + "l", self.row_for(text + "l"))
        self.term.keys("F2")
        text += self.complete(text + "l")[1] + " "
        self.wait_rows(text, self.row_for(text), cursor=2 + len(text))
        self.term.keys("Escape")  # then the digit on its own, later: still a pick
        time.sleep(0.15)
        self.term.keys("3")
        text += self.complete(text)[2] + " "
        self.wait_rows(text, self.row_for(text), cursor=2 + len(text))
        self.term.keys("Enter")
        self.wait_status(0)
        if self.term.read("out") != text + "\n":
            raise Failure(f"stdout {self.term.read('out')!r}, expected {text!r} and a newline")
        self.check_restored()

    # (4) BSpace, C-w, C-u, C-d, Left/Right/Home/End and Ctrl-A/E, UTF-8.
    def test_editing(self):
        self.start_type()
        self.term.type("hello wrld")
        self.term.keys("Left", "Left", "Left")
        self.term.type("o")
        self.wait_rows("hello world", cursor=2 + 8)
        self.term.keys("End", "BSpace")
        self.wait_rows("hello worl", cursor=2 + 10)
        self.term.keys("C-w")
        self.wait_rows("hello ", cursor=2 + 6)
        self.term.type("big café")
        self.wait_rows("hello big café", cursor=2 + 14)
        self.term.keys("BSpace")  # é is two bytes: one character goes
        self.wait_rows("hello big caf", cursor=2 + 13)
        self.term.keys("Home")
        self.term.type("oh ")
        self.wait_rows("oh hello big caf", cursor=2 + 3)
        self.term.keys("C-e", "C-a", "Right", "Right", "C-u")
        self.wait_rows(" hello big caf", cursor=2)
        self.term.keys("C-d")  # on a line with text: deletes under the cursor
        self.wait_rows("hello big caf", cursor=2)
        self.term.keys("End", "Left")
        self.term.type("é")
        self.wait_rows("hello big caéf", cursor=2 + 13)
        self.term.keys("C-f", "BSpace", "BSpace", "C-b", "C-f")
        self.term.type("fé")
        self.wait_rows("hello big café", cursor=2 + 14)
        self.term.keys("Home", "DC")  # Delete
        self.wait_rows("ello big café", cursor=2)
        self.term.type("h")
        self.wait_rows("hello big café", cursor=3)
        self.term.keys("Enter")
        self.wait_status(0)
        if self.term.read("out") != "hello big café\n":
            raise Failure(f"stdout {self.term.read('out')!r}")
        self.check_restored()

    # (5) Enter through $(...): exactly the line, status 0.
    def test_command_substitution(self):
        self.start_type(shell="cap")
        self.term.type("the end")
        self.wait_rows("the end")
        self.term.keys("Enter")
        cap = self.term.wait_file("cap", "the captured line")
        if cap != "the end|0\n":
            raise Failure(f"$(nextword type) gave {cap!r}, expected 'the end|0'")
        self.check_restored()

    # (6) Ctrl-C: nothing on stdout, 130; Ctrl-D on an empty line: nothing, 0.
    def test_ctrl_c_and_ctrl_d(self):
        self.start_type()
        self.term.type("abc")
        self.wait_rows("abc")
        self.term.keys("C-c")
        self.wait_status(130)
        if self.term.read("out") != "":
            raise Failure(f"Ctrl-C printed {self.term.read('out')!r}")
        self.check_restored()
        self.start_type()
        self.term.keys("C-d")
        self.wait_status(0)
        if self.term.read("out") != "":
            raise Failure(f"Ctrl-D printed {self.term.read('out')!r}")
        self.check_restored()

    # (7) --history FILE: the line appended; learned by the next session.
    def test_history(self):
        history = self.term.path("history.txt")
        with open(history, "w") as f:
            f.write("an earlier line\n")
        self.start_type("--history history.txt")
        self.term.type("zorblax was here")
        self.wait_rows("zorblax was here")
        self.term.keys("Enter")
        self.wait_status(0)
        if self.term.read("history.txt") != "an earlier line\nzorblax was here\n":
            raise Failure(f"history file holds {self.term.read('history.txt')!r}")
        if any(w.lower().startswith("zorb") for w in self.complete("the zo")):
            raise Failure("the model alone suggests zorblax: pick another made-up word")
        with open(history, "w") as f:
            f.write("the zorblax ran home.\n" * 5)
        self.start_type("--learn --history history.txt")
        self.term.type("the zo")
        self.term.wait(lambda s: rows(s) and re.search(r"\b[1-6] zorblax\b", rows(s)[1]),
                       "zorblax offered from the history")
        self.term.keys("C-c")
        self.wait_status(130)
        # A history the disk cannot take the line into (a file size limit of
        # 1 KiB, as a full disk): exit 5, and no half line left at its end.
        before = "an earlier line\n" * 63  # 1,008 bytes: 16 more fit, not 24
        with open(history, "w") as f:
            f.write(before)
        self.start_type(shell="(ulimit -f 1; trap '' XFSZ; t --history history.txt)")
        self.term.type("zorblax was here again")
        self.wait_rows("zorblax was here again")
        self.term.keys("Enter")
        self.wait_status(5)
        err = self.term.read("err")
        if err != "nextword: history.txt: cannot write: File too large\n":
            raise Failure(f"history past the size limit: stderr {err!r}")
        if self.term.read("history.txt") != before:
            raise Failure("history past the size limit: the file changed")
        self.start_type("--history nowhere/history.txt")
        self.term.type("x")
        self.wait_rows("x")
        self.term.keys("Enter")
        self.wait_status(5)
        err = self.term.read("err")
        if "nowhere/history.txt: cannot write" not in err or err.count("\n") != 1:
            raise Failure(f"unwritable history: stderr {err!r}")
        self.check_restored()

    # (8) No controlling terminal: a usage error that points to complete.
    def test_no_terminal(self):
        r = subprocess.run([self.nextword, "type", "-m", self.model], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, start_new_session=True, check=False)
        if r.returncode != 2 or r.stdout or "nextword complete" not in r.stderr:
            raise Failure(f"without a terminal: exit {r.returncode}, stdout {r.stdout!r}, "
                          f"stderr {r.stderr!r}")

    # (9) SIGTERM: the terminal restored, exit 128 + 15.
    def test_sigterm(self):
        self.start_type()
        self.term.type("once upon a ti")
        self.wait_rows("once upon a ti", self.row_for("once upon a ti"))
        shell = int(self.term.show("pane_pid"))
        children = children_named(shell, "nextword")
        if len(children) != 1:
            raise Failure(f"nextword's pid: the shell {shell} has children {children} named so")
        os.kill(children[0], signal.SIGTERM)
        self.wait_status(128 + signal.SIGTERM)
        self.check_restored()

    # A window narrower than the rows: both cut, the line scrolled sideways;
    # a wider window (SIGWINCH) redraws them whole.
    def test_narrow_window(self):
        self.term.start()
        self.term.tmux("resize-window", "-t", self.term.session, "-x", "24")
        self.term.command("t")
        self.term.wait(rows, "nextword type's input row")
        text = "once upon a time there was a little"
        self.term.type(text)
        # 24 columns: the last stays empty, the prompt takes 2, the cursor 1.
        self.wait_rows(text[-20:], self.row_for(text, width=24), cursor=22, prompt="<")
        self.term.keys("Home")  # suggestions for the text before the cursor: none
        self.wait_rows(text[:21], self.row_for("", width=24), cursor=2)
        self.term.tmux("resize-window", "-t", self.term.session, "-x", "100")
        self.wait_rows(text, self.row_for(""), cursor=2)
        self.term.keys("Enter")
        self.wait_status(0)
        if self.term.read("out") != text + "\n":
            raise Failure(f"stdout {self.term.read('out')!r}")

    def test_help(self):
        r = subprocess.run([self.nextword, "type", "--help"], capture_output=True, text=True,
                           check=False)
        for word in ("Tab", "Alt-N", "Ctrl-C", "Ctrl-D", "/dev/tty", "--history"):
            if r.returncode != 0 or word not in r.stdout:
                raise Failure(f"type --help (exit {r.returncode}) does not mention {word}")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    if shutil.which("tmux") is None:
        print("type_test: skipped: tmux is not installed (apt-get install tmux)")
        return 77
    nextword = os.path.abspath(sys.argv[1])
    model = os.path.join(os.path.abspath(sys.argv[2]), "stories")
    workdir = tempfile.mkdtemp(prefix="nextword-type-")
    term = Terminal(workdir, nextword, model)
    checks = Checks(term, nextword, model)
    started = time.monotonic()
    try:
        passed, failed = run_test_methods(checks)
    finally:
        term.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"type_test: {passed} passed, {failed} failed ({time.monotonic() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
