#!/usr/bin/env python3
"""The examples of README.md and data/README.md are what the binary prints.

    python3 tests/cli/readme_test.py build/nextword data

In those files' fenced blocks, a line `$ nextword ARGS` is run from the
repository's root (ARGS split as a shell would, the bundled default model
unless --model says otherwise), and the lines after it, up to the next `$`
line or the block's end, are its standard output. An expected line may
elide a middle part as `...`: then the output line must start with what is
before it and end with what is after it.
"""
import os
import re
import shlex
import unittest

import cli_common
from cli_common import run

FENCE = re.compile(r"^```")


def examples(path):
    """(line number, argv, expected lines) of each `$ nextword` line of path."""
    found, block, current = [], False, None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if FENCE.match(line):
                block, current = not block, None
                continue
            if not block:
                continue
            if line.startswith("$ "):
                words = shlex.split(line[2:])
                current = None
                if words and words[0] == "nextword":
                    current = (number, words[1:], [])
                    found.append(current)
            elif current is not None:
                current[2].append(line)
    return found


def matches(expected, actual):
    if "..." not in expected:
        return expected == actual
    head, tail = expected.split("...", 1)
    return actual.startswith(head) and actual.endswith(tail) and len(actual) >= len(head + tail)


class Examples(unittest.TestCase):
    def check(self, name):
        root = os.path.dirname(cli_common.DATA)
        path = os.path.join(root, name)
        found = examples(path)
        self.assertTrue(found, "%s has no `$ nextword` examples" % name)
        cwd = os.getcwd()
        os.chdir(root)
        try:
            for number, argv, expected in found:
                with self.subTest(example="%s:%d" % (name, number)):
                    r = run(*argv)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    actual = r.stdout.rstrip("\n").split("\n")
                    self.assertEqual(len(actual), len(expected), r.stdout)
                    for e, a in zip(expected, actual):
                        self.assertTrue(matches(e, a), "%s:%d prints\n%s\nnot\n%s"
                                        % (name, number, a, e))
        finally:
            os.chdir(cwd)

    def test_readme(self):
        self.check("README.md")

    def test_model_card(self):
        self.check(os.path.join("data", "README.md"))

    def test_elision(self):
        self.assertTrue(matches('{"a":[...]}', '{"a":[1,2]}'))
        self.assertFalse(matches('{"a":[...]}', '{"b":[1,2]}'))
        self.assertFalse(matches("time  tiny", "time  tired"))


if __name__ == "__main__":
    cli_common.main(__import__(__name__))
