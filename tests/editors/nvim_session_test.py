#!/usr/bin/env python3
"""`nextword lsp` in a person's Neovim session: Neovim (0.7.2, Debian 12's)
in a detached tmux pane (80x24, TERM=screen), started as

    nvim --clean -u init.lua story.md

where init.lua is docs/editors.md's Neovim set-up (tests/editors/nextword.lua, its
command pointed at the binary under test). Keys go in with send-keys:
`iOnce upon a ti`, Ctrl-X Ctrl-O (the set-up's omnifunc,
v:lua.vim.lsp.omnifunc), and once the popup menu shows `time`, Ctrl-Y,
Escape, `:wq` Enter; story.md must then read `Once upon a time` and a
newline. Every step polls the screen (capture-pane) or the file against a
deadline; no fixed sleep stands in for a check.

Before typing, the test waits until the server is attached: a second
init file (sourced after docs/editors.md's, the only thing the test adds) writes
`attached` to a file once the buffer's omnifunc is the LSP one.

    python3 tests/editors/nvim_session_test.py build/nextword data

Exits 77 (skipped) when nvim or tmux is missing, 1 when a check fails.
"""
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from editors_common import (Failure, arguments, check_doc_shows, configuration,  # noqa: E402
                            run_checks, skip_unless)
from tmux_session import Tmux  # noqa: E402  (tests/tmux_session.py)

TIMEOUT = 10  # seconds for the screen (or a file) to show what is expected

# Sourced after docs/editors.md's set-up: tells the test when the server is attached.
WATCH = r"""
local timer = vim.loop.new_timer()
timer:start(10, 10, vim.schedule_wrap(function()
  if vim.bo.omnifunc == 'v:lua.vim.lsp.omnifunc' and #vim.tbl_keys(vim.lsp.buf_get_clients(0)) == 1 then
    timer:stop()
    local f = io.open('attached', 'w')
    f:write('attached\n')
    f:close()
  end
end))
"""


class Session(Tmux):
    """One tmux server on a socket of the test's own folder, its session
    `nvim` 80x24."""

    def __init__(self, workdir):
        # remain-on-exit: the pane (and its last screen) outlives nvim.
        # (Its pane_dead_status may stay empty in tmux 3.3a: the shell
        # around nvim writes nvim's status to a file instead.)
        super().__init__(workdir, {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                   "HOME": workdir, "LANG": "C.UTF-8",
                                   "XDG_CONFIG_HOME": workdir, "XDG_STATE_HOME": workdir,
                                   "XDG_CACHE_HOME": workdir, "XDG_DATA_HOME": workdir},
                         TIMEOUT, config="set -g remain-on-exit on\nset -sg escape-time 0\n")

    def start(self, command):
        self.new_session("nvim", 80, 24, command)


POPUP_TIME = re.compile(r"^~?\s+time\s")  # "~           time    Text 100.0%"


def popup_shows_time(lines):
    """The popup menu below the text: a row whose first word (after the
    `~` of an empty buffer line) is `time`, Neovim drawing one item a row."""
    return any(POPUP_TIME.match(line) for line in lines)


def accepted(lines):
    """`Once upon a time` on a row of its own, the popup gone (a preview
    window may stay above it)."""
    return "Once upon a time" in (l.rstrip() for l in lines) and not popup_shows_time(lines)


class Checks:
    def __init__(self, nextword, model, workdir):
        self.nextword, self.model, self.workdir = nextword, model, workdir
        self.timings = {}

    def session(self):
        lua_cmd = "{ " + ", ".join(json.dumps(a) for a in (self.nextword, "lsp", "-m", self.model)) + " }"
        with open(os.path.join(self.workdir, "init.lua"), "w", encoding="utf-8") as f:
            f.write(configuration("nextword.lua", "{ 'nextword', 'lsp' }", lua_cmd))
        with open(os.path.join(self.workdir, "watch.lua"), "w", encoding="utf-8") as f:
            f.write(WATCH)
        story = os.path.join(self.workdir, "story.md")
        term = Session(self.workdir)
        try:
            started = time.monotonic()
            term.start("nvim --clean -u init.lua -c 'luafile watch.lua' story.md; "
                       "echo $? > nvim.status")
            term.wait_file("attached", "the server attached to story.md (omnifunc set)",
                           lambda t: t == "attached\n")
            self.timings["attached"] = time.monotonic() - started
            term.type("iOnce upon a ti")
            term.wait(lambda s: s[0].rstrip() == "Once upon a ti" and "-- INSERT --" in s[-1],
                      "'Once upon a ti' typed in insert mode")
            asked = time.monotonic()
            term.keys("C-x", "C-o")
            term.wait(popup_shows_time, "the popup menu offering 'time'")
            self.timings["popup"] = time.monotonic() - asked
            term.keys("C-y")
            term.wait(accepted, "'time' accepted with Ctrl-Y, the popup gone")
            term.keys("Escape")
            term.wait(lambda s: "-- INSERT --" not in s[-1], "normal mode after Escape")
            term.type(":wq")
            term.keys("Enter")
            written = term.wait_file("story.md", "the saved story", lambda t: t != "")
            if written != "Once upon a time\n":
                raise Failure(f"story.md reads {written!r}, expected 'Once upon a time\\n'")
            status = term.wait_file("nvim.status", "nvim's exit status after :wq")
            if status != "0\n":
                raise Failure(f"nvim exited with status {status.strip()} after :wq")
            self.timings["total"] = time.monotonic() - started
        finally:
            term.stop()
        if not os.path.exists(story):
            raise Failure("story.md was not written")
        print(f"     attached {self.timings['attached']:.2f} s after start, popup "
              f"{self.timings['popup'] * 1000:.0f} ms after Ctrl-X Ctrl-O, session "
              f"{self.timings['total']:.2f} s")


def main():
    nextword, model = arguments("usage: nvim_session_test.py BUILD/nextword DATA_DIR")
    skip_unless("nvim", "tmux")
    with tempfile.TemporaryDirectory(prefix="nextword-nvim-session-") as workdir:
        checks = Checks(nextword, model, workdir)
        return run_checks("nvim_session_test", [
            ("iOnce upon a ti, Ctrl-X Ctrl-O, Ctrl-Y, :wq: 'Once upon a time'", checks.session),
            ("docs/editors.md shows tests/editors/nextword.lua", lambda: check_doc_shows("nextword.lua")),
        ])


if __name__ == "__main__":
    sys.exit(main())
