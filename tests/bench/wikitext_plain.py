#!/usr/bin/env python3
"""WikiText tokens -> plain text for tests/bench/kenlm_compare.py (python3
tests/bench/wikitext_plain.py WIKITEXT OUT.txt MODEL/vocab.json): heading lines dropped, each paragraph
line made running text (@-@ @,@ @.@ joined, clitics attached, no space before
closing punctuation), WikiText's <unk> written as a placeholder word outside
the vocabulary (so the model's tokenizer maps it to its unk token), and each
paragraph followed by a blank line (one document per paragraph)."""
import json, re, sys

src, dst, vocab_path = sys.argv[1:4]
vocab = set(json.load(open(vocab_path, encoding="utf-8")))
PLACEHOLDER = "Qxunkxq"
assert PLACEHOLDER not in vocab and PLACEHOLDER.lower() not in vocab
NO_SPACE_BEFORE = set(",.;:!?)]}%")
NO_SPACE_AFTER = set("([{")
CLITIC = re.compile(r"^(n't|'[A-Za-z0-9].*)$")

def plain(line):
    out, attach, quote_open = "", True, False
    for w in line.split():
        if w in ("@-@", "@,@", "@.@"):
            out += w[1]; attach = True; continue
        if w == "<unk>":
            w = PLACEHOLDER
        if w == '"':
            if quote_open:
                out += '"'; quote_open = False; attach = False
            else:
                out += ("" if attach else " ") + '"'; quote_open = True; attach = True
            continue
        if attach or w in NO_SPACE_BEFORE or CLITIC.match(w):
            out += w
        else:
            out += " " + w
        attach = w in NO_SPACE_AFTER
    return out

kept = headings = 0
with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as g:
    for line in f:
        s = line.strip()
        if not s:
            continue
        if s.startswith("=") and s.endswith("="):
            headings += 1; continue
        g.write(plain(s) + "\n\n"); kept += 1
print(f"paragraphs {kept}, headings dropped {headings}", file=sys.stderr)
