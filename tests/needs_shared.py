#!/usr/bin/env python3
"""Runs a test that reads ../shared, the corpora and llama2.c's stories260K
beside the repository (never in it), or skips it with one line saying what
is missing: exit 77, which tests/CMakeLists.txt tells ctest is a skip.

    python3 tests/needs_shared.py PATH... -- PROGRAM [ARGS...]

PROGRAM runs with this Python when it ends in .py. With the environment's
NEXTWORD_REQUIRE_SHARED=1 (.ci/run sets it: CI has ../shared) a missing PATH
fails the test instead (exit 1).
"""
import os
import sys


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    split = sys.argv.index("--")
    paths, command = sys.argv[1:split], sys.argv[split + 1:]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        required = os.environ.get("NEXTWORD_REQUIRE_SHARED") == "1"
        print("%s: %s is missing (../shared beside the repository: the corpora and llama2.c's "
              "stories260K, see docs/testing.md)" % ("failed" if required else "skipped",
                                                    os.path.normpath(missing[0])))
        return 1 if required else 77
    if command[0].endswith(".py"):
        command = [sys.executable] + command
    os.execv(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
