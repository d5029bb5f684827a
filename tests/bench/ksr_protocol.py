#!/usr/bin/env python3
"""Keystroke savings (KSR) of a word suggester, the protocol shared with
`nextword eval --ksr` (standard library only).

A person types TEXT with the suggester's help. TEXT is split on whitespace
(ASCII: space, tab, newline, vertical tab, form feed, carriage return) into
tokens. A token is leading punctuation + a word + trailing punctuation: the
word runs from the token's first to its last letter-or-digit character
("didn't", "mom-and-dad" are single words); a token without any letter or
digit is all punctuation and has no word. Letter-or-digit: an ASCII letter or
digit, or any code point >= U+00C0 outside General Punctuation
(U+2000..U+206F). Lengths are counted in code points.

For each token in order:
  - its leading punctuation is typed: ki += len(lead);
  - the word: before its first character, and after each typed character but
    the last, the suggester is asked with the text typed so far (the previous
    tokens joined by single spaces, a single space, the leading punctuation
    and the typed part of the word; no space before the very first token) and
    answers with up to k words. When the word is among them (compared
    case-insensitively) one keystroke selects it: ks += 1 and the word is
    complete. Otherwise its next character is typed: ki += 1. A word never
    selected was typed in full;
  - trailing punctuation is typed: ki += len(trail);
  - the space after the token is free when the word was selected and there is
    no trailing punctuation, else typed: ki += 1.
kn = the characters of all tokens + one space per token;
KSR = 1 - (ki + ks) / kn.

    simulate(text, suggest, k=6)          -> dict(ki, ks, kn, ksr, words, selected, queries, ...)
    LineEngine(argv, parse_tsv_pairs)     a program answering one line per query line
    latency_summary(seconds)              -> dict(median_ms, p90_ms, ...)
    tail_tokens(text, n)                  the last n whitespace-separated tokens of text
    write_json(dest, data)                a benchmark's --json OUT ('-': stdout)

Run as a script for a self-check of the protocol on small examples:
    python3 tests/bench/ksr_protocol.py
"""
import collections
import json
import math
import os
import re
import select
import subprocess
import sys
import tempfile
import time

WHITESPACE = " \t\n\v\f\r"
_SPLIT = re.compile("[^" + re.escape(WHITESPACE) + "]+")


def is_letter_or_digit(ch):
    """ASCII letter or digit, or a code point >= U+00C0 outside U+2000..U+206F."""
    o = ord(ch)
    if o < 0x80:
        return ch.isascii() and ch.isalnum()
    return o >= 0xC0 and not 0x2000 <= o <= 0x206F


def tokens_of(text):
    """Whitespace-separated tokens of text (ASCII whitespace only)."""
    return _SPLIT.findall(text)


def split_token(token):
    """(leading punctuation, word, trailing punctuation); a token without a
    letter or digit is (token, "", "")."""
    first = -1
    for i, ch in enumerate(token):
        if is_letter_or_digit(ch):
            first = i
            break
    if first < 0:
        return token, "", ""
    last = first
    for i in range(len(token) - 1, first - 1, -1):
        if is_letter_or_digit(token[i]):
            last = i
            break
    return token[:first], token[first:last + 1], token[last + 1:]


def count_words(text):
    """Number of tokens that contain a word (a letter or digit)."""
    return sum(1 for t in tokens_of(text) if split_token(t)[1])


def tail_tokens(text, n):
    """The last n whitespace-separated tokens of text, cut at a whitespace
    boundary; what follows the last token (trailing whitespace, or the partial
    word being typed) is kept as it is. Looks only at the end of the string,
    so it is cheap however long text is."""
    if n is None or n <= 0:
        return text
    window = 64 * (n + 1)
    while True:
        start = max(0, len(text) - window)
        chunk = text[start:]
        spans = [m.start() for m in _SPLIT.finditer(chunk)]
        # A token cut by the window edge is not whole: drop it unless the
        # window is the whole text.
        if start > 0 and spans and spans[0] == 0 and text[start - 1] not in WHITESPACE:
            spans = spans[1:]
        if len(spans) >= n:
            return chunk[spans[-n]:]
        if start == 0:
            return chunk[spans[0]:] if spans else chunk
        window *= 4


def simulate(text, suggest, k=6, context_tokens=None, progress=None, progress_every=5000,
             max_seconds=None, trace=None):
    """Type `text` with `suggest(typed_so_far) -> [words]` under the protocol.

    context_tokens: when set, `suggest` only gets the last N previous tokens
      (joined by single spaces) before the current one: a tail window for
      engines that look at a few words only. None: the whole text so far.
    progress: callable(message) called every `progress_every` queries.
    max_seconds: stop (at a token boundary) once this much time has passed;
      the result then covers the tokens typed so far and has complete=False.
    trace: a list to append (word, selected_at) per word to, selected_at the
      number of characters typed before the selection, or None.

    Returns dict(ki, ks, kn, ksr, words, selected, queries, tokens, complete,
    seconds)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    toks = tokens_of(text)
    ki = ks = kn = 0
    words = selected = queries = 0
    started = time.perf_counter()
    complete = True
    past_str = ""           # the previous tokens joined by single spaces
    window = collections.deque(maxlen=context_tokens) if context_tokens else None
    for index, token in enumerate(toks):
        if max_seconds is not None and time.perf_counter() - started > max_seconds:
            complete = False
            break
        lead, word, trail = split_token(token)
        kn += len(token) + 1
        ki += len(lead)
        was_selected = False
        if word:
            words += 1
            head = (past_str + " " if index > 0 else "") + lead
            target = word.lower()
            for i in range(len(word)):
                queries += 1
                answer = suggest(head + word[:i])
                if progress is not None and queries % progress_every == 0:
                    progress("%d queries, %d/%d tokens, %.0f s"
                             % (queries, index, len(toks), time.perf_counter() - started))
                if any(w.lower() == target for w in list(answer)[:k]):
                    ks += 1
                    selected += 1
                    was_selected = True
                    if trace is not None:
                        trace.append((word, i))
                    break
                ki += 1
            else:
                if trace is not None:
                    trace.append((word, None))
        ki += len(trail)
        if not (was_selected and not trail):
            ki += 1
        # The text so far, for the next token's queries.
        if window is not None:
            window.append(token)
            past_str = " ".join(window)
        else:
            past_str = past_str + " " + token if index > 0 else token
    ksr = 1.0 - (ki + ks) / kn if kn else 0.0
    return {
        "ki": ki, "ks": ks, "kn": kn, "ksr": ksr,
        "words": words, "selected": selected, "queries": queries,
        "tokens": len(toks) if complete else index, "complete": complete,
        "seconds": time.perf_counter() - started,
    }


def latency_summary(seconds):
    """median and p90 (nearest rank) of per-query latencies, in ms."""
    if not seconds:
        return {"queries": 0, "median_ms": None, "p90_ms": None, "mean_ms": None, "max_ms": None}
    s = sorted(seconds)
    n = len(s)
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    p90 = s[max(0, math.ceil(0.9 * n) - 1)]
    return {"queries": n, "median_ms": median * 1e3, "p90_ms": p90 * 1e3,
            "mean_ms": sum(s) / n * 1e3, "max_ms": s[-1] * 1e3}


def write_json(dest, data, **dumps):
    """A benchmark's --json OUT: data as indented JSON (json.dumps with
    `dumps`) on stdout when dest is '-', else written to the file dest."""
    text = json.dumps(data, indent=2, **dumps)
    if dest == "-":
        print(text)
    else:
        with open(dest, "w") as f:
            f.write(text + "\n")


# --- parsers of one output line (without its '\n') ---------------------------

def parse_tsv_pairs(line):
    """`nextword complete -f tsv`: word<TAB>prob<TAB>word<TAB>prob...; '' = none."""
    if not line:
        return []
    fields = line.split("\t")
    return fields[0::2]


def parse_tabs(line):
    """presage_driver: word<TAB>word...; '' = none."""
    if not line:
        return []
    return [w for w in line.split("\t") if w]


def parse_tabs_words(line):
    """presage_driver, suggestions reduced to their word part (split_token):
    presage keeps characters it does not know as separators, such as curly
    quotes, in its tokens and offers e.g. '“what' after '“w'; selecting it
    enters the word 'what'. Suggestions without a word are dropped, repeats
    removed."""
    out = []
    for w in parse_tabs(line):
        word = split_token(w)[1]
        if word and word not in out:
            out.append(word)
    return out


# --- a program on pipes, its stderr in a temporary file (also lsp_client.py) ---

def file_tail(f, limit):
    """The last `limit` bytes of the binary file f (a child's stderr) as
    text; '' when it cannot be read."""
    try:
        f.flush()
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - limit))
        return f.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def status_soon(proc, wait=1.0):
    """proc's exit status once it ends, waiting up to `wait` seconds; None
    while it runs on."""
    try:
        return proc.wait(wait)
    except subprocess.TimeoutExpired:
        return None


class EngineError(RuntimeError):
    pass


class LineEngine:
    """A program that answers each query line on stdin with exactly one line on
    stdout, flushed. Use as `suggest` for simulate(); measures per-query
    latency (perf_counter from just before the write to the complete answer
    line) in `self.latencies` (seconds).

    tail: when set, only the last `tail` whitespace-separated tokens of each
      query are sent (see tail_tokens); trailing whitespace is always kept.
    timeout: seconds to wait for one answer before giving up (EngineError).
    """

    def __init__(self, argv, parse=parse_tsv_pairs, name=None, tail=None, timeout=120.0,
                 env=None, cwd=None):
        self.argv = list(argv)
        self.parse = parse
        self.name = name or os.path.basename(self.argv[0])
        self.tail = tail
        self.timeout = timeout
        self.latencies = []
        self.queries = 0
        self._buf = b""
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=env, cwd=cwd, bufsize=0)
        self._out = self.proc.stdout.fileno()

    def stderr_tail(self, limit=2000):
        return file_tail(self._stderr, limit)

    def _fail(self, what):
        raise EngineError("%s: %s (exit status %s)\n%s"
                          % (self.name, what, status_soon(self.proc), self.stderr_tail().rstrip()))

    def _readline(self, deadline):
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line, self._buf = self._buf[:nl], self._buf[nl + 1:]
                return line
            left = deadline - time.perf_counter()
            if left <= 0:
                self._fail("no answer within %.0f s" % self.timeout)
            ready, _, _ = select.select([self._out], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                self._fail("closed its output")
            self._buf += chunk

    def query_line(self, text):
        """Send one query (no newline in it), return the raw answer line."""
        if "\n" in text:
            raise ValueError("a query cannot contain a newline")
        if self.tail:
            text = tail_tokens(text, self.tail)
        data = text.encode("utf-8") + b"\n"
        t0 = time.perf_counter()
        try:
            self.proc.stdin.write(data)
        except (BrokenPipeError, OSError):
            self._fail("stopped reading its input")
        line = self._readline(t0 + self.timeout)
        self.latencies.append(time.perf_counter() - t0)
        self.queries += 1
        return line.decode("utf-8", "replace")

    def __call__(self, text):
        return self.parse(self.query_line(text))

    def close(self, wait=5.0):
        """Close stdin, wait a little, then terminate/kill; returns exit status."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(wait)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except (OSError, AttributeError):
                pass
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        self._stderr.close()
        return False


# --- self-check ----------------------------------------------------------------

def _self_check():
    assert split_token('"didn\'t,') == ('"', "didn't", ",")
    assert split_token("mom-and-dad.") == ("", "mom-and-dad", ".")
    assert split_token("--") == ("--", "", "")
    assert split_token("“who") == ("“", "who", "")
    assert split_token("didn’t") == ("", "didn’t", "")
    assert split_token("café!") == ("", "café", "!")
    assert parse_tabs_words("“what\twhat\t--\tlily’s") == ["what", "lily’s"]
    assert is_letter_or_digit("é") and not is_letter_or_digit("’") and not is_letter_or_digit("\u00bf")
    assert tail_tokens("a b  c d ", 2) == "c d "
    assert tail_tokens("a b c d", 2) == "c d"
    assert tail_tokens("a b", 5) == "a b"
    long = " ".join("w%d" % i for i in range(5000)) + " x"
    assert tail_tokens(long, 3) == "w4998 w4999 x"

    # An oracle that never helps: everything is typed, KSR 0.
    text = 'hi, "you" there\nok'
    calls = []
    r = simulate(text, lambda s: calls.append(s) or [], 6)
    assert (r["ki"], r["ks"], r["kn"], r["ksr"]) == (19, 0, 19, 0.0), r
    assert calls == ["", "h", 'hi, "', 'hi, "y', 'hi, "yo', 'hi, "you" ', 'hi, "you" t',
                     'hi, "you" th', 'hi, "you" the', 'hi, "you" ther', 'hi, "you" there ',
                     'hi, "you" there o'], calls
    # An oracle that always offers the word being typed (in capitals): each
    # word costs one selection; punctuation and the spaces after it are typed.
    toks = tokens_of(text)
    ki_expected = sum(len(lead) + len(trail) + (1 if trail else 0)
                      for lead, _, trail in map(split_token, toks))
    assert ki_expected == 5

    def oracle(s):
        n = len(tokens_of(s)) - (0 if s == "" or s[-1] == " " else 1)
        return ["zzz", split_token(toks[n])[1].upper()]
    trace = []
    r = simulate(text, oracle, 6, trace=trace)
    assert (r["ki"], r["ks"], r["kn"], r["queries"], r["selected"]) == (5, 4, 19, 4, 4), r
    assert abs(r["ksr"] - (1 - 9 / 19)) < 1e-12 and trace[1] == ("you", 0)
    # k limits how many suggestions are looked at.
    assert simulate(text, oracle, 1)["ks"] == 0
    # A selection after typing two characters.
    r = simulate("hello", lambda s: ["hello"] if s == "he" else [], 6)
    assert (r["ki"], r["ks"], r["kn"], r["queries"]) == (2, 1, 6, 3), r
    # Punctuation-only tokens: typed, and so is the space after them.
    r = simulate("a -- b", lambda s: ["a", "b"], 6)
    assert (r["ki"], r["ks"], r["kn"], r["words"]) == (3, 2, 7, 2), r
    # A tail window: same counts, shorter queries.
    seen = []
    r2 = simulate(text, lambda s: seen.append(s) or ["hi", "you", "there", "ok"], 6, context_tokens=1)
    assert (r2["ki"], r2["ks"], r2["kn"]) == (5, 4, 19) and seen[-1] == "there ", (r2, seen)
    print("ksr_protocol self-check passed")


if __name__ == "__main__":
    _self_check()
