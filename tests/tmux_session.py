"""A terminal driven as a person drives one, for the tests that type into a
program: a detached tmux session on a tmux server of the test's own (its
socket in the test's folder, so it goes with the folder), TERM=screen and
no status line. Keys go in with send-keys, the screen comes back with
capture-pane, and each step polls until the screen (or a file) shows what
it should, against a deadline: never a fixed long sleep.

Used by tests/cli/type_test.py, tests/cli/shell_test.py and
tests/editors/nvim_session_test.py, which put this folder on sys.path.
"""
import os
import subprocess
import time


class Failure(Exception):
    """A check that does not hold; its message is printed as it is."""


class Tmux:
    """One tmux server; `session` is the session keys go to and the screen
    is read from (new_session sets it). `config`: more lines for tmux.conf;
    `timeout`: seconds for the screen or a file to show what is expected."""

    def __init__(self, workdir, env, timeout, config=""):
        self.workdir = workdir
        self.socket = os.path.join(workdir, "tmux.socket")
        self.config = os.path.join(workdir, "tmux.conf")
        with open(self.config, "w") as f:
            f.write("set -g default-terminal screen\nset -g status off\n" + config)
        self.env = env
        self.timeout = timeout
        self.session = None

    def tmux(self, *args):
        r = subprocess.run(["tmux", "-S", self.socket, *args], env=self.env, cwd=self.workdir,
                           capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise Failure(f"tmux {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def new_session(self, name, width, height, command):
        """A detached session `name` of width x height in the test's folder,
        running `command` (a shell command line); it becomes `session`."""
        self.session = name
        self.tmux("-f", self.config, "new-session", "-d", "-x", str(width), "-y", str(height),
                  "-s", name, "-c", self.workdir, command)

    def stop(self):
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], env=self.env,
                       capture_output=True, check=False)

    def path(self, name):
        return os.path.join(self.workdir, name)

    def read(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return f.read()

    def keys(self, *names):
        self.tmux("send-keys", "-t", self.session, *names)

    def type(self, text):
        self.tmux("send-keys", "-t", self.session, "-l", text)

    def command(self, line):
        self.type(line)
        self.keys("Enter")

    def screen(self):
        """The screen's rows, down to the last one that is not empty."""
        return self.tmux("capture-pane", "-p", "-t", self.session).rstrip("\n").split("\n")

    def show(self, *names):
        """tmux's formats #{NAME} of the session, space-separated."""
        return self.tmux("display", "-p", "-t", self.session, " ".join(f"#{{{n}}}" for n in names))

    def cursor_x(self):
        return int(self.show("cursor_x"))

    def shown(self, lines):
        return "\n".join("  |" + line for line in lines).rstrip()

    def wait(self, ready, what):
        """Polls the screen until ready(lines) is true; returns what it returned."""
        deadline = time.monotonic() + self.timeout
        while True:
            lines = self.screen()
            result = ready(lines)
            if result:
                return result
            if time.monotonic() > deadline:
                raise Failure(f"timed out ({self.timeout} s) waiting for {what}; the screen:\n" +
                              self.shown(lines))
            time.sleep(0.02)

    def wait_file(self, name, what, ready=lambda text: text.endswith("\n")):
        """Polls the file `name` in the test's folder until ready(its text)
        (by default: a whole line or more); returns the text."""
        deadline = time.monotonic() + self.timeout
        text = None
        while time.monotonic() < deadline:
            if os.path.exists(self.path(name)):
                text = self.read(name)
                if ready(text):
                    return text
            time.sleep(0.02)
        raise Failure(f"timed out ({self.timeout} s) waiting for {what} in {name} (it holds "
                      f"{text!r}); the screen:\n" + self.shown(self.screen()))


def run_test_methods(checks):
    """Runs the test_* methods of `checks` in the order of their names,
    printing an ok or FAIL line each (a check that breaks fails; the others
    still run); returns (passed, failed)."""
    passed = failed = 0
    for name in sorted(n for n in dir(checks) if n.startswith("test_")):
        try:
            getattr(checks, name)()
            passed += 1
            print(f"ok   {name}")
        except Exception as e:
            failed += 1
            kind = "" if isinstance(e, Failure) else type(e).__name__ + ": "
            print(f"FAIL {name}: {kind}{e}")
    return passed, failed
