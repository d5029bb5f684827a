#!/usr/bin/env python3
"""Every command's output on both shipped models, recorded, so that a change
meant to move code without changing behaviour can be checked byte for byte.

    python3 tools/record_outputs.py BINARY OUT_DIR      # record
    python3 tools/record_outputs.py --compare DIR_A DIR_B

Records, for each `$ nextword ...` line of README.md and data/README.md (not
`serve`, which needs a port), and for a fixed list of commands over a few
phrases on `stories` and `english` (predict, complete, score, attention,
lens, trace, attribute, generate, eval on a few lines), the exit code,
stdout and stderr, one file each under OUT_DIR, named by a hash of the
command line, with the command line as its first line. --compare lists the
commands whose records differ, and exits 1 if any does. Run from the
repository's root; the kernels are pinned to avx2, as readme_test.py does.
"""
import hashlib
import os
import shlex
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


def record(binary, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ, NEXTWORD_KERNELS="avx2", NEXTWORD_MODELS="",
               XDG_DATA_HOME="/nonexistent/nextword-record")
    env.pop("NEXTWORD_MODEL", None)
    commands = readme_commands() + fixed_commands()
    for args in commands:
        line = shlex.join(["nextword", *args])
        r = subprocess.run([binary, *args], cwd=REPO, env=env, capture_output=True, check=False)
        name = hashlib.sha256(line.encode("utf-8")).hexdigest()[:16]
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(line.encode("utf-8") + b"\nexit %d\n--- stdout\n" % r.returncode + r.stdout +
                    b"\n--- stderr\n" + r.stderr)
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
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    record(os.path.abspath(sys.argv[1]), sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
