"""What the editor tests share: their arguments, the editor configurations
of docs/editors.md (tests/editors/nextword.lua and nextword.vim,
with the command pointed at the binary under test), running a headless
editor's driver, and the checks on the server's answers.

    python3 tests/editors/neovim_test.py build/nextword data
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EDITORS_DOC = os.path.join(HERE, "..", "..", "docs", "editors.md")
SKIP = 77

sys.path.insert(0, os.path.join(HERE, ".."))
from tmux_session import Failure  # noqa: E402,F401  (one Failure for these tests and tmux's)


def arguments(usage):
    """(nextword, model dir) from argv; empty arguments (ctest's "") are
    ignored. Exits 2 with the usage otherwise."""
    args = [a for a in sys.argv[1:] if a != ""]
    if len(args) != 2:
        print(usage, file=sys.stderr)
        sys.exit(2)
    return os.path.abspath(args[0]), os.path.join(os.path.abspath(args[1]), "stories")


def skip_unless(*programs):
    for program in programs:
        if shutil.which(program) is None:
            print(f"skipped: {program} is not installed (apt-get install "
                  f"{ {'nvim': 'neovim'}.get(program, program)})")
            sys.exit(SKIP)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def configuration(name, default_cmd, cmd):
    """tests/editors/NAME, the text docs/editors.md shows, with `default_cmd`
    (the command as the page has it) replaced by `cmd`."""
    text = read(os.path.join(HERE, name))
    if text.count(default_cmd) != 1:
        raise Failure(f"{name} should hold {default_cmd!r} exactly once")
    return text.replace(default_cmd, cmd)


def check_doc_shows(name):
    """docs/editors.md shows tests/editors/NAME verbatim, so the set-up people
    copy is the one tested."""
    text = read(os.path.join(HERE, name))
    if text not in read(EDITORS_DOC):
        raise Failure(f"docs/editors.md does not show tests/editors/{name} as it is: copy the "
                      "file into it again")


def run_driver(editor, argv, workdir, config, timeout_ms, **env):
    """Runs `argv`, the editor headless with its driver, in workdir for at
    most 60 s, the driver reading NW_CONFIG (config), NW_DIR (workdir),
    NW_TIMEOUT_MS and `env` and writing its JSON result to NW_RESULT (a
    file in workdir); HOME is workdir and NEXTWORD_MODEL stories. Returns
    (the finished process, the result, seconds); a Failure when the editor
    does not quit or writes no result."""
    out = os.path.join(workdir, "result.json")
    env = dict(os.environ, NW_CONFIG=config, NW_RESULT=out, NW_DIR=workdir,
               NW_TIMEOUT_MS=str(timeout_ms), HOME=workdir, **env)
    env["NEXTWORD_MODEL"] = "stories"  # the model of the worked values
    started = time.monotonic()
    try:
        r = subprocess.run(argv, env=env, cwd=workdir, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired as e:
        raise Failure(f"{editor} did not quit within 60 s; stdout: {e.stdout!r} stderr: "
                      f"{e.stderr!r}") from e
    seconds = time.monotonic() - started
    if not os.path.exists(out):
        raise Failure(f"{editor} exited {r.returncode} without writing its result; "
                      f"stdout {r.stdout[-2000:]!r} stderr {r.stderr[-2000:]!r}")
    return r, json.loads(read(out)), seconds


def check_sync_and_provider(caps, shown):
    """The server's capabilities `caps`: open/close and incremental sync, a
    completion provider (`shown`: what the message shows when there is none)."""
    sync = caps.get("textDocumentSync")
    if not isinstance(sync, dict) or sync.get("openClose") is not True or sync.get("change") != 2:
        raise Failure(f"textDocumentSync {json.dumps(sync)}, expected openClose true, change 2")
    if not isinstance(caps.get("completionProvider"), dict):
        raise Failure(f"no completionProvider in {json.dumps(shown)}")


def check_time_item(result, line, start, end, what):
    """`result` (a textDocument/completion result) is a CompletionList, marked
    incomplete, whose first item is `time`, replacing (line, start)-(line, end)."""
    if not isinstance(result, dict) or "items" not in result:
        raise Failure(f"{what}: the result is not a CompletionList: {json.dumps(result)[:400]}")
    if result.get("isIncomplete") is not True:
        raise Failure(f"{what}: isIncomplete is {result.get('isIncomplete')!r}, expected true")
    items = result["items"]
    labels = [item.get("label") for item in items]
    if not items or labels[0] != "time":
        raise Failure(f"{what}: the first item is not 'time': labels {labels}")
    first = items[0]
    expected_edit = {"range": {"start": {"line": line, "character": start},
                               "end": {"line": line, "character": end}}, "newText": "time"}
    if first.get("textEdit") != expected_edit:
        raise Failure(f"{what}: the textEdit of 'time' is {json.dumps(first.get('textEdit'))}, "
                      f"expected {json.dumps(expected_edit)}")
    if first.get("filterText") != "time" or first.get("kind") != 1:
        raise Failure(f"{what}: 'time' has filterText {first.get('filterText')!r} and kind "
                      f"{first.get('kind')!r}, expected 'time' and 1")
    if not re.match(r"\d+(\.\d+)?%", str(first.get("detail"))):
        raise Failure(f"{what}: the detail of 'time' is {first.get('detail')!r}, "
                      "expected it to start with a probability such as '99.9%'")
    sort = [item.get("sortText") for item in items]
    if None in sort or sort != sorted(sort):
        raise Failure(f"{what}: the sortTexts do not keep the model's order: {sort}")


def check_no_items(result, what):
    """An empty answer: a CompletionList without items, an empty list or null."""
    items = result.get("items") if isinstance(result, dict) else result
    if items not in (None, []):
        labels = [item.get("label") for item in items] if isinstance(items, list) else items
        raise Failure(f"{what}: expected no items, got {labels}")


def run_checks(name, checks):
    """Runs each (label, function) in order; prints ok/FAIL lines and a
    summary; returns the exit status."""
    started = time.monotonic()
    failed = 0
    for label, function in checks:
        try:
            function()
            print(f"ok   {label}")
        except Exception as e:  # a broken check fails; the others still run
            failed += 1
            kind = "" if isinstance(e, Failure) else type(e).__name__ + ": "
            print(f"FAIL {label}: {kind}{e}")
    print(f"{name}: {len(checks) - failed} passed, {failed} failed "
          f"({time.monotonic() - started:.1f} s)")
    return 1 if failed else 0
