#!/usr/bin/env python3
"""Measures generate's repetition guard (src/predict/repetition.h), the
figures docs/usage.md quotes for its default: for each model and setting,
the share of repeated 4-grams in 60 generated words, and the model's own
perplexity of what it wrote beside that of the real continuation (a guard
that swapped loops for word salad would write text the model itself finds
as unlikely as real text, or more).

The prompts, from text no model here was trained on:
  english      the first 6 words of 50 paragraphs of the English model's
               development split (tools/wiki_split.py: the last 150 articles
               of the cleaned Wikipedia text): in each article in turn, the
               first paragraph of at least 80 words;
  stories      the first 6 words of 20 stories of the TinyStories development
               split (tools/dev_split.sh's heldout.txt), in file order, no two
               prompts alike. The file puts stories back to back, a blank line
               between the paragraphs of one: a story begins on a line that
               follows a line that is not blank, whose first sentence quotes
               no one and whose first word is not a pronoun, conjunction or
               "the" (which begin the lines of a story that go on), and runs
               to the next; stories of fewer than 80 words are passed over;
  stories260K  the same 20 stories for llama2.c's stories260K (GGUF), a model
               of pieces, written with capitals (a sentence's first letter
               and "I"), as it was trained.

Words are counted as `nextword score` counts them (a subword model's pieces
grouped into words as predict lists them). A 4-gram of a text's first 60
generated words is a repeat when the same 4 words stand earlier in those 60
(words of white space alone left out); the share pools every prompt. The
perplexity is exp of minus the mean ln p of those 60 words as `score`
prices them after the prompt (the English model's with its memory), pooled
the same way; the real continuation's is that of the paragraph's or story's
next 60 words. "vs default" is the mean over prompts of a setting's -ln p a
word less the default's, with its standard error. A subword model's text is
generated 200 pieces long and cut to 60 words (fewer where it ended). Every
generation runs on one thread, a prompt's seed its number.

    python3 tools/generation_guard.py build/nextword [--corpus ../shared/corpus]
        [--gguf ../shared/models/gguf/stories260K.gguf] [--scratch DIR] [--jobs 2]
        [--json FILE]

The Wikipedia text is unpacked and cleaned into SCRATCH (a temporary
directory unless given; a SCRATCH that holds clean.txt already is reused),
never into the repository.
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wiki_split  # noqa: E402

PROMPT_WORDS = 6
WORDS = 60
# Each setting's options; the first is plain greedy, the second the default.
SETTINGS = [
    ("greedy (--greedy)", ["--greedy"]),
    ("default (--no-repeat-ngram 4)", []),
    ("--no-repeat-ngram 3", ["--no-repeat-ngram", "3"]),
    ("--no-repeat-ngram 5", ["--no-repeat-ngram", "5"]),
    ("--presence-penalty 1, no ban", ["--no-repeat-ngram", "0", "--presence-penalty", "1"]),
    ("--presence-penalty 2, no ban", ["--no-repeat-ngram", "0", "--presence-penalty", "2"]),
    ("--no-repeat-ngram 4 --presence-penalty 0.5", ["--presence-penalty", "0.5"]),
    ("--temperature 0.8 --top-k 40, unguarded",
     ["--temperature", "0.8", "--top-k", "40", "--no-repeat-ngram", "0"]),
    ("--temperature 0.8 --top-k 40 (guarded)", ["--temperature", "0.8", "--top-k", "40"]),
]
# Words that begin the lines of a story that go on, not a story.
GOES_ON = {"he", "she", "it", "they", "his", "her", "their", "but", "and", "so", "then", "after",
           "when", "the", "from", "every"}


def wiki_prompts(corpus, scratch, count=50):
    clean = os.path.join(scratch, "clean.txt")
    if not os.path.exists(clean):
        raw = os.path.join(scratch, "wikipedia-en-2015.txt")
        with open(raw, "wb") as f:
            subprocess.run(["xz", "-dc", os.path.join(corpus, "wikipedia-en-2015.txt.xz")],
                           stdout=f, check=True)
        subprocess.run([sys.executable, os.path.join(HERE, "clean_wikipedia.py"), raw, clean],
                       check=True, stdout=subprocess.DEVNULL)
        os.remove(raw)
    dev = list(wiki_split.articles(clean))[-150:]  # wiki_split.py's development split
    pairs = []
    for article in dev:
        for paragraph in article[1:]:
            words = paragraph.split()
            if len(words) >= 80:
                pairs.append((" ".join(words[:PROMPT_WORDS]), " ".join(words[PROMPT_WORDS:])))
                break
    return pairs[:count]


def story_prompts(corpus, scratch, count=20):
    subprocess.run([os.path.join(HERE, "dev_split.sh"),
                    os.path.join(corpus, "tinystories-train-continuation-lowercase.txt"), scratch],
                   check=True)
    with open(os.path.join(scratch, "heldout.txt"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    starts = []
    for i, line in enumerate(lines):
        if i == 0 or not lines[i - 1].strip() or not re.match(r"[a-z]", line):
            continue
        first = re.split(r"(?<=[.!?])\s", line.strip())[0]
        if re.search("[\"\u201c\u201d:]", first) or line.split()[0].strip(",") in GOES_ON:
            continue
        starts.append(i)
    pairs, seen = [], set()
    for begin, end in zip(starts, starts[1:] + [len(lines)]):
        words = " ".join(lines[begin:end]).split()
        prompt = " ".join(words[:PROMPT_WORDS])
        if len(words) >= 80 and prompt not in seen:
            seen.add(prompt)
            pairs.append((prompt, " ".join(words[PROMPT_WORDS:])))
    return pairs[:count]


def capitalized(text):
    """A lowercased story as written: each sentence's first letter and "i"."""
    text = re.sub(r"(^|[.!?]\s+|\"\s*)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    return re.sub(r"\bi\b", "I", text)


def run(args, stdin=None):
    r = subprocess.run(args, input=stdin, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit("%s: exit %d: %s" % (" ".join(args[:4]), r.returncode, r.stderr.strip()))
    return r.stdout


def scored(nextword, model, texts):
    """score's words of each text: [(word, ln p)]."""
    out = run([nextword, "score", "-m", model, "-f", "json", "--batch", "16"],
              "".join(t.replace("\n", " ") + "\n" for t in texts))
    return [[(w["word"], w["logprob"]) for w in json.loads(line)["words"]]
            for line in out.splitlines()]


def continuation(nextword, model, prompts, texts):
    """The first WORDS words after each prompt, as score counts and prices them."""
    lengths = [len(words) for words in scored(nextword, model, prompts)]
    return [words[n:n + WORDS] for n, words in zip(lengths, scored(nextword, model, texts))]


def repeated_4grams(words):
    """(4-grams that stand earlier too, 4-grams) of a list of words; a word
    of white space alone (a subword model's line break) is left out."""
    words = [w for w in words if w.strip()]
    grams = [tuple(words[i:i + 4]) for i in range(len(words) - 3)]
    return sum(1 for i, g in enumerate(grams) if g in grams[:i]), len(grams)


def measure(texts):
    """(repeated 4-gram share, perplexity, words) pooled over the texts' words,
    and each text's mean -ln p a word."""
    repeats = grams = words = 0
    logprob = 0.0
    for text in texts:
        r, g = repeated_4grams([w for w, _ in text])
        repeats, grams = repeats + r, grams + g
        words += len(text)
        logprob += sum(lp for _, lp in text)
    each = [-sum(lp for _, lp in text) / max(len(text), 1) for text in texts]
    return repeats / max(grams, 1), math.exp(-logprob / max(words, 1)), words, each


def paired(each, default):
    """The mean per prompt of each's -ln p a word less the default's, and its
    standard error."""
    d = [a - b for a, b in zip(each, default)]
    return statistics.mean(d), statistics.stdev(d) / math.sqrt(len(d))


def generated(nextword, model, prompt, options, seed, pieces):
    return run([nextword, "generate", "-m", model, "-n", str(pieces), "--seed", str(seed),
                "-t", "1", *options, prompt]).rstrip("\n")


def report(nextword, name, model, pairs, jobs, subword=False):
    prompts = [p for p, _ in pairs]
    real = measure(continuation(nextword, model, prompts, [p + " " + c for p, c in pairs]))
    print("\n%s (%s): %d prompts; real continuation: repeated 4-grams %.1f%%, perplexity %.1f"
          % (name, model, len(pairs), 100 * real[0], real[1]))
    print("  %-44s %9s %11s %18s" % ("setting", "repeats", "perplexity", "vs default, nats"))
    results = {"real": {"repeated_4grams": real[0], "perplexity": real[1], "words": real[2]}}
    default = None
    for setting, options in SETTINGS:
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            texts = list(pool.map(
                lambda i: generated(nextword, model, prompts[i], options, i,
                                    200 if subword else WORDS), range(len(prompts))))
        share, perplexity, words, each = measure(continuation(nextword, model, prompts, texts))
        # Per prompt, a word's -ln p less the default's (once the default has run).
        versus = "%+8.3f +- %.3f" % paired(each, default) if default else ""
        default = default or (each if not options else None)
        print("  %-44s %8.1f%% %11.1f %18s" % (setting, 100 * share, perplexity, versus))
        results[setting] = {"repeated_4grams": share, "perplexity": perplexity, "words": words,
                            "per_prompt_nll": each, "first_text": texts[0]}
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("nextword")
    parser.add_argument("--corpus", default=os.path.join(HERE, "..", "..", "shared", "corpus"))
    parser.add_argument("--gguf", default=os.path.join(HERE, "..", "..", "shared", "models", "gguf",
                                                       "stories260K.gguf"))
    parser.add_argument("--scratch", help="where the Wikipedia text is unpacked (kept)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", help="also write every figure here")
    args = parser.parse_args()
    # Models by name from the repository's root, where no directory is called
    # "english" or "stories" (a directory of a model's name is that model).
    nextword, corpus, gguf = (os.path.abspath(p) for p in (args.nextword, args.corpus, args.gguf))
    output = os.path.abspath(args.json) if args.json else None
    scratch = os.path.abspath(args.scratch or tempfile.mkdtemp(prefix="nextword-guard-"))
    os.makedirs(scratch, exist_ok=True)
    os.chdir(os.path.join(HERE, ".."))
    stories = story_prompts(corpus, scratch)
    results = {
        "english": report(nextword, "english", "english", wiki_prompts(corpus, scratch),
                          args.jobs),
        "stories": report(nextword, "stories", "stories", stories, args.jobs),
        "stories260K": report(nextword, "stories260K", gguf,
                              [(capitalized(p), capitalized(c)) for p, c in stories], args.jobs,
                              subword=True),
    }
    if output:
        with open(output, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
