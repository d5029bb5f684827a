#!/usr/bin/env python3
"""`nextword serve` under load against the command line's stdin stream:
the speed goals of the HTTP front end, on one model and the same
phrases.

    python3 tests/bench/serve_load.py [--nextword build/nextword] [--model data/stories]
        [--phrases 2000] [--rounds 3] [--seconds 10] [--serve-args "--threads 1"] [--json OUT]

The phrases are prefixes (1 word to the whole) of short sentences written
below, half of them after another whole sentence, picked with a fixed seed:
the same list for every figure. One server (`nextword serve --port 0`, its
workers by default one per core, plus --serve-args) runs for the whole
benchmark, started before the first round and warmed up, so that its
figures leave out the start and the load; the command line's are given both
ways. In each of the alternating rounds:

  - the stream: `nextword predict -m MODEL -f json < phrases.txt` as a whole
    process (it predicts up to 64 waiting lines in one forward pass):
    phrases/s, with and without its start (the time of the same command on
    an empty stdin);
  - 16 clients: `wrk -t2 -c16 -d SECONDS --latency` POSTing
    {"phrase": ...} to /v1/predict over keep-alive connections, each wrk
    thread cycling over the phrases from its own starting point (a Lua
    script written to a scratch folder): requests/s,
    p50 and p99 latency, and the server's CPU time over the run (cores
    busy: 2.0 is both cores of this machine);
  - one client: `wrk -t1 -c1 -d SECONDS/2 --latency`: p50 and p99 latency.

Every wrk answer must be a 2xx (wrk's "Non-2xx or 3xx responses" line; the
API answers 200 or an error) with no socket error, or the run fails. Before
the rounds, each distinct phrase (up to 300) is asked once over one
keep-alive connection and its answer compared with the stream's record for
it, byte for byte.

Reported as medians over the rounds, in a Markdown table, with the goals:
server phrases/s at least 0.5 of the stream's (its start left out), p99 at
16 connections under 20 ms, p50 for one client under 2 ms. wrk runs on the
same machine as the server (it took 0.04 of a core at 16 connections when
this was written, the server 1.9 of 2); run nothing else meanwhile (the load
average is printed with the figures).
"""
import argparse
import http.client
import json
import os
import random
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from compare_torch import load_average, machine, timed  # noqa: E402

SENTENCES = """\
once upon a time there was a little girl named lily who loved to play in the park
one day a boy named tom found a big red ball under the old tree
the cat sat on the mat and looked at the bird in the sky
mom said that it was time to go home and eat dinner with the family
lily and ben went to the beach with their dog and built a sand castle
the little bird wanted to fly high in the sky but it was too scared
timmy saw a shiny rock in the garden and showed it to his friend
they played together all day and when the sun went down they were very happy
the old man gave the children a box of toys and they said thank you
she smiled at her mom and asked if she could have a cookie
the dog ran after the ball and brought it back to the boy
one morning the sun was bright and the flowers were pretty in the garden
he was sad because he lost his favorite toy at the park
the girl found a small kitten in the rain and took it home
they went to the store to buy some milk and bread for breakfast
the big bear lived in the forest and liked to eat honey
sue wanted to help her dad fix the car in the garage
the friends had a picnic under the big tree near the river
at night the stars were shining and the moon was very big
the teacher read a story about a brave knight and a dragon
he jumped in the puddle and got his new shoes all wet
the little fish swam in the pond with his mom and dad
max and mia built a tall tower with their blocks and it fell down
the princess lived in a big castle on top of a hill
every day the boy walked to school with his best friend
the rabbit hopped through the grass looking for something to eat
she put on her warm coat and went out to play in the snow
the baby laughed when the puppy licked his face
they found a map that showed the way to a hidden treasure
grandma baked a yummy cake for the birthday party
""".splitlines()

LUA = """\
-- Written by tests/bench/serve_load.py: POST /v1/predict, cycling over the phrases.
local bodies = {
%s
}
local n = #bodies
local counter = 0

function setup(thread)
  thread:set("first", counter * 997)
  counter = counter + 1
end

function init(args)
  i = first or 0
end

function request()
  i = i + 1
  return wrk.format("POST", "/v1/predict", {["Content-Type"] = "application/json"},
                    bodies[(i %% n) + 1])
end
"""


def make_phrases(count, sentences=None):
    """count phrases cut from sentences (default: SENTENCES, TinyStories')."""
    sentences = sentences or SENTENCES
    rng = random.Random(25)
    phrases = []
    for _ in range(count):
        words = rng.choice(sentences).split()
        # From a text of its own, at least 3 words: a lone rare name would
        # be an error record, not a prediction.
        least = 1 if sentences is SENTENCES else min(3, len(words))
        phrase = " ".join(words[:rng.randint(least, len(words))])
        if rng.random() < 0.5:  # after a whole sentence: longer contexts
            phrase = rng.choice(sentences) + " . " + phrase
        phrases.append(phrase)
    return phrases


def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def start_server(nextword, model, extra):
    command = [nextword, "serve", "--port", "0", "-m", model, *extra]
    p = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    m = re.search(r"listening on http://([\d.]+):(\d+) \((\d+) workers?\)", line)
    if not m:
        p.kill()
        sys.exit("the server did not start: %s %s" % (line, p.stderr.read()))
    return p, int(m.group(2)), int(m.group(3))


def check_records(port, phrases, stream_out, limit):
    """Each distinct phrase's answer over one keep-alive connection against
    the stream's record for it."""
    records = dict(zip(phrases, stream_out.splitlines()))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    checked = 0
    for phrase, record in list(records.items())[:limit]:
        conn.request("POST", "/v1/predict", json.dumps({"phrase": phrase}),
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        body = r.read().decode()
        if r.status != 200 or body != record + "\n":
            sys.exit("/v1/predict %r: %d %r, not the stream's record %r"
                     % (phrase, r.status, body, record))
        checked += 1
    conn.close()
    return checked


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def milliseconds(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not m:
        raise ValueError("not a wrk duration: " + text)
    return float(m.group(1)) * UNITS[m.group(2)]


def parse_wrk(out):
    """{requests_per_s, p50_ms, p99_ms, requests, non_2xx, socket_errors}."""
    figures = {"non_2xx": 0, "socket_errors": 0}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] in ("50%", "99%"):
            figures["p%s_ms" % fields[0][:-1]] = milliseconds(fields[1])
        elif line.startswith("Requests/sec:"):
            figures["requests_per_s"] = float(fields[1])
        elif re.match(r"\s*\d+ requests in", line):
            figures["requests"] = int(fields[0])
        elif "Non-2xx or 3xx responses:" in line:
            figures["non_2xx"] = int(fields[-1])
        elif "Socket errors:" in line:
            figures["socket_errors"] = sum(int(x) for x in re.findall(r"\d+", line))
    missing = {"requests_per_s", "p50_ms", "p99_ms", "requests"} - set(figures)
    if missing:
        sys.exit("could not read %s from wrk's output:\n%s" % (", ".join(sorted(missing)), out))
    return figures


def cpu_seconds(pid):
    """User and system CPU time of a process so far."""
    with open("/proc/%d/stat" % pid, encoding="utf-8") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wrk(threads, connections, seconds, script, url):
    command = ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "--latency",
               "-s", script, url]
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       check=False)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(command), p.stderr))
    figures = parse_wrk(p.stdout)
    if figures["non_2xx"] or figures["socket_errors"]:
        sys.exit("%s: %d answers were not 2xx, %d socket errors:\n%s"
                 % (" ".join(command), figures["non_2xx"], figures["socket_errors"], p.stdout))
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nextword", default=os.path.join(REPO, "build", "nextword"))
    parser.add_argument("--model", default=os.path.join(REPO, "data", "stories"))
    parser.add_argument("--phrases", type=int, default=2000)
    parser.add_argument("--sentences", help="a text file whose lines (sentences) the phrases "
                        "are cut from, for a model that does not know TinyStories' words")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10, help="of each 16-client wrk run")
    parser.add_argument("--serve-args", default="", help="more options of `nextword serve`")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    nextword, model = os.path.abspath(args.nextword), os.path.abspath(args.model)
    serve_args = shlex.split(args.serve_args)
    one_seconds = max(1, args.seconds // 2)

    tmp = tempfile.TemporaryDirectory()
    sentences = None
    if args.sentences:
        with open(args.sentences, encoding="utf-8") as f:
            sentences = [line.strip() for line in f if len(line.split()) >= 4][:500]
    phrases = make_phrases(args.phrases, sentences)
    phrase_file = os.path.join(tmp.name, "phrases.txt")
    empty_file = os.path.join(tmp.name, "empty.txt")
    with open(phrase_file, "w", encoding="utf-8") as f:
        f.write("\n".join(phrases) + "\n")
    open(empty_file, "w", encoding="utf-8").close()
    script = os.path.join(tmp.name, "predict.lua")
    with open(script, "w", encoding="utf-8") as f:
        f.write(LUA % ",\n".join("  " + lua_string(json.dumps({"phrase": p})) for p in phrases))

    stream = [nextword, "predict", "-m", model, "-f", "json"]
    server, port, workers = start_server(nextword, model, serve_args)
    url = "http://127.0.0.1:%d/v1/predict" % port
    figures = {}

    def add(figure, value):
        figures.setdefault(figure, []).append(value)

    try:
        out = timed(stream, phrase_file)[1]
        checked = check_records(port, phrases, out, 300)
        run_wrk(2, 16, 2, script, url)  # warm-up
        load_before = load_average()
        started = time.perf_counter()
        for _ in range(args.rounds):
            start_s = statistics.median(timed(stream, empty_file)[0] for _ in range(3))
            seconds, out, _ = timed(stream, phrase_file)
            if len(out.splitlines()) != len(phrases):
                sys.exit("the stream printed %d records for %d phrases"
                         % (len(out.splitlines()), len(phrases)))
            add("stream start s", start_s)
            add("stream phrases/s", len(phrases) / seconds)
            add("stream phrases/s, start left out", len(phrases) / (seconds - start_s))
            cpu = cpu_seconds(server.pid)
            w = run_wrk(2, 16, args.seconds, script, url)
            add("16 clients server CPU, cores busy", (cpu_seconds(server.pid) - cpu) / args.seconds)
            add("16 clients requests/s", w["requests_per_s"])
            add("16 clients p50 ms", w["p50_ms"])
            add("16 clients p99 ms", w["p99_ms"])
            add("16 clients requests", w["requests"])
            w = run_wrk(1, 1, one_seconds, script, url)
            add("1 client requests/s", w["requests_per_s"])
            add("1 client p50 ms", w["p50_ms"])
            add("1 client p99 ms", w["p99_ms"])
            add("1 client requests", w["requests"])
        elapsed = time.perf_counter() - started
        load_after = load_average()
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            code = "killed after 30 s"
    if code != 0:
        sys.exit("the server ended with %s on SIGTERM" % code)

    medians = {figure: statistics.median(values) for figure, values in figures.items()}
    ratio = medians["16 clients requests/s"] / medians["stream phrases/s, start left out"]
    ratio_whole = medians["16 clients requests/s"] / medians["stream phrases/s"]
    print("machine  %s" % machine())
    print("model    %s; %d phrases (%d distinct), %d rounds alternating, %.0f s"
          % (model, len(phrases), len(set(phrases)), args.rounds, elapsed))
    print("server   %d workers%s; %d answers equal to the stream's records"
          % (workers, (" (" + args.serve_args + ")") if serve_args else "", checked))
    print("load     %s before, %s after (1, 5, 15 min)" % (load_before, load_after))
    print()
    print("| figure (median of %d rounds) | value | each round |" % args.rounds)
    print("|---|---:|---|")
    for figure, values in figures.items():
        digits = 0 if "/s" in figure or "requests" == figure.split()[-1] else 3
        print("| %s | %.*f | %s |" % (figure, digits, medians[figure],
                                      " ".join("%.*f" % (digits, v) for v in values)))
    print("| server / stream phrases/s | %.2f | (start left out; %.2f with it) |"
          % (ratio, ratio_whole))
    print()
    goals = {
        "server phrases/s >= 0.5 of the stream's": ratio >= 0.5,
        "p99 at 16 connections < 20 ms": medians["16 clients p99 ms"] < 20,
        "p50 for one client < 2 ms": medians["1 client p50 ms"] < 2,
    }
    print("| goal | |")
    print("|---|---|")
    for goal, met in goals.items():
        print("| %s | %s |" % (goal, "met" if met else "NOT met"))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": machine(), "workers": workers, "serve_args": args.serve_args,
                       "figures": figures, "medians": medians, "ratio": ratio,
                       "ratio_with_start": ratio_whole, "goals": goals}, f, indent=2)


if __name__ == "__main__":
    main()
