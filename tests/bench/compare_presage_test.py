#!/usr/bin/env python3
"""compare_presage.py, run small in CI: presage's driver builds and answers
through libpresage, the trigram database is built from the default model's
training text with text2ngram, presage's stock database is left unchanged,
both engines type the first 400 words of the test part with the same
protocol, `nextword complete` driven by ksr_protocol.py gives exactly
`eval --ksr`'s ki, ks and kn, and nextword saves more keystrokes than presage
trained on the same text. Skipped (77) without presage or the corpus.

    python3 tests/bench/compare_presage_test.py build/nextword
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "..", "shared", "corpus")


def main():
    nextword = os.path.abspath(sys.argv[1])
    missing = [p for p in ("/usr/include/presage.h", "/usr/bin/text2ngram",
                           "/usr/share/presage/database_en.db") if not os.path.exists(p)]
    if missing or not os.path.isdir(CORPUS):
        print("compare_presage_test: skipped: missing %s" % ", ".join(missing or [CORPUS]))
        return 77
    scratch = tempfile.mkdtemp(prefix="nextword-presage-")
    out = os.path.join(scratch, "summary.json")
    try:
        r = subprocess.run([sys.executable, os.path.join(HERE, "compare_presage.py"), nextword,
                            "--corpus", CORPUS, "--scratch", scratch, "--words", "400",
                            "--configs", "own,stock", "--nextword-variants", "0,3",
                            "--check-nextword", "200", "--json", out],
                           capture_output=True, text=True, timeout=900, check=False)
        print(r.stdout)
        if r.returncode != 0:
            print(r.stderr[-3000:])
            return 1
        with open(out) as f:
            s = json.load(f)
        own, stock = s["presage"]["own"]["ksr"], s["presage"]["stock"]["ksr"]
        plain = s["nextword"]["nextword"]["ksr"]
        checks = [("presage trained on the same text: KSR %.4f" % own, 0.3 < own < 0.9),
                  ("presage's stock English database: KSR %.4f" % stock, 0.2 < stock < 0.9),
                  ("nextword %.4f beats presage %.4f" % (plain, own), plain > own),
                  ("presage's stock database unchanged", s["stock_db_unchanged"] is True)]
        for name, v in s["check_nextword"]["variants"].items():
            checks.append(("%s: the Python protocol over complete gives eval --ksr's ki, ks, kn"
                           % name, v.get("match") is True))
        for name, ok in checks:
            print(("ok   " if ok else "FAIL ") + name)
        failed = sum(1 for _, ok in checks if not ok)
        print("compare_presage_test: %d passed, %d failed" % (len(checks) - failed, failed))
        return 1 if failed else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
