"""Independent reference for q(word), the probability nextword's score and
eval give the spelling of a word outside the vocabulary (on top of
p(<unk> | context)), written from the documentation alone:
src/predict/unknown_words.h (the mixture with the lexicon's counts) and
src/text/spelling.h (the interpolated Witten-Bell character model).

    q(w) = 0.5 count(w) / C + 0.5 q_char(w)

count(w) is w's count in the lexicon.tsv beside the model's vocab.json (0
when absent), C the summed count of the lexicon's words outside the
vocabulary, q_char an order-5 Witten-Bell model over bytes and an end mark,
trained on those words weighted by their counts. Without a lexicon (or with
none of its words outside the vocabulary) q = q_char untrained: uniform
over 256 bytes and the end mark, renormalized at the first byte.
"""

import math
import os
from collections import defaultdict

ORDER = 5
END, BEGIN = 256, 257  # symbols past the 256 bytes
LEXICON_WEIGHT = 0.5


class Spelling:
    def __init__(self, words, order=ORDER):
        """words: [(spelling as bytes, count)]."""
        self.order = order
        self.ngram = defaultdict(float)  # (context tuple, symbol) -> c(h s)
        self.total = defaultdict(float)  # context -> c(h)
        self.types = defaultdict(int)    # context -> T(h)
        for word, count in words:
            if not word or count < 1:
                continue
            context = (BEGIN,) * (order - 1)
            for s in list(word) + [END]:
                for k in range(order):
                    h = context[len(context) - k:] if k else ()
                    if (h, s) not in self.ngram:
                        self.types[h] += 1
                    self.ngram[(h, s)] += count
                    self.total[h] += count
                context = (context + (s,))[1:] if order > 1 else ()

    def p(self, context, s):
        """P(s | context), from P_-1 = 1/257 up through each seen suffix."""
        p = 1.0 / 257
        for k in range(self.order):
            h = context[len(context) - k:] if k else ()
            if self.total.get(h, 0) == 0:
                break
            p = (self.ngram.get((h, s), 0.0) + self.types[h] * p) / (self.total[h] + self.types[h])
        return p

    def log_q(self, word):
        begin = (BEGIN,) * (self.order - 1)
        logq = -math.log(1 - self.p(begin, END))
        context = begin
        for s in list(word) + [END]:
            logq += math.log(self.p(context, s))
            context = (context + (s,))[1:] if self.order > 1 else ()
        return logq


class UnknownWords:
    def __init__(self, model):
        """The lexicon.tsv beside the model's vocab.json, when there."""
        self.counts = {}
        path = os.path.join(os.path.dirname(model.vocab_path), "lexicon.tsv")
        special = {model.config["unk_token"], model.config.get("bos_token") or None}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    word, count = line.rstrip("\n").split("\t")
                    if (word in model.ids and word not in special) or int(count) < 1:
                        continue
                    self.counts[word] = int(count)
        self.total = sum(self.counts.values())
        self.spelling = Spelling([(w.encode("utf-8"), c) for w, c in self.counts.items()])

    def log_q(self, word):
        char = self.spelling.log_q(word.encode("utf-8"))
        if self.total == 0:
            return char
        q = (LEXICON_WEIGHT * self.counts.get(word, 0) / self.total
             + (1 - LEXICON_WEIGHT) * math.exp(char))
        return math.log(q)
