#!/usr/bin/env python3
"""The memory (memory.bin, an interpolated modified Kneser-Ney n-gram model)
side by side with KenLM on the same tokens: n-grams per order, build time,
peak memory, file size, perplexity on a test text and KenLM's query speed,
printed as a Markdown table.

    python3 tests/bench/kenlm_compare.py compare --model data/english \\
        --memory OURS.bin --ours-json OURS.json --tokens TEST.tok \\
        --query KENLM/bin/query --kenlm-binary LM.bin --kenlm-arpa LM.arpa \\
        --kenlm-time LMPLZ.time [--kenlm-binary-time BUILD_BINARY.time] \\
        [--kenlm-unk-word '<oov>'] [--json OUT]
    python3 tests/bench/kenlm_compare.py check --model data/stories \\
        --memory SMALL.bin [--tokens SMALL.tok] [--contexts 6] [--score-json S.json]

Standard-library Python 3 only; KenLM is not part of this repository: build
it elsewhere and pass the paths of its programs' outputs. The inputs, all
outside the repository (W a scratch folder):

    nextword memory -m data/english TRAIN.txt --order 4 --cutoffs 1 \\
        -o W/ours4.bin --tokens W/train.tok -f json > W/ours4.json
    nextword memory -m data/english TEST.txt --order 1 -o W/discard.bin \\
        --tokens W/test.tok
    sed 's/<unk>/<oov>/g' W/train.tok > W/train.kenlm.txt
    /usr/bin/time -v -o W/lmplz.time lmplz -o 4 --discount_fallback -S 6G \\
        -T W/tmp < W/train.kenlm.txt > W/lm4.arpa
    /usr/bin/time -v -o W/build_binary.time build_binary trie W/lm4.arpa W/lm4.trie

The tokens. Both toolkits read one token file: a document a line, tokens
separated by spaces, as `nextword memory --tokens FILE` writes them (the
model's words; a word outside the vocabulary as its unk token). Every token
of every line is scored, each with the context the line has before it:

  - the memory: the bos token, then the line's tokens (its last n - 1 count),
    as training reads a document;
  - KenLM: `query` wraps each line in <s> ... </s>; the </s> it scores at
    the end of each line is left out, so both sum ln p over the same N tokens.

lmplz refuses <unk> in its text ("Special word <unk> is not allowed in the
corpus"; --skip_symbols would delete those tokens and join their
neighbours). So KenLM is trained and queried with the unk token written as an
ordinary word (--kenlm-unk-word, `<oov>` by default: the word the training
tokens for lmplz must have been written with too, e.g. `sed
's/<unk>/<oov>/g'`). It is then counted like any word, the same convention
the memory uses for its unk id (the closed vocabulary: p(unk | h) is the
probability of "some word outside the vocabulary", never spelled). A token
that KenLM's vocabulary lacks (a vocabulary word never seen in the training
tokens) is KenLM's own <unk>: with lmplz's default --interpolate_unigrams it
gets only the uniform share of the unigram interpolation, as the memory
gives such a word gamma(empty)/V. Both counts are printed.

Perplexity is exp(-(sum of ln p) / N) over those N tokens (KenLM's log10
converted to ln). KenLM's query speed is the query loop's CPU time: `query
-v summary` on the test tokens less the same on empty input (the load),
best of --repeats runs, counting every lookup query makes (the tokens and
one </s> per line, its own "Tokens:" count). The memory is scored here by an
independent Python reader of memory.bin, whose speed says nothing about the
C++ one; with --nextword BIN, `BIN memory --query` scores the same tokens in
C++ (its total ln p must equal the reader's to 1e-9) and its lookups a
second, timed around the lookup loop alone, best of --repeats, are the
memory's query speed.

The reader follows data/FORMAT.md, "memory.bin": the header, `lambdas`,
`unigram` u(w), and per order k `words`, `shares` (bfloat16) and
`children`, each array at the next multiple of 8 bytes (the file padded
with zeros to a multiple of 8 after the last one, as nextword writes it).
With U = sum u(w) and gamma(h) = max(0, 1 - sum of the shares a(h v)
stored under h):

    p(w | empty) = u(w) / U
    p(w | h) = a(h w) + gamma(h) p(w | h')   when h is an entry of the trie
    p(w | h) = p(w | h')                      when it is not

h' being h without its first token. A child range is clamped into the next
order and a share outside (0, 1] counts as 0, as FORMAT.md asks of a reader.

`check` verifies the reader on a small memory: for a few contexts (the empty
one, the bos, prefixes of the token file's first lines, and contexts that
are not entries) the probabilities of every vocabulary word are all positive
and sum to 1 within 1e-6, and p(w | h) computed word by word equals the
whole distribution's entry. With --score-json it also checks the reader
against the C++ one: write the same memory with `--lambda 1` (every mixture
weight 1, so the model scores with the memory alone) into a copy of the
model directory (links to its vocab.json and weights), score some lines of
the token file with `nextword score -m COPY -f json`, and every in-vocabulary
word's ln p must agree within 1e-5. Exit code 1 when a check fails.
"""
import argparse
import bisect
import json
import math
import mmap
import os
import re
import struct
import subprocess
import sys
import time

HEADER_BYTES = 384
MAX_ORDER = 8
BANDS = 16
LN10 = math.log(10.0)


def fail(message):
    print(f"kenlm_compare: {message}", file=sys.stderr)
    sys.exit(2)


def align8(offset):
    return (offset + 7) & ~7


def fnv1a_64(words):
    """FORMAT.md's vocab_hash: FNV-1a over the words and newlines, eight bytes a step."""
    data = b"".join(word.encode("utf-8") + b"\n" for word in words)
    data += b"\0" * (-len(data) % 8)
    h = 14695981039346656037
    for (chunk,) in struct.iter_unpack("<Q", data):
        h = ((h ^ chunk) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def bf16_as_floats(halves):
    """A memoryview of uint16 bfloat16 bits as a memoryview of float32."""
    raw = halves.cast("B")
    out = bytearray(2 * len(raw))
    out[2::4] = raw[0::2]
    out[3::4] = raw[1::2]
    return memoryview(out).cast("f")


class Memory:
    """memory.bin read per data/FORMAT.md, mapped, never copied whole."""

    def __init__(self, path, vocab):
        if sys.byteorder != "little":
            fail("this reader maps the little-endian arrays directly: needs a little-endian machine")
        self.path = path
        self.vocab = vocab
        with open(path, "rb") as f:
            self.map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        data = memoryview(self.map)
        if len(data) < HEADER_BYTES:
            fail(f"{path}: {len(data)} bytes, shorter than the {HEADER_BYTES}-byte header")
        if bytes(data[0:8]) != b"NWMEMORY":
            fail(f"{path}: magic: not a nextword memory")
        (self.version, self.order, self.V, self.word_bytes, vocab_hash, self.tokens,
         bands) = struct.unpack_from("<IIIIQQI", data, 8)
        self.entries = list(struct.unpack_from("<8Q", data, 48))
        self.cutoffs = list(struct.unpack_from("<8I", data, 112))
        d = struct.unpack_from("<24d", data, 144)
        self.discounts = [list(d[3 * i:3 * i + 3]) for i in range(MAX_ORDER)]
        n, V = self.order, self.V
        if self.version != 1:
            fail(f"{path}: version: {self.version}, this reader knows 1")
        if not 1 <= n <= MAX_ORDER:
            fail(f"{path}: order: {n}, must be 1 to 8")
        if V != len(vocab):
            fail(f"{path}: vocab_size: {V}, vocab.json has {len(vocab)}")
        if self.word_bytes != (2 if V <= 65536 else 4):
            fail(f"{path}: word_bytes: {self.word_bytes} for V = {V}")
        if bands != BANDS:
            fail(f"{path}: bands: {bands}, must be {BANDS}")
        if vocab_hash != fnv1a_64(vocab):
            fail(f"{path}: vocab_hash: counted with another vocabulary than vocab.json's")
        if self.entries[0] != V or any(self.entries[k] for k in range(n, MAX_ORDER)):
            fail(f"{path}: entries: {self.entries[:n]} (order 1 must be V, above n 0)")

        # The layout: every array at the next multiple of 8.
        offset = HEADER_BYTES

        def take(count, size):
            nonlocal offset
            offset = align8(offset)
            start = offset
            offset += count * size
            return start, offset

        lam = take(n * BANDS, 8)
        uni = take(V, 4)
        spans = []
        for k in range(1, n + 1):
            e = self.entries[k - 1]
            words = take(e, self.word_bytes) if k >= 2 else None
            shares = take(e, 2) if k >= 2 else None
            children = take(e + 1, 4) if k < n else None
            spans.append((words, shares, children))
        # The last array is padded to a multiple of 8 too, as nextword writes it.
        offset = align8(offset)
        if len(data) != offset:
            fail(f"{path}: {len(data)} bytes, but its header describes {offset}")

        self.lambdas = list(struct.unpack_from(f"<{n * BANDS}d", data, lam[0]))
        if any(not 0 <= x <= 1 for x in self.lambdas):
            fail(f"{path}: lambdas: a weight outside [0, 1]")
        self.unigram = data[uni[0]:uni[1]].cast("f")
        if any(not (0 <= x <= 1) for x in self.unigram):
            fail(f"{path}: unigram: a value outside [0, 1]")
        self.U = math.fsum(self.unigram)
        if not self.U > 0:
            fail(f"{path}: unigram: sums to {self.U}")
        wcode = "H" if self.word_bytes == 2 else "I"
        # Index k - 1 for order k.
        self.words = [data[s[0]:s[1]].cast(wcode) if s else None for s, _, _ in spans]
        self.shares = [data[s[0]:s[1]].cast("H") if s else None for _, s, _ in spans]
        self.children = [data[s[0]:s[1]].cast("I") if s else None for _, _, s in spans]
        self._gamma = {}
        self._entry = {}

    def child_range(self, k, i):
        """Entries of order k + 1 under entry i of order k, clamped."""
        ch = self.children[k - 1]
        limit = self.entries[k]
        lo, hi = min(ch[i], limit), min(ch[i + 1], limit)
        return lo, max(lo, hi)

    def share(self, k, j):
        """a() of entry j of order k (k >= 2): 0 when not in (0, 1]."""
        s = struct.unpack("<f", struct.pack("<I", self.shares[k - 1][j] << 16))[0]
        return float(s) if 0 < s <= 1 else 0.0

    def find(self, k, lo, hi, word):
        """Index of `word` among entries lo..hi-1 of order k (sorted by word), or -1."""
        words = self.words[k - 1]
        j = bisect.bisect_left(words, word, lo, hi)
        return j if j < hi and words[j] == word else -1

    def entry(self, context):
        """The index of the tuple `context` as an entry of order len(context), or -1."""
        found = self._entry.get(context)
        if found is not None:
            return found
        i = context[0] if 0 <= context[0] < self.V else -1
        for k in range(1, len(context)):
            if i < 0 or k >= self.order:
                i = -1
                break
            lo, hi = self.child_range(k, i)
            i = self.find(k + 1, lo, hi, context[k])
        self._entry[context] = i
        return i

    def gamma(self, k, i):
        """max(0, 1 - the shares stored under entry i of order k)."""
        key = (k, i)
        g = self._gamma.get(key)
        if g is not None:
            return g
        lo, hi = self.child_range(k, i)
        total = 0.0
        if hi > lo:
            floats = bf16_as_floats(self.shares[k][lo:hi])
            try:
                fast = math.fsum(floats)
                ok = math.isfinite(fast) and min(floats) > 0 and max(floats) <= 1
            except (ValueError, OverflowError):
                ok = False
            total = fast if ok else math.fsum(s for s in floats if 0 < s <= 1)
        g = max(0.0, 1.0 - total)
        self._gamma[key] = g
        return g

    def probability(self, context, word):
        """p(word | context), context a tuple of ids; its last n - 1 count."""
        context = tuple(context[max(0, len(context) - (self.order - 1)):]) if self.order > 1 else ()
        p = self.unigram[word] / self.U
        for m in range(1, len(context) + 1):
            h = context[-m:]
            i = self.entry(h)
            if i < 0:
                continue
            lo, hi = self.child_range(m, i)
            j = self.find(m + 1, lo, hi, word)
            a = self.share(m + 1, j) if j >= 0 else 0.0
            p = a + self.gamma(m, i) * p
        return p

    def distribution(self, context):
        """p(w | context) for every w, as a list."""
        context = tuple(context[max(0, len(context) - (self.order - 1)):]) if self.order > 1 else ()
        p = [u / self.U for u in self.unigram]
        for m in range(1, len(context) + 1):
            i = self.entry(context[-m:])
            if i < 0:
                continue
            g = self.gamma(m, i)
            p = [g * x for x in p]
            lo, hi = self.child_range(m, i)
            words = self.words[m]
            for j in range(lo, hi):
                if words[j] < self.V:
                    p[words[j]] += self.share(m + 1, j)
        return p


def load_vocab(model_dir):
    path = os.path.join(model_dir, "vocab.json")
    with open(path, encoding="utf-8") as f:
        vocab = json.load(f)
    if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab):
        fail(f"{path}: expected a JSON array of words")
    return vocab


def read_lines(path):
    """The token file's non-empty lines, each a list of tokens."""
    with open(path, encoding="utf-8") as f:
        return [line.split() for line in f if line.strip()]


def score_memory(memory, index, lines, unk_id, bos_id):
    """ln p of every token, line by line (bos first in each line's context)."""
    keep = max(0, memory.order - 1)
    out = []
    for tokens in lines:
        context = [bos_id]
        scores = []
        for token in tokens:
            w = index.get(token, unk_id)
            scores.append(math.log(memory.probability(tuple(context[-keep:]) if keep else (), w)))
            context.append(w)
        out.append(scores)
    return out


def kenlm_text(lines, unk_token, unk_word):
    return "".join(" ".join(unk_word if t == unk_token else t for t in tokens) + "\n"
                   for tokens in lines)


def score_kenlm(query, model, lines, unk_token, unk_word):
    """ln p of every token but each line's </s>, and KenLM's unknown count."""
    run = subprocess.run([query, model], input=kenlm_text(lines, unk_token, unk_word),
                         capture_output=True, text=True, encoding="utf-8")
    if run.returncode != 0:
        fail(f"{query} exited {run.returncode}: {run.stderr.strip()[-2000:]}")
    rows = [r for r in run.stdout.split("\n") if "Total: " in r]
    if len(rows) != len(lines):
        fail(f"query printed {len(rows)} sentence lines for {len(lines)} input lines")
    out, kenlm_unknown = [], 0
    for tokens, row in zip(lines, rows):
        items = row.split("\t")
        words = items[:-1]
        if len(words) != len(tokens) + 1 or not words[-1].startswith("</s>="):
            fail(f"query's line does not match its input: {row[:200]}")
        scores = []
        for token, item in zip(tokens, words[:-1]):
            surface_id, _, log10p = item.rsplit(" ", 2)
            surface, _, vocab_id = surface_id.rpartition("=")
            if surface != (unk_word if token == unk_token else token):
                fail(f"query's word {surface!r} is not the input's {token!r}")
            if vocab_id == "0":
                kenlm_unknown += 1
            scores.append(float(log10p) * LN10)
        out.append(scores)
    return out, kenlm_unknown, run.stderr


def query_cpu(query, model, text, repeats):
    """Best (CPU seconds, wall seconds, tokens) of `query -v summary` on text."""
    best = None
    for _ in range(repeats):
        run = subprocess.run([query, "-v", "summary", model], input=text, capture_output=True,
                             text=True, encoding="utf-8")
        if run.returncode != 0:
            fail(f"{query} exited {run.returncode}: {run.stderr.strip()[-2000:]}")
        cpu = re.search(r"CPU:([0-9.eE+-]+)", run.stderr)
        real = re.search(r"real:([0-9.eE+-]+)", run.stderr)
        tokens = re.search(r"Tokens:\s*(\d+)", run.stdout)
        if not cpu or not real:
            fail(f"query printed no CPU:/real: usage line on stderr: {run.stderr[-500:]}")
        got = (float(cpu.group(1)), float(real.group(1)), int(tokens.group(1)) if tokens else 0)
        best = got if best is None or got[0] < best[0] else best
    return best


def time_v(path):
    """Wall seconds and peak RSS (MiB) from a `/usr/bin/time -v` log."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9:.]+)", text)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    status = re.search(r"Exit status: (\d+)", text)
    if not wall or not rss:
        fail(f"{path}: not a /usr/bin/time -v log")
    if status and status.group(1) != "0":
        fail(f"{path}: the timed command exited {status.group(1)}")
    seconds = 0.0
    for part in wall.group(1).split(":"):
        seconds = seconds * 60 + float(part)
    return seconds, int(rss.group(1)) / 1024.0


def arpa_counts(path):
    """ngram k=count of an ARPA file's \\data\\ section."""
    counts = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"ngram (\d+)=(\d+)", line.strip())
            if m:
                counts[int(m.group(1))] = int(m.group(2))
            elif counts and line.strip().startswith("\\"):
                break
    return [counts[k] for k in sorted(counts)]


def mb(n):
    return f"{n / 1e6:,.1f} MB"


def perplexity(total_ln, count):
    return math.exp(-total_ln / count)


def compare(args):
    vocab = load_vocab(args.model)
    index = {w: i for i, w in enumerate(vocab)}
    for token in (args.unk_token, args.bos_token):
        if token not in index:
            fail(f"{args.model}/vocab.json has no {token!r}")
    unk_id, bos_id = index[args.unk_token], index[args.bos_token]
    memory = Memory(args.memory, vocab)
    lines = read_lines(args.tokens)
    n_tokens = sum(len(t) for t in lines)
    if not n_tokens:
        fail(f"{args.tokens}: no tokens")

    start = time.perf_counter()
    ours = score_memory(memory, index, lines, unk_id, bos_id)
    reader_seconds = time.perf_counter() - start
    theirs, kenlm_unknown, _ = score_kenlm(args.query, args.kenlm_binary, lines, args.unk_token,
                                           args.kenlm_unk_word)

    flat_ours = [s for line in ours for s in line]
    flat_theirs = [s for line in theirs for s in line]
    is_unk = [index.get(t, unk_id) == unk_id for tokens in lines for t in tokens]
    n_unk = sum(is_unk)
    ppl_ours = perplexity(math.fsum(flat_ours), n_tokens)
    ppl_theirs = perplexity(math.fsum(flat_theirs), n_tokens)
    known = [(a, b) for a, b, u in zip(flat_ours, flat_theirs, is_unk) if not u]
    ppl_ours_known = perplexity(math.fsum(a for a, _ in known), len(known))
    ppl_theirs_known = perplexity(math.fsum(b for _, b in known), len(known))
    diffs = sorted(abs(a - b) for a, b in zip(flat_ours, flat_theirs))
    median_diff = diffs[len(diffs) // 2]
    ours_better = sum(a > b for a, b in zip(flat_ours, flat_theirs))

    # The C++ reader on the same tokens: the same sum, and its speed.
    ours_speed = None
    if args.nextword:
        best = None
        for _ in range(args.repeats):
            run = subprocess.run([args.nextword, "memory", "-m", args.model, "-o", args.memory,
                                  "--query", args.tokens, "-f", "json"], capture_output=True,
                                 text=True)
            if run.returncode != 0:
                fail(f"{args.nextword} memory --query exited {run.returncode}: {run.stderr.strip()}")
            q = json.loads(run.stdout)
            best = q if best is None or q["lookups_per_s"] > best["lookups_per_s"] else best
        total = math.fsum(flat_ours)
        if q["tokens"] != n_tokens or abs(q["total_ln_p"] - total) > 1e-9 * abs(total):
            fail(f"memory --query: {q['tokens']} tokens, total ln p {q['total_ln_p']!r}; "
                 f"the reader: {n_tokens}, {total!r}")
        ours_speed = best["lookups_per_s"]

    # KenLM's query speed: the query loop's CPU time, the load subtracted.
    text = kenlm_text(lines, args.unk_token, args.kenlm_unk_word)
    cpu_full, wall_full, lookups = query_cpu(args.query, args.kenlm_binary, text, args.repeats)
    cpu_load, wall_load, _ = query_cpu(args.query, args.kenlm_binary, "", args.repeats)
    loop = max(cpu_full - cpu_load, 1e-9)
    kenlm_speed = lookups / loop

    with open(args.ours_json, encoding="utf-8") as f:
        summary = json.load(f)
    ours_build = summary.get("build_seconds")
    ours_peak = summary.get("peak_memory_mb")
    ours_bytes = summary.get("bytes", os.path.getsize(args.memory))
    ours_ngrams = memory.entries[:memory.order]

    kenlm_seconds, kenlm_peak = time_v(args.kenlm_time)
    build_note = f"{kenlm_seconds:,.1f} s (lmplz)"
    if args.kenlm_binary_time:
        bb_seconds, bb_peak = time_v(args.kenlm_binary_time)
        build_note += f" + {bb_seconds:,.1f} s (build_binary)"
        kenlm_peak_note = f"{kenlm_peak:,.0f} MiB (lmplz), {bb_peak:,.0f} MiB (build_binary)"
    else:
        kenlm_peak_note = f"{kenlm_peak:,.0f} MiB (lmplz)"
    arpa = arpa_counts(args.kenlm_arpa) if args.kenlm_arpa else []
    sizes = f"{mb(os.path.getsize(args.kenlm_binary))} (binary)"
    if args.kenlm_arpa:
        sizes += f", {mb(os.path.getsize(args.kenlm_arpa))} (ARPA)"

    rows = [
        ("toolkit", "nextword memory (memory.bin)", "KenLM (lmplz + build_binary)"),
        ("order", str(memory.order), str(len(arpa)) if arpa else "?"),
        ("n-grams per order", " / ".join(f"{c:,}" for c in ours_ngrams),
         " / ".join(f"{c:,}" for c in arpa) if arpa else "?"),
        ("build time (wall)", f"{ours_build:,.1f} s" if ours_build is not None else "?", build_note),
        ("peak memory (RSS)", f"{ours_peak:,.0f} MiB" if ours_peak is not None else "?", kenlm_peak_note),
        ("file size", mb(ours_bytes), sizes),
        (f"perplexity, {n_tokens:,} test tokens", f"{ppl_ours:.2f}", f"{ppl_theirs:.2f}"),
        (f"perplexity, the {len(known):,} not unk", f"{ppl_ours_known:.2f}", f"{ppl_theirs_known:.2f}"),
        ("query speed", f"{ours_speed:,.0f} tokens/s (the lookup loop of `memory --query`)"
     if ours_speed else "n/a (no --nextword)",
         f"{kenlm_speed:,.0f} tokens/s (CPU of the query loop, {lookups:,} lookups incl. </s>)"),
    ]
    print(f"| measure | {rows[0][1]} | {rows[0][2]} |")
    print("| --- | --- | --- |")
    for name, a, b in rows[1:]:
        print(f"| {name} | {a} | {b} |")
    print()
    print(f"Test tokens: {args.tokens}, {len(lines):,} lines (documents), {n_tokens:,} tokens scored, "
          f"{n_unk:,} of them {args.unk_token} ({100.0 * n_unk / n_tokens:.2f}%).")
    print(f"The memory: each line after {args.bos_token!r}, its last {memory.order - 1} tokens as context; "
          f"{args.unk_token} is its vocabulary word {unk_id} (closed vocabulary), "
          f"V = {memory.V:,}, trained on {memory.tokens:,} tokens.")
    print(f"KenLM: each line in <s> ... </s>, the </s> not counted; {args.unk_token} written as the "
          f"ordinary word {args.kenlm_unk_word!r} in its training and test tokens (lmplz rejects <unk> "
          f"in a corpus), so it is counted like any word; {kenlm_unknown:,} test tokens were outside "
          f"KenLM's vocabulary (its <unk>, id 0: only the uniform share of the interpolated unigrams).")
    print(f"Per token, |ln p_memory - ln p_KenLM|: median {median_diff:.4f} nats; the memory gives the "
          f"higher probability to {ours_better:,} of {n_tokens:,} tokens.")
    print(f"KenLM query: {lookups:,} lookups in {loop:.3f} s CPU (full run {cpu_full:.3f} s CPU, "
          f"{wall_full:.3f} s wall; load alone {cpu_load:.3f} s CPU, {wall_load:.3f} s wall; "
          f"best of {args.repeats}). The Python reader took {reader_seconds:.1f} s (not a speed of the memory).")
    if args.json:
        result = {
            "tokens": n_tokens, "lines": len(lines), "unk_tokens": n_unk,
            "kenlm_unknown": kenlm_unknown,
            "ours": {"order": memory.order, "ngrams": ours_ngrams, "build_seconds": ours_build,
                     "peak_memory_mb": ours_peak, "bytes": ours_bytes, "perplexity": ppl_ours,
                     "perplexity_not_unk": ppl_ours_known, "query_tokens_per_second": ours_speed},
            "kenlm": {"order": len(arpa), "ngrams": arpa, "lmplz_seconds": kenlm_seconds,
                      "lmplz_peak_mb": kenlm_peak,
                      "binary_bytes": os.path.getsize(args.kenlm_binary),
                      "arpa_bytes": os.path.getsize(args.kenlm_arpa) if args.kenlm_arpa else None,
                      "perplexity": ppl_theirs, "perplexity_not_unk": ppl_theirs_known,
                      "query_tokens_per_second": kenlm_speed, "query_lookups": lookups},
            "median_abs_ln_diff": median_diff,
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0


def check(args):
    vocab = load_vocab(args.model)
    index = {w: i for i, w in enumerate(vocab)}
    unk_id, bos_id = index[args.unk_token], index[args.bos_token]
    memory = Memory(args.memory, vocab)
    keep = memory.order - 1
    contexts = [(), (bos_id,)]
    if args.tokens:
        for tokens in read_lines(args.tokens)[:args.contexts]:
            ids = [bos_id] + [index.get(t, unk_id) for t in tokens]
            for cut in sorted({2, len(ids) // 2, len(ids)}):
                if 2 <= cut <= len(ids):
                    contexts.append(tuple(ids[max(0, cut - keep):cut]))
    # Contexts that are not entries: an unlikely pair, and one with unk.
    contexts.append(tuple([len(vocab) - 1, len(vocab) - 2, len(vocab) - 3][:keep]))
    contexts.append(tuple([unk_id, unk_id, bos_id][:keep]))
    contexts = list(dict.fromkeys(contexts))
    failures = 0
    for context in contexts:
        p = memory.distribution(context)
        total = math.fsum(p)
        lowest = min(p)
        m = max((k for k in range(1, len(context) + 1) if memory.entry(context[-k:]) >= 0),
                default=0)
        probes = [0, bos_id, len(vocab) - 1] + sorted(range(len(p)), key=p.__getitem__)[-3:]
        worst = max(abs(memory.probability(context, w) - p[w]) for w in probes)
        ok = abs(total - 1) <= 1e-6 and lowest > 0 and worst <= 1e-12
        failures += not ok
        words = " ".join(vocab[w] for w in context) or "(empty)"
        print(f"{'ok ' if ok else 'BAD'} context [{words}] (longest entry suffix {m}): "
              f"sum {total:.12f}, min {lowest:.3e}, word-by-word vs whole {worst:.1e}")
    checks = len(contexts)
    if args.score_json:
        # `nextword score -f json` of a model whose memory has every lambda 1
        # scores with the memory alone: the C++ reader's ln p, word by word.
        if any(x != 1.0 for x in memory.lambdas):
            fail(f"{args.memory}: --score-json needs a memory written with --lambda 1")
        worst, compared = 0.0, 0
        with open(args.score_json, encoding="utf-8") as f:
            for row in f:
                if not row.strip():
                    continue
                scored = json.loads(row)
                ids = scored["ids"]  # the bos, then the line's words
                for i, word in enumerate(scored["words"]):
                    if word.get("unknown"):
                        continue  # p(unk | h) times the spelling's q(word): not the memory's alone
                    context = tuple(ids[max(0, i + 1 - keep):i + 1]) if keep else ()
                    ours = math.log(memory.probability(context, word["id"]))
                    worst = max(worst, abs(ours - word["logprob"]))
                    compared += 1
        ok = compared > 0 and worst <= 1e-5
        failures += not ok
        checks += 1
        print(f"{'ok ' if ok else 'BAD'} {compared} words of {args.score_json}: largest "
              f"|ln p (this reader) - ln p (nextword score)| {worst:.2e} (float32 in C++; at most 1e-5)")
    print(f"{checks - failures} passed, {failures} failed")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("compare", "check"):
        p = sub.add_parser(name)
        p.add_argument("--model", required=True, help="model directory (vocab.json)")
        p.add_argument("--memory", required=True, help="memory.bin to read")
        p.add_argument("--unk-token", default="<unk>")
        p.add_argument("--bos-token", default="<bos>")
        if name == "compare":
            p.add_argument("--tokens", required=True, help="test token file, a document a line")
            p.add_argument("--ours-json", required=True,
                           help="`nextword memory -f json` summary of the memory's build")
            p.add_argument("--query", required=True, help="KenLM's query program")
            p.add_argument("--kenlm-binary", required=True, help="KenLM model (binary or ARPA)")
            p.add_argument("--kenlm-arpa", help="the ARPA file (n-gram counts, size)")
            p.add_argument("--kenlm-time", required=True, help="/usr/bin/time -v log of lmplz")
            p.add_argument("--kenlm-binary-time", help="/usr/bin/time -v log of build_binary")
            p.add_argument("--kenlm-unk-word", default="<oov>",
                           help="the word the unk token was written as for lmplz (default <oov>)")
            p.add_argument("--repeats", type=int, default=3)
            p.add_argument("--nextword", help="nextword binary: the C++ query speed")
            p.add_argument("--json", help="also write the numbers as JSON here")
        else:
            p.add_argument("--tokens", help="token file whose first lines give contexts")
            p.add_argument("--contexts", type=int, default=6, help="lines of --tokens used")
            p.add_argument("--score-json",
                           help="`nextword score -f json` output of a model whose memory.bin is "
                                "--memory written with --lambda 1: compare ln p word by word")
    args = parser.parse_args()
    return compare(args) if args.command == "compare" else check(args)


if __name__ == "__main__":
    sys.exit(main())
