#!/usr/bin/env python3
"""What the end-to-end tests of the nextword binary share: how to run it,
the exit codes, and the paths given on the command line.

    python3 tests/cli/phrase_test.py build/nextword data
    python3 tests/cli/commands_test.py build/nextword data
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

NEXTWORD = DATA = None
# The installed model the tests' worked values were taken from, given as
# $NEXTWORD_MODEL to every run (a caller's own NEXTWORD_MODEL never leaks
# in); None runs the default model, as the README's examples do.
TEST_MODEL = "stories"
USAGE, MODEL, INPUT, IO = 2, 3, 4, 5
INTERRUPTED = 130


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# Models of the caller's own ($NEXTWORD_MODELS, ~/.local/share/nextword/
# models) never take a name from the build's data/ in a test: the search
# path's first two places are pointed at a directory that does not exist;
# and ollama's store too ($OLLAMA_MODELS, else ~/.ollama/models), so that
# `nextword models` lists the build's models alone.
NO_MODELS = {"NEXTWORD_MODELS": "", "XDG_DATA_HOME": "/nonexistent/nextword-tests",
             "OLLAMA_MODELS": "/nonexistent/nextword-tests/ollama"}


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def record_input(args, stdin, env):
    """With $NEXTWORD_RECORD_INPUTS=FILE, appends the command to FILE as a
    JSON line (arguments, standard input, NEXTWORD_* environment), each file
    or folder it names outside the repository copied beside FILE as
    "@files/N/NAME", for tools/record_outputs.py to run it again on another
    build and compare the outputs byte for byte."""
    log = os.environ.get("NEXTWORD_RECORD_INPUTS")
    if not log:
        return
    # Several test processes append to one log: a command's copies are named
    # by its process and its number in that process.
    record_input.count = getattr(record_input, "count", 0) + 1
    n = "%d-%d" % (os.getpid(), record_input.count)
    kept = []
    for a in args:
        a = str(a)
        if os.path.isabs(a) and os.path.exists(a) and not a.startswith(REPO + os.sep):
            copy = os.path.join(log + ".files", n, os.path.basename(a))
            os.makedirs(os.path.dirname(copy), exist_ok=True)
            (shutil.copytree if os.path.isdir(a) else shutil.copyfile)(a, copy)
            a = "@files/%s/%s" % (n, os.path.basename(a))
        kept.append(a)
    entry = {"argv": kept, "stdin": stdin, "cwd": os.getcwd(),
             "env": {k: v for k, v in env.items()
                     if k.startswith("NEXTWORD_") and k != "NEXTWORD_RECORD_INPUTS"}}
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def run(*args, stdin=None, env=None, stdout=subprocess.PIPE, errors="strict"):
    """The binary run with `args`, its output as text; errors="surrogateescape"
    keeps the bytes of an output that is not UTF-8 (a model's byte piece)."""
    merged = dict(os.environ)
    merged.pop("NEXTWORD_MODEL", None)
    merged.update(NO_MODELS)
    if TEST_MODEL:
        merged["NEXTWORD_MODEL"] = TEST_MODEL
    merged.update(env or {})
    record_input(args, stdin, merged)
    return subprocess.run([NEXTWORD, *args], input=stdin, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, errors=errors, env=merged, check=False)


def quick():
    """True when the command line holds --quick, which it then loses: the
    sanitizers' build passes it (tests/CMakeLists.txt), whose binary runs 5
    to 10 times slower, and a test then runs every path it checks on fewer
    repetitions (fewer splits, models or words), its quality bounds being
    the Release build's to check."""
    if "--quick" not in sys.argv:
        return False
    sys.argv.remove("--quick")
    return True


def main(module):
    """Runs the tests of `module` against argv's binary and data folder."""
    global NEXTWORD, DATA
    NEXTWORD, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    # The processes a test starts on its own inherit the model too.
    os.environ.update(NO_MODELS)
    if TEST_MODEL:
        os.environ["NEXTWORD_MODEL"] = TEST_MODEL
    else:
        os.environ.pop("NEXTWORD_MODEL", None)
    module.NEXTWORD, module.DATA = NEXTWORD, DATA
    unittest.main(module=module, argv=sys.argv[:1], verbosity=2)
