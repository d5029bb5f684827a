#!/usr/bin/env python3
"""nextword's place in the shell, as installed: `cmake --install` of the
build into a temporary prefix, then

  - the man page PREFIX/share/man/man1/nextword.1.gz renders (man -l, else
    groff or mandoc) with a subsection for every command `nextword --help`
    lists, each with its usage line and every option its --help shows;
  - bash completion, in a real bash (--norc --noprofile) inside a detached
    tmux session, with bash-completion's bash_completion and the installed
    PREFIX/share/bash-completion/completions/nextword sourced and the
    installed binary first on PATH: keys go in with send-keys, the screen
    comes back with capture-pane, each step polls until the screen shows
    what it should (never a fixed sleep as the check). Commands after
    `nextword`, options after `-`, the choices of -f, directories only after
    -m, file names after --history, ollama's NAME:TAG after -m ollama:.

What the checks expect (the commands, the choices of --format) is read from
the installed binary's --help, not written here.

    python3 tests/cli/shell_test.py NEXTWORD BUILD_DIR [--man=ON|OFF] [--cmake=CMAKE]

--man=OFF: the build had no help2man, so there is no page to check.
Exits 77 (skipped) when tmux or bash-completion is missing, 1 when a check
fails.
"""
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "cmake"))
from man_commands import commands as commands_of  # noqa: E402  (the page's own reading)
from tmux_session import Failure, Tmux, run_test_methods  # noqa: E402  (tests/tmux_session.py)

TIMEOUT = 5  # seconds for the screen to show what is expected
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"


def options_of(help_text):
    """Every option name (-k, --top-k, ...) a command's --help shows."""
    names = []
    for line in help_text.splitlines():
        m = re.match(r"^  (-\S+)", line)
        if m:
            names += [n for n in re.sub(r"\{.*\}$", "", m.group(1)).split(",") if n]
    return names


class Terminal(Tmux):
    """One bash in one tmux session, 120x40 (its own tmux server and socket)."""

    def __init__(self, workdir, env):
        super().__init__(workdir, env, TIMEOUT)

    def start(self):
        self.new_session("shell", 120, 40, "bash --norc --noprofile")

    def clear(self):
        """An empty screen with a fresh prompt (what was typed is dropped)."""
        self.keys("C-u")
        self.command("clear")
        self.wait(lambda s: [line for line in s if line.strip()] == ["$"], "a cleared screen")


def prompt_lines(lines):
    return [i for i, line in enumerate(lines) if line.startswith("$ ") or line == "$"]


class Checks:
    def __init__(self, term, nextword):
        self.term = term
        self.nextword = nextword
        self.help = subprocess.run([nextword, "--help"], capture_output=True, text=True,
                                   check=True).stdout
        self.commands = commands_of(self.help)
        if not self.commands:
            raise Failure(f"no commands in {nextword} --help:\n{self.help}")

    def completes_to(self, typed, expected):
        """Types `typed`, presses Tab, and waits until the line reads
        `expected` with the cursor at its end (a trailing space counts: the
        screen drops it, the cursor shows it)."""
        t = self.term
        t.clear()
        t.type(typed)
        t.keys("Tab")
        want = "$ " + expected

        def done(lines):
            rows = [lines[i] for i in prompt_lines(lines)]
            return (rows and rows[-1] == want.rstrip() and t.cursor_x() == len(want)) or None

        try:
            t.wait(done, f"the line {want!r}")
        except Failure as e:
            raise Failure(f"{typed!r} + Tab: {e} (cursor at column {t.cursor_x()})") from None

    def listed(self, typed):
        """Types `typed`, presses Tab twice, and returns the words bash lists
        between the typed line and the prompt it draws again below them."""
        t = self.term
        t.clear()
        t.type(typed)
        t.keys("Tab", "Tab")
        line = "$ " + typed.rstrip()

        def listing(lines):
            rows = [i for i in prompt_lines(lines) if lines[i].rstrip() == line]
            if len(rows) < 2:
                return None
            return " ".join(lines[rows[0] + 1:rows[1]]).split() or None

        try:
            return t.wait(listing, f"the list of completions of {typed!r}")
        except Failure as e:
            raise Failure(f"{typed!r} + Tab Tab: {e}") from None

    def test_loaded(self):
        self.term.clear()
        self.term.command("complete -p nextword")
        self.term.wait(lambda s: any(line.strip() == "complete -F _nextword nextword"
                                     for line in s), "complete -p nextword's answer")

    def test_command_name(self):
        self.completes_to("nextword pre", "nextword predict ")

    def test_every_command_listed(self):
        got = self.listed("nextword ")
        if sorted(got) != sorted(self.commands):
            raise Failure(f"listed {sorted(got)}, `nextword --help` lists "
                          f"{sorted(self.commands)}")

    def test_option_name(self):
        self.completes_to("nextword predict --for", "nextword predict --format ")

    def test_format_values(self):
        help_text = subprocess.run([self.nextword, "predict", "--help"], capture_output=True,
                                   text=True, check=True).stdout
        m = re.search(r"^  -f,--format TEXT:\{([^}]*)\}", help_text, re.M)
        if not m:
            raise Failure(f"no -f,--format TEXT:{{...}} in predict --help:\n{help_text}")
        choices = m.group(1).split(",")
        if not {"text", "json"} <= set(choices):
            raise Failure(f"predict -f's choices are {choices}")
        got = self.listed("nextword predict -f ")
        if sorted(got) != sorted(choices):
            raise Failure(f"listed {sorted(got)} after -f, predict --help shows {choices}")
        self.completes_to("nextword predict --format=js", "nextword predict --format=json ")

    def test_model_directory(self):
        # models/tin: a directory (tiny) and a file (tinker.txt) start so;
        # -m takes a directory, so only tiny/ is offered and it completes.
        self.completes_to("nextword predict -m models/tin", "nextword predict -m models/tiny/")
        got = self.listed("nextword predict -m models/")
        if sorted(got) != ["other/", "tiny/"]:
            raise Failure(f"-m models/ listed {got}, want the directories other/ and tiny/")

    def test_model_names(self):
        # -m also takes a model's name: the installed english and stories
        # (`nextword models --names`), beside the directories here.
        self.completes_to("nextword predict -m sto", "nextword predict -m stories ")
        got = self.listed("nextword predict -m ")
        want = ["english", "models/", "ollama:llama3.2:1b", "ollama:llama3.2:latest", "prefix/",
                "stories"]
        if sorted(got) != want:
            raise Failure(f"-m listed {got}, want {want}: the models and the directories")

    def test_ollama_names(self):
        # ollama's models ($OLLAMA_MODELS here) are ollama:NAME:TAG, which
        # bash breaks into words at each ':'.
        self.completes_to("nextword predict -m ollama:ll", "nextword predict -m ollama:llama3.2:")
        got = self.listed("nextword predict -m ollama:llama3.2:")
        if sorted(got) != ["1b", "latest"]:
            raise Failure(f"-m ollama:llama3.2: listed {got}, want its tags 1b and latest")
        self.completes_to("nextword predict -m ollama:llama3.2:la",
                          "nextword predict -m ollama:llama3.2:latest ")
        self.completes_to("nextword generate --model=ollama:llama3.2:1",
                          "nextword generate --model=ollama:llama3.2:1b ")

    def test_history_file(self):
        self.completes_to("nextword complete --history models/tink",
                          "nextword complete --history models/tinker.txt ")


def check_man_page(prefix, nextword):
    """The installed page renders, with every command and its options."""
    page = os.path.join(prefix, "share", "man", "man1", "nextword.1.gz")
    if not os.path.isfile(page):
        raise Failure(f"no man page at {page}")
    with gzip.open(page, "rt", encoding="utf-8") as f:
        source = f.read()
    env = dict(os.environ, LANG="C", LC_ALL="C", MANWIDTH="200", MANPAGER="cat", PAGER="cat")
    if shutil.which("man"):
        render = ["man", "-l", page]
    elif shutil.which("groff"):
        render = ["groff", "-man", "-Tascii", "-P-cbou", "-rLL=200n"]
    elif shutil.which("mandoc"):
        render = ["mandoc", "-Tascii", "-Owidth=200"]
    else:
        raise Failure("neither man, groff nor mandoc is installed to render the page")
    r = subprocess.run(render, input=None if render[0] == "man" else source, capture_output=True,
                       text=True, env=env, check=False)
    if r.returncode != 0 or r.stderr.strip():
        raise Failure(f"{' '.join(render)} exited {r.returncode}: {r.stderr.strip()}")
    text = re.sub(r".\x08", "", r.stdout)  # overstrike bold, if a pager left it
    if not re.search(r"^NAME\n\s+nextword - ", text, re.M):
        raise Failure(f"no NAME section in the rendered page:\n{text[:2000]}")
    commands = commands_of(subprocess.run([nextword, "--help"], capture_output=True, text=True,
                                          check=True).stdout)
    # The subsections, in the order --help lists the commands.
    starts = []
    for command in commands:
        m = re.search(rf"^ {{1,4}}nextword {re.escape(command)}\n", text, re.M)
        if not m:
            raise Failure(f"no subsection 'nextword {command}' in the rendered page")
        starts.append(m.start())
    if starts != sorted(starts):
        raise Failure("the commands' subsections are not in --help's order")
    for i, command in enumerate(commands):
        body = text[starts[i]:starts[i + 1] if i + 1 < len(starts) else len(text)]
        if f"Usage: nextword {command}" not in body:
            raise Failure(f"no 'Usage: nextword {command}' in its subsection")
        help_text = subprocess.run([nextword, command, "--help"], capture_output=True, text=True,
                                   check=True).stdout
        missing = [o for o in options_of(help_text) if not re.search(
            rf"(^|[\s,]){re.escape(o)}([\s,{{]|$)", body, re.M)]
        if missing:
            raise Failure(f"nextword {command}'s options {missing} are not in its subsection")
    return len(commands)


def ollama_store(root, tags):
    """ollama's store in `root` with llama3.2 as each of `tags`: a manifest
    and its model layer's blob (a GGUF file's first bytes: `models --names`
    reads the manifest, no further)."""
    blob = b"GGUF" + bytes(60)
    digest = hashlib.sha256(blob).hexdigest()
    os.makedirs(os.path.join(root, "blobs"))
    with open(os.path.join(root, "blobs", "sha256-" + digest), "wb") as f:
        f.write(blob)
    manifests = os.path.join(root, "manifests", "registry.ollama.ai", "library", "llama3.2")
    os.makedirs(manifests)
    for tag in tags:
        with open(os.path.join(manifests, tag), "w", encoding="utf-8") as f:
            json.dump({"schemaVersion": 2, "layers": [{
                "mediaType": "application/vnd.ollama.image.model",
                "digest": "sha256:" + digest, "size": len(blob)}]}, f)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    if len(args) != 2:
        print(__doc__.strip().split("\n\n")[-2].strip(), file=sys.stderr)
        return 2
    for tool, package in (("tmux", "tmux"), ("bash", "bash")):
        if shutil.which(tool) is None:
            print(f"shell_test: skipped: {tool} is not installed (apt-get install {package})")
            return 77
    if not os.path.isfile(BASH_COMPLETION):
        print(f"shell_test: skipped: no {BASH_COMPLETION} (apt-get install bash-completion)")
        return 77
    build = os.path.abspath(args[1])
    cmake = flags.get("cmake", "cmake")
    with_man = flags.get("man", "ON").upper() in ("ON", "1", "TRUE", "YES")

    workdir = tempfile.mkdtemp(prefix="nextword-shell-")
    ollama = tempfile.mkdtemp(prefix="nextword-shell-ollama-")
    prefix = os.path.join(workdir, "prefix")
    passed = failed = 0
    started = time.monotonic()
    term = None
    try:
        r = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True,
                           text=True, check=False)
        if r.returncode != 0:
            output = (r.stdout + r.stderr).strip().splitlines()
            print(f"FAIL cmake --install {build}:\n" + "\n".join(output[-8:]))
            return 1
        nextword = os.path.join(prefix, "bin", "nextword")
        completion = os.path.join(prefix, "share", "bash-completion", "completions", "nextword")
        for path in (nextword, completion):
            if not os.path.isfile(path):
                print(f"FAIL cmake --install put no {path}")
                return 1

        if with_man:
            try:
                n = check_man_page(prefix, nextword)
                passed += 1
                print(f"ok   man_page ({n} commands)")
            except Failure as e:
                failed += 1
                print(f"FAIL man_page: {e}")
        else:
            print("skip man_page: the build found no help2man")

        # A folder to complete names in: models/tiny/ and models/other/ are
        # directories, models/tinker.txt a file.
        for d in ("models/tiny", "models/other"):
            os.makedirs(os.path.join(workdir, d))
        with open(os.path.join(workdir, "models", "tinker.txt"), "w") as f:
            f.write("once upon a time\n")
        # ollama's store outside the working directory (a folder there would
        # be listed after -m).
        ollama_store(os.path.join(ollama, "models"), ["1b", "latest"])
        env = {"PATH": os.path.join(prefix, "bin") + ":/usr/bin:/bin", "HOME": workdir,
               "LANG": "C.UTF-8", "TERM": "screen",
               "OLLAMA_MODELS": os.path.join(ollama, "models")}
        with open(os.path.join(workdir, "setup.sh"), "w") as f:
            f.write(f"PS1='$ '\nunset HISTFILE\nbind 'set bell-style none'\n"
                    f"source {BASH_COMPLETION}\nsource '{completion}'\n")
        term = Terminal(workdir, env)
        term.start()
        term.wait(lambda s: any(line.strip() for line in s), "bash's first prompt")
        term.command("source setup.sh")
        checks = Checks(term, nextword)
        ran = run_test_methods(checks)
        passed, failed = passed + ran[0], failed + ran[1]
    finally:
        if term is not None:
            term.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(ollama, ignore_errors=True)
    print(f"shell_test: {passed} passed, {failed} failed ({time.monotonic() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
