#!/usr/bin/env python3
"""Every command's output on both shipped models, recorded, so that a change
meant to move code without changing behaviour can be checked byte for byte.

    python3 tools/record_outputs.py BINARY OUT_DIR [--inputs LOG]   # record
    python3 tools/record_outputs.py --compare DIR_A DIR_B

Records, for each `$ nextword ...` line of README.md and data/README.md (not
`serve`, which needs a port), and for a fixed list of commands over a few
phrases on `stories` and `english` (predict, complete, score, attention,
lens, trace, attribute, generate, eval on a few lines), the exit code,
stdout and stderr, one file each under OUT_DIR, named by a hash of the
command line, with the command line as its first line. --compare lists the
commands whose records differ, and exits 1 if any does. Run from the
repository's root; the kernels are pinned to avx2, as readme_test.py does.

--inputs LOG adds the commands the CLI tests ran, as tests/cli/cli_common.py
logs them under NEXTWORD_RECORD_INPUTS=LOG (arguments, standard input,
environment, the files they named copied beside the log): each runs again
with the same standard input, its copied files at one fixed place
(/tmp/nextword-record-inputs, made afresh for each recording, so that both
builds see the same paths), except the commands whose output holds times or
that write models (REPLAY_SKIPS); eval --ksr's times per keystroke are
masked (TIMES).
"""
import hashlib
import os
import shlex
import json
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHRASES = ["the cat sat on the", "Once upon a time", "Let me know if you have any",
           "I have attached the", "she went to the"]


def readme_commands():
    out = []
    for name in ("README.md", os.path.join("data", "README.md")):
        block = False
        with open(os.path.join(REPO, name), encoding="utf-8") as f:
            for line in f:
                if line.startswith("```"):
                    block = not block
                elif block and line.startswith("$ nextword "):
                    words = shlex.split(line[2:])
                    if len(words) > 1 and words[1] != "serve":
                        out.append(words[1:])
    return out


def fixed_commands():
    out = []
    for model in ("stories", "english"):
        for phrase in PHRASES:
            for args in (["predict", phrase, "-k", "5", "-f", "json"],
                         ["complete", phrase + " ", "-f", "tsv"],
                         ["complete", phrase[:-1], "--learn", "--no-repeat", "-f", "json"],
                         ["score", phrase, "-f", "json"],
                         ["attention", phrase, "-f", "json"],
                         ["lens", phrase, "-f", "json"],
                         ["trace", phrase, "-f", "json"],
                         ["attribute", phrase, "-f", "json"],
                         ["generate", phrase, "-n", "12"]):
                out.append(args + ["-m", model])
        out.append(["info", "-m", model, "-f", "json"])
    out.append(["models", "--names"])
    return out


# Commands of the CLI tests not run again: their output holds times or
# speeds (train, bench, adapt, memory, eval's progress), or they serve.
REPLAY_SKIPS = {"train", "bench", "adapt", "memory", "serve", "lsp", "type"}
REPLAY_FILES = "/tmp/nextword-record-inputs"
# eval --ksr's times per keystroke, masked in every record.
TIMES = [(re.compile(rb'"keystroke_ms":\{[^}]*\}'), b'"keystroke_ms":{(times)}'),
         (re.compile(rb"per keystroke  median [^(]*"), b"per keystroke  (times) ")]


def logged_commands(log):
    """(argv, stdin, env) of each distinct command of a NEXTWORD_RECORD_INPUTS
    log, its "@files/" arguments pointed at REPLAY_FILES."""
    shutil.rmtree(REPLAY_FILES, ignore_errors=True)
    if os.path.isdir(log + ".files"):
        shutil.copytree(log + ".files", REPLAY_FILES, symlinks=True)
    out, seen = [], set()
    with open(log, encoding="utf-8") as f:
        for line in f:
            if line in seen:
                continue
            seen.add(line)
            entry = json.loads(line)
            argv = [REPLAY_FILES + a[len("@files"):] if a.startswith("@files/") else a
                    for a in entry["argv"]]
            if argv and argv[0] not in REPLAY_SKIPS:
                out.append((argv, entry["stdin"], entry["env"]))
    return out


def record(binary, out_dir, log=None):
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ, NEXTWORD_KERNELS="avx2", NEXTWORD_MODELS="",
               XDG_DATA_HOME="/nonexistent/nextword-record")
    env.pop("NEXTWORD_MODEL", None)
    commands = [(args, None, {}) for args in readme_commands() + fixed_commands()]
    commands += logged_commands(log) if log else []
    for args, stdin, extra in commands:
        line = shlex.join(["nextword", *args])
        key = json.dumps([args, stdin, extra]) if (stdin or extra) else line
        try:
            r = subprocess.run([binary, *args], cwd=REPO, env=dict(env, **extra),
                               input=None if stdin is None else stdin.encode("utf-8"),
                               capture_output=True, check=False, timeout=120)
            code, stdout, stderr = r.returncode, r.stdout, r.stderr
            for pattern, mask in TIMES:
                stdout = pattern.sub(mask, stdout)
        except subprocess.TimeoutExpired:
            code, stdout, stderr = "timeout", b"", b""
        name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(line.encode("utf-8") + b"\nexit %s\n--- stdout\n" % str(code).encode() +
                    stdout + b"\n--- stderr\n" + stderr)
    print("%d commands recorded in %s" % (len(commands), out_dir))


def compare(a, b):
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    differ = []
    for name in names:
        pa, pb = os.path.join(a, name), os.path.join(b, name)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            differ.append("only in one: " + name)
            continue
        with open(pa, "rb") as fa, open(pb, "rb") as fb:
            da, db = fa.read(), fb.read()
        if da != db:
            differ.append(da.split(b"\n", 1)[0].decode("utf-8", "replace"))
    for line in differ:
        print("differs:", line)
    print("%d records, %d differ" % (len(names), len(differ)))
    return 1 if differ else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        return compare(sys.argv[2], sys.argv[3])
    args = sys.argv[1:]
    log = None
    if len(args) == 4 and args[2] == "--inputs":
        log = os.path.abspath(args[3])
        args = args[:2]
    if len(args) != 2:
        sys.exit(__doc__)
    record(os.path.abspath(args[0]), args[1], log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
