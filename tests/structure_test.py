#!/usr/bin/env python3
"""The shape of the source tree, checked:

  - folders depend one way: a file in src/F includes headers of F and of the
    folders below F in BELOW only (docs/architecture.md), so the
    folder-level include graph has no cycle; the program (cli) is on top,
    and the two libraries it serves through (serve, lsp) never include each
    other or it;
  - only src/math (the products) and src/base (the threading policy, which
    sets OpenBLAS's thread count) talk to BLAS: no other file includes
    cblas.h or calls cblas_ or openblas_, so the CLI uses engine headers only;
  - no C++ source file under src/ or tests/ is longer than MAX_LINES lines.

    python3 tests/structure_test.py [ROOT]          check, exit 1 on a breach
    python3 tests/structure_test.py [ROOT] --graph print the folder graph
"""
import os
import re
import sys

# What each folder may include from, besides itself (docs/architecture.md),
# each folder with everything below it. It has no cycle.
BELOW = {
    "base": set(),
    "text": {"base"},
    "math": {"base"},
    "format": {"text", "base"},
    "model": {"format", "text", "base"},
    "transformer": {"model", "format", "math", "text", "base"},
    "predict": {"transformer", "model", "format", "math", "text", "base"},
    "train": {"transformer", "model", "format", "math", "text", "base"},
    "complete": {"predict", "transformer", "model", "format", "math", "text", "base"},
    "inspect": {"predict", "transformer", "model", "format", "math", "text", "base"},
    "eval": {"complete", "predict", "transformer", "model", "format", "math", "text", "base"},
    "views": {"inspect", "complete", "predict", "transformer", "model", "format", "math", "text",
              "base"},
    "editor": {"complete", "predict", "transformer", "model", "format", "math", "text", "base"},
    "serve": {"views", "inspect", "complete", "predict", "transformer", "model", "format", "math",
              "text", "base"},
    "lsp": {"views", "inspect", "complete", "predict", "transformer", "model", "format", "math",
            "text", "base"},
    "cli": {"serve", "lsp", "views", "editor", "eval", "inspect", "complete", "predict", "train",
            "transformer", "model", "format", "math", "text", "base"},
}
# The program is cli, on top; serve (HTTP) and lsp (editors) are libraries
# it calls, side by side: neither includes the other, nor cli.
assert not ({"serve", "cli"} & BELOW["lsp"]) and not ({"lsp", "cli"} & BELOW["serve"])
LAYERS = list(BELOW)  # lowest first, for printing
BLAS_FOLDERS = {"base", "math"}
MAX_LINES = 450
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def sources(root, top):
    for folder, _, files in os.walk(os.path.join(root, top)):
        for name in sorted(files):
            if name.endswith((".cpp", ".h")):
                yield os.path.join(folder, name)


def folder_of(root, path):
    return os.path.relpath(path, os.path.join(root, "src")).split(os.sep)[0]


def edges(root):
    """{(from folder, to folder): [file, ...]} over every project include."""
    found = {}
    for path in sources(root, "src"):
        source = folder_of(root, path)
        with open(path, encoding="utf-8") as f:
            for header in INCLUDE.findall(f.read()):
                target = header.split("/")[0]
                if "/" in header and target in LAYERS and target != source:
                    found.setdefault((source, target), []).append(os.path.relpath(path, root))
    return found


def check(root):
    problems = []
    for folder in sorted({folder_of(root, p) for p in sources(root, "src")}):
        if folder not in BELOW:
            problems.append(f"src/{folder}: a folder missing from BELOW in {__file__}")
    for (source, target), files in sorted(edges(root).items()):
        if source in BELOW and target not in BELOW[source]:
            problems.append(f"{files[0]}: src/{source} includes src/{target}, which is not "
                            f"below it (docs/architecture.md)")
    for top in ("src", "tests"):
        for path in sources(root, top):
            relative = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            lines = text.count("\n")
            if lines > MAX_LINES:
                problems.append(f"{relative}: {lines} lines, more than {MAX_LINES}")
            if top == "src" and folder_of(root, path) not in BLAS_FOLDERS:
                if re.search(r"#\s*include\s*<cblas\.h>|\b(cblas|openblas)_\w+\s*\(", text):
                    problems.append(f"{relative}: uses BLAS outside src/base and src/math")
    return problems


def graph(root):
    found = edges(root)
    lines = []
    for source in reversed(LAYERS):
        targets = [t for t in LAYERS if (source, t) in found]
        lines.append(f"{source:12} -> {', '.join(targets) if targets else '(nothing)'}")
    return "\n".join(lines)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    if "--graph" in sys.argv:
        print(graph(root))
        return 0
    problems = check(root)
    for p in problems:
        print(p)
    files = sum(1 for top in ("src", "tests") for _ in sources(root, top))
    print(f"structure: {files} files, {len(edges(root))} folder edges, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
