#!/usr/bin/env python3
"""The development split of the public mail that `nextword adapt` was
measured on (docs/usage.md, "Your own writing"; data/english/ablations.md).

    python3 tools/mail_split.py ../shared/corpus/mail-spamassassin-ham.txt OUT_DIR

The file's messages (separated by lines `<|endoftext|>`) are split by the
sha256 of each message's stripped text: a message whose first eight hex
digits, as a number, are divisible by ten is held out. Writes to OUT_DIR
(keep it outside the repository: the corpus never enters it):

  train.txt       the messages adapted on, each followed by <|endoftext|>
  dev.txt         the held-out messages, the same way (eval's text)
  dev-plain.txt   the held-out messages, a blank line between them (typed
                  whole by eval --ksr and compare_presage.py --text)
  dev-typed.txt   dev-plain.txt's lines up to the first 2,500 words
"""
import hashlib
import os
import sys


def split(path):
    with open(path, encoding="utf-8") as f:
        documents = [d.strip() for d in f.read().split("<|endoftext|>\n") if d.strip()]
    held = lambda d: int(hashlib.sha256(d.encode("utf-8")).hexdigest()[:8], 16) % 10 == 0
    return [d for d in documents if not held(d)], [d for d in documents if held(d)]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    train, dev = split(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    files = {"train.txt": "".join(d + "\n<|endoftext|>\n" for d in train),
             "dev.txt": "".join(d + "\n<|endoftext|>\n" for d in dev),
             "dev-plain.txt": "".join(d + "\n\n" for d in dev)}
    typed, words = [], 0
    for line in files["dev-plain.txt"].split("\n"):
        typed.append(line)
        words += len(line.split())
        if words >= 2500:
            break
    files["dev-typed.txt"] = "\n".join(typed) + "\n"
    for name, text in files.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)
    print("%d messages to adapt on (%d words), %d held out (%d words); typed: %d words"
          % (len(train), sum(len(d.split()) for d in train), len(dev),
             sum(len(d.split()) for d in dev), words))


if __name__ == "__main__":
    main()
