#!/usr/bin/env python3
"""The English model's training text and development split, from the cleaned
Wikipedia file (tools/clean_wikipedia.py's output).

    python3 tools/wiki_split.py CLEAN.txt OUT_DIR [--dev-articles 150]
        [--train-bytes N]

Writes into OUT_DIR (a scratch directory, never the repository):

  train.txt   every article but the last --dev-articles, as they are (title
              line, paragraphs, a line <|endoftext|>); with --train-bytes,
              only the whole articles within the first N bytes (a share of
              the text, for short runs);
  dev.tokens  the last --dev-articles articles in WikiText's layout, so that
              `nextword eval --wikitext` scores them by the protocol it uses
              for WikiText-103: each article's title as a line ` = Title = `,
              each paragraph a line of its words (split as the model's
              tokenizer splits them, so that a hyphenated or apostrophized
              word stays one token: no @-@ and nothing detokenizes); N is
              then the number of the tokenizer's words.

The development split is never trained on, by any run here, and is what the
ablations compare (data/english/ablations.md); WikiText-103's validation split
is kept for the final figures only.
"""
import argparse
import os
import re
import sys

# The tokenizer's rule with split_punctuation and no lowercasing
# (data/FORMAT.md, "Tokenizer"), for ASCII punctuation: a mark is a word of
# its own unless it is an apostrophe or hyphen between word characters.
# Words joined with spaces re-tokenize to the same words.
MARKS = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\u2013\u2014\u2026"
WORD = r"[0-9A-Za-z\u0080-\U0010ffff]"
TOKEN = re.compile(r"(?:%s(?:['\-](?=%s)|%s)*)|[%s]|[^\s%s]+" % (
    WORD, WORD, WORD, re.escape(MARKS), re.escape(MARKS)))
CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def words(line):
    return TOKEN.findall(line.translate(CURLY))


def articles(path):
    article = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line == "<|endoftext|>":
                if article:
                    yield article
                article = []
            elif line.strip():
                article.append(line)
    if article:
        yield article


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clean")
    parser.add_argument("out")
    parser.add_argument("--dev-articles", type=int, default=150)
    parser.add_argument("--train-bytes", type=int, default=0)
    args = parser.parse_args()
    every = list(articles(args.clean))
    train, dev = every[:-args.dev_articles], every[-args.dev_articles:]
    os.makedirs(args.out, exist_ok=True)
    written = 0
    with open(os.path.join(args.out, "train.txt"), "w", encoding="utf-8") as f:
        for article in train:
            text = "\n".join(article) + "\n<|endoftext|>\n"
            size = len(text.encode("utf-8"))
            if args.train_bytes and written + size > args.train_bytes:
                break
            f.write(text)
            written += size
    tokens = 0
    with open(os.path.join(args.out, "dev.tokens"), "w", encoding="utf-8") as f:
        for article in dev:
            title = words(article[0])
            f.write(" \n = %s = \n \n" % " ".join(title))
            tokens += len(title)
            for paragraph in article[1:]:
                w = words(paragraph)
                tokens += len(w)
                f.write(" %s \n" % " ".join(w))
    print("train.txt: %d bytes; dev.tokens: %d articles, %d tokens" % (
        written, len(dev), tokens), file=sys.stderr)


if __name__ == "__main__":
    main()
