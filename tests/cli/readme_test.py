#!/usr/bin/env python3
"""The examples of README.md, docs/*.md and data/README.md are what the
binary prints.

    python3 tests/cli/readme_test.py build/nextword data

In those files' fenced blocks (a file of docs/ may have none; a block
indented inside a list item too), a line `$ nextword ARGS` is run from the
repository's root (ARGS split as a shell would, the bundled default model
unless --model says otherwise; an example on a file of ../shared is skipped
where ../shared is missing, and fails then under NEXTWORD_REQUIRE_SHARED=1),
and the lines after it, up to the next `$`
line or the block's end, are its standard output. An expected line may
elide a middle part as `...`: then the output line must start with what is
before it and end with what is after it.

Everything runs in the avx2 family of kernels (NEXTWORD_KERNELS=avx2), the
one the README's floats in full were printed with: every machine this
project runs on has it, and another family may differ in the last digits.

`$ nextword serve &` starts the server (on a free port: the line it prints
is compared with the port and the number of workers of the example), and
each `$ curl ...` line after it in the same block runs against it, its
output compared as a command's; the server stops at the block's end.
"""
import glob
import os
import re
import shlex
import subprocess
import unittest

import cli_common
from cli_common import run

# A fence, at the margin or indented inside a list item (its lines then
# carry the fence's indent, which is not part of them).
FENCE = re.compile(r"^( *)```")


def examples(path):
    """(line number, argv, expected lines, block number) of each `$ nextword`
    line of path, and of each `$ curl` line after a `$ nextword serve &`."""
    found, block, current, blocks, serving, indent = [], False, None, 0, False, ""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            fence = FENCE.match(line)
            if fence:
                block, current, serving = not block, None, False
                indent = fence.group(1)
                blocks += 1
                continue
            if not block:
                continue
            line = line[len(indent):] if line.startswith(indent) else line
            if line.startswith("$ "):
                words = shlex.split(line[2:])
                current = None
                serving = serving or words[:2] == ["nextword", "serve"]
                if words and (words[0] == "nextword" or (serving and words[0] == "curl")):
                    current = (number, words, [], blocks)
                    found.append(current)
            elif current is not None:
                current[2].append(line)
    for _, _, expected, _ in found:
        while expected and expected[-1] == "":
            expected.pop()
    return found


# "(2 workers)": a machine's number of cores.
WORKERS = re.compile(r"\(\d+ workers?\)")


class Served:
    """`nextword serve ARGS` on a free port, for the curl lines after it."""

    def __init__(self, argv):
        env = {k: v for k, v in os.environ.items() if k != "NEXTWORD_MODEL"}
        self.process = subprocess.Popen([cli_common.NEXTWORD, *argv, "--port", "0"],
                                        stderr=subprocess.PIPE, text=True, env=env)
        self.line = self.process.stderr.readline().rstrip("\n")
        self.port = re.search(r":(\d+) ", self.line).group(1)

    def shown(self):
        """The line it printed, as the example shows it (port 8080)."""
        return WORKERS.sub("(N workers)", self.line.replace(":" + self.port + " ", ":8080 "))

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)
        self.process.stderr.close()


def matches(expected, actual):
    if "..." not in expected:
        return expected == actual
    head, tail = expected.split("...", 1)
    return actual.startswith(head) and actual.endswith(tail) and len(actual) >= len(head + tail)


class Examples(unittest.TestCase):
    def check(self, name, required=True):
        """Runs the examples of name (a path from the repository's root);
        how many there were."""
        root = os.path.dirname(cli_common.DATA)
        path = os.path.join(root, name)
        found = examples(path)
        if required:
            self.assertTrue(found, "%s has no `$ nextword` examples" % name)
        cwd = os.getcwd()
        os.chdir(root)
        server = None
        try:
            for number, argv, expected, block in found:
                if server and server[1] != block:
                    server[0].stop()
                    server = None
                with self.subTest(example="%s:%d" % (name, number)):
                    # An example on ../shared (the GGUF file) runs where it is
                    # there, and must where CI says it is (tests/needs_shared.py).
                    missing = [a for a in argv if a.startswith("../shared/")
                               and not os.path.exists(a)]
                    if missing and os.environ.get("NEXTWORD_REQUIRE_SHARED") == "1":
                        self.fail("%s is missing" % missing[0])
                    if missing:
                        self.skipTest("%s is missing" % missing[0])
                    if argv[-1] == "&":
                        server = (Served(argv[1:-1]), block)
                        self.assertEqual([WORKERS.sub("(N workers)", e) for e in expected],
                                         [server[0].shown()])
                        continue
                    if argv[0] == "curl":
                        argv = [a.replace("localhost:8080", "127.0.0.1:" + server[0].port)
                                for a in argv]
                        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
                    else:
                        r = run(*argv[1:])
                    self.assertEqual(r.returncode, 0, r.stderr)
                    actual = r.stdout.rstrip("\n").split("\n")
                    self.assertEqual(len(actual), len(expected), r.stdout)
                    for e, a in zip(expected, actual):
                        self.assertTrue(matches(e, a), "%s:%d prints\n%s\nnot\n%s"
                                        % (name, number, a, e))
        finally:
            if server:
                server[0].stop()
            os.chdir(cwd)
        return len(found)

    def test_readme(self):
        self.check("README.md")

    def test_docs(self):
        root = os.path.dirname(cli_common.DATA)
        names = sorted(os.path.relpath(p, root)
                       for p in glob.glob(os.path.join(root, "docs", "*.md")))
        self.assertTrue(names, "no docs/*.md")
        checked = sum(self.check(name, required=False) for name in names)
        self.assertTrue(checked, "docs/*.md have no `$ nextword` examples")

    def test_model_card(self):
        self.check(os.path.join("data", "README.md"))

    def test_elision(self):
        self.assertTrue(matches('{"a":[...]}', '{"a":[1,2]}'))
        self.assertFalse(matches('{"a":[...]}', '{"b":[1,2]}'))
        self.assertFalse(matches("time  tiny", "time  tired"))


if __name__ == "__main__":
    cli_common.TEST_MODEL = None  # the default model, as a reader runs them
    os.environ["NEXTWORD_KERNELS"] = "avx2"
    cli_common.main(__import__(__name__))
