#!/usr/bin/env python3
"""Keystroke savings through `nextword lsp` equal `nextword eval --ksr`'s:
tests/bench/lsp_ksr.py types tests/lsp/ksr_text.txt (351 words with curly
quotes and apostrophes, emoji outside the BMP, accented letters, an em dash,
so UTF-16 positions differ from code points and bytes) into the server,
one incremental didChange and one completion request per keystroke query of
tests/bench/ksr_protocol.py, and ki, ks, kn (hence KSR) must be identical to
eval --ksr's on the same file, with the same options: plain, --learn,
--no-repeat, both; and once with UTF-8 positions. Every completion's
textEdit must end at the cursor without splitting a character, and the
server's document must end where the client's does.

    python3 tests/lsp/ksr_lsp_test.py NEXTWORD DATA_DIR

DATA_DIR holds the default model (DATA_DIR/default). Empty arguments are
ignored (ctest passes them). Needs no corpus.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import lsp_ksr  # noqa: E402
from lsp_client import ProtocolError  # noqa: E402

TEXT = os.path.join(HERE, "ksr_text.txt")
VARIANTS = [  # (no_repeat, learn, encoding)
    (False, False, "utf-16"),
    (False, True, "utf-16"),
    (True, False, "utf-16"),
    (True, True, "utf-16"),
    (False, False, "utf-8"),
]


def main():
    args = [a for a in sys.argv[1:] if a != ""]
    if len(args) != 2:
        print(__doc__)
        return 2
    nextword, data = os.path.abspath(args[0]), os.path.abspath(args[1])
    model = os.path.join(data, "stories")
    with open(TEXT, encoding="utf-8", newline="") as f:
        text = f.read()
    assert any(ord(ch) > 0xFFFF for ch in text), "the text needs a character outside the BMP"
    failed = 0
    print("\n".join(lsp_ksr.HEADER))
    for no_repeat, learn, encoding in VARIANTS:
        name = "k 6%s%s, %s positions" % (" --no-repeat" if no_repeat else "",
                                          " --learn" if learn else "", encoding)
        try:
            c = lsp_ksr.compare(nextword, model, TEXT, text, 6, no_repeat, learn, encoding)
        except ProtocolError as e:
            print("FAIL %s: the server broke the protocol: %s" % (name, e))
            failed += 1
            continue
        print("\n".join(lsp_ksr.describe(c)))
        lsp, ev = c["lsp"], c["eval"]
        checks = [
            ("ki, ks, kn identical (lsp %d/%d/%d, eval %d/%d/%d)"
             % (lsp["ki"], lsp["ks"], lsp["kn"], ev["ki"], ev["ks"], ev["kn"]), c["identical"]),
            ("KSR within 0.1 point (%.4f vs %.4f)" % (lsp["ksr"], ev["ksr"]), c["ksr_diff"] <= 0.001),
            ("the same number of queries (%d, %d)" % (lsp["queries"], ev["queries"]),
             lsp["queries"] == ev["queries"]),
            ("every textEdit well placed (%d problems in %d completions)%s"
             % (lsp["edit_problem_count"], lsp["edit_checks"],
                ": %r" % lsp["edit_problems"][:2] if lsp["edit_problems"] else ""),
             lsp["edit_problem_count"] == 0),
            ("the server's document ends at %r, the client's end (server: %r)"
             % (lsp["end_position"], lsp["server_end_positions"]), lsp["end_matches"] is True),
            ("shutdown, exit: status 0 (%r)" % lsp["exit_status"], lsp["exit_status"] == 0),
        ]
        for what, ok in checks:
            print("%s %s: %s" % ("ok  " if ok else "FAIL", name, what))
            if not ok:
                failed += 1
                if lsp.get("server_stderr"):
                    print("server stderr: " + lsp["server_stderr"])
    print("ksr_lsp_test: %s" % ("passed" if not failed else "%d checks failed" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
