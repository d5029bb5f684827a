#!/usr/bin/env python3
"""`nextword serve` against hostile clients, through real sockets
(standard-library Python and slowhttptest):

  - slow bodies, first, while a normal POST /v1/predict on a new
    connection is asked every 0.25 s: slowhttptest -B (20), 20 bodies of
    our own at a byte a second, and 100 that send 1 MB of a 1 MiB body at
    once and stop; each is closed by the body deadline (--body-timeout 5),
    5 to 8 s after its header, and each normal request answers 200 within
    1 s;
  - slow headers: 200 connections of our own, each sending one byte of a
    request header a second (and reconnecting when closed), beside
    slowhttptest's 200 slowloris connections (-H), and normal requests as
    above: each slow connection is closed by the header deadline
    (--header-timeout 3), 3 to 6 s after it opened, with no answer; so is
    one that sends nothing, and a keep-alive connection left idle after an
    answer; slowhttptest sees every one of its connections closed (not its
    own time limit);
  - slow readers (slowhttptest -X: 20 connections pipelining GET / 10
    times through a window of a few bytes) do not stop the server, and
    normal requests answer as above;
  - 1,000 malformed requests, each on its own connection: random bytes and
    random lines (not HTTP: 400 and the connection closed), invalid request
    lines and header fields, request smuggling shapes (two lengths, a
    transfer coding that is not chunked: 400 and closed, the rest never read
    as a request), truncated JSON, huge numbers (1e999,
    123456789012345678901234567890), 100,000 levels of nesting, bad UTF-8,
    wrong types, out-of-range values and unknown fields for each endpoint
    (400), a 9 KiB target (414), a 9 KiB header field, 101 fields or 80 KiB
    of header (431), wrong methods (405 with Allow), unknown paths (404),
    10 MB bodies declared, chunked or behind "Expect: 100-continue" (413,
    answered before the body is sent: the server does not read it). Each
    gets exactly one 4xx answer, never a 5xx, with a body {"error": {"code":
    N, "type": "...", "message": "..."}} where N is the status, and the
    server stays up;
  - afterwards /health answers, the server's resident memory (VmRSS) is
    within 10% of what it was after a warm-up, and SIGTERM ends it with 0;
  - clients that ask a long generation (n 100000) and hang up: as many as
    there are workers do not keep a normal request from answering within
    1 s (a second server, killed at the end).

    python3 tests/serve/hostile_test.py BUILD/nextword DATA_DIR [--sanitized]

--sanitized (the AddressSanitizer build) leaves out the memory bound: that
allocator keeps what is freed in its quarantine and does not give it back.

Exits 77 (skipped) when slowhttptest is not installed. Every failure is
printed with the request that caused it; the exit code is 1 if any.
"""
import http.client
import json
import os
import random
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BINARY = DATA = None
SANITIZED = False  # --sanitized: the AddressSanitizer build
HEADER_TIMEOUT, BODY_TIMEOUT = 3, 5
MAX_BODY = 1 << 20
CASES = 1000
failures = []


def fail(message):
    failures.append(message)
    print("FAIL " + message, flush=True)


class Server:
    """`nextword serve --port 0 -m DATA/default ARGS...`; its stderr is kept."""

    def __init__(self, *args):
        self.args = args
        self.process = subprocess.Popen(
            [BINARY, "serve", "--port", "0", "-m", os.path.join(DATA, "stories"), *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        line = self.process.stderr.readline().decode(errors="replace")
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+) ", line)
        if not match:
            self.process.kill()
            sys.exit("no listening line: " + line)
        self.port = int(match.group(1))
        self.stderr = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.process.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def alive(self):
        return self.process.poll() is None

    def rss_kib(self):
        with open("/proc/%d/status" % self.process.pid, encoding="utf-8") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def death(self):
        return "exit %s, stderr %r" % (self.process.returncode, "".join(self.stderr)[-500:])


def normal(port, phrase="once upon a", timeout=5):
    """(seconds, status) of a POST /v1/predict on a new connection; status
    is the error's text when there was no answer."""
    start = time.perf_counter()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request("POST", "/v1/predict", json.dumps({"phrase": phrase}),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        c.close()
        status = r.status
        if status == 200 and b'"predictions"' not in body:
            status = "200 without predictions"
    except OSError as e:
        status = "%s: %s" % (type(e).__name__, e)
    return time.perf_counter() - start, status


class Prober(threading.Thread):
    """Normal requests every `every` seconds until stopped: (seconds, status);
    and the server's largest VmRSS meanwhile."""

    def __init__(self, server, every=0.25):
        super().__init__(daemon=True)
        self.server, self.every, self.results, self.rss = server, every, [], 0
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            self.results.append(normal(self.server.port))
            try:
                self.rss = max(self.rss, self.server.rss_kib())
            except OSError:  # ended: found by the caller
                pass
            self.stopping.wait(self.every)

    def stop_and_check(self, phase):
        self.stopping.set()
        self.join()
        slow = [(round(s, 3), st) for s, st in self.results if st != 200 or s >= 1.0]
        seconds = [s for s, _ in self.results]
        print("  %s: %d normal requests meanwhile, slowest %.3f s; VmRSS up to %d KiB"
              % (phase, len(seconds), max(seconds) if seconds else float("nan"), self.rss),
              flush=True)
        if len(seconds) < 5:
            fail("%s: only %d normal requests were made" % (phase, len(seconds)))
        if slow:
            fail("%s: normal POST /v1/predict not answered 200 within 1 s: %s" % (phase, slow[:10]))


# ---------------------------------------------------------------- slow clients

SLOW_HEADER = (b"POST /v1/predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"X-Slow: " + b"a" * 4000)


class Slow:
    """A socket that sends `data` a byte a second after `head` (sent at once)."""

    def __init__(self, port, head, data, kind):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.since = time.monotonic()  # the deadline starts after this
        self.kind, self.data, self.sent, self.answer = kind, data, 0, b""
        if head:
            self.sock.sendall(head)
        self.sock.setblocking(False)

    def tick(self, now):
        if self.sent < len(self.data) and now >= self.since + self.sent:
            try:
                self.sock.send(self.data[self.sent:self.sent + 1])
                self.sent += 1
            except OSError:
                pass


def slow_clients(port, seconds, count, head, data, kind, extra=()):
    """Keeps `count` Slow sockets open for `seconds`, each reopened when the
    server closes it; returns [(kind, lifetime since `since`, answer bytes)]
    of those closed, and the number still open at the end."""
    sel = selectors.DefaultSelector()
    end = time.monotonic() + seconds

    def add(slow):
        sel.register(slow.sock, selectors.EVENT_READ, slow)

    for _ in range(count):
        add(Slow(port, head, data, kind))
    for make in extra:
        add(make())
    closed = []
    while time.monotonic() < end:
        now = time.monotonic()
        for key in list(sel.get_map().values()):
            key.data.tick(now)
        for key, _ in sel.select(timeout=0.05):
            slow = key.data
            try:
                chunk = slow.sock.recv(65536)
            except OSError:
                chunk = b""
            if chunk:
                slow.answer += chunk
                continue
            sel.unregister(slow.sock)
            slow.sock.close()
            closed.append((slow.kind, time.monotonic() - slow.since, slow.answer))
            if slow.kind == kind:
                add(Slow(port, head, data, kind))
    still = len(sel.get_map())
    for key in list(sel.get_map().values()):
        key.data.sock.close()
    sel.close()
    return closed, still


def idle_after_answer(port):
    """A keep-alive connection that asked /health once and then waits."""
    s = Slow(port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", b"", "idle after an answer")
    s.sock.setblocking(True)
    s.sock.settimeout(5)
    got = b""
    while b"\r\n\r\n" not in got or not got.endswith(b"}\n"):
        got += s.sock.recv(4096)
    s.sock.setblocking(False)
    s.since = time.monotonic()
    return s


def check_deadline(closed, low, high, what):
    bad = [(kind, round(t, 2), answer[:60]) for kind, t, answer in closed
           if not low <= t <= high or (answer and kind != "idle after an answer")]
    kinds = sorted(set(kind for kind, _, _ in closed))
    times = [t for _, t, _ in closed]
    print("  %s: %d connections closed (%s), after %.2f to %.2f s"
          % (what, len(closed), ", ".join(kinds), min(times), max(times)), flush=True)
    if bad:
        fail("%s: connections not closed %g to %g s after they began, or answered: %s (of %d)"
             % (what, low, high, bad[:8], len(bad)))
    return kinds


def slowhttptest(args, port, path, scratch, name):
    """Runs slowhttptest; returns (exit status line, [(second, closed,
    pending, connected)]) from its output and CSV report."""
    prefix = os.path.join(scratch, name)
    p = subprocess.run(["slowhttptest", *args, "-g", "-o", prefix, "-p", "3",
                        "-u", "http://127.0.0.1:%d%s" % (port, path)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                       check=False)
    out = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout)
    status = re.search(r"Exit status:\s*(.*)", out)
    rows = []
    try:
        with open(prefix + ".csv", encoding="utf-8") as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split(",")
                rows.append(tuple(int(x) for x in fields[:4]))
    except (OSError, ValueError):
        pass
    return (status.group(1).strip() if status else "no exit status: " + out[-300:]), rows


def check_slowhttptest(result, what, connections, within):
    status, rows = result
    connected = max((r[3] for r in rows), default=0)
    first = next((r[0] for r in rows if r[3] > 0), None)
    last = max((r[0] for r in rows if r[3] > 0), default=None)
    print("  slowhttptest %s: %s; at most %d connected, seconds %s to %s"
          % (what, status, connected, first, last), flush=True)
    if connected < connections * 0.9:
        fail("slowhttptest %s: only %d of %d connections were made"
             % (what, connected, connections))
    if status != "No open connections left":
        fail("slowhttptest %s: the server did not close its connections: %s" % (what, status))
    elif first is not None and last - first > within:
        fail("slowhttptest %s: connections stayed open %d s, more than %d"
             % (what, last - first, within))


def slow_headers(server, scratch):
    port = server.port
    print("slow headers: 200 of ours at a byte a second, 200 of slowhttptest -H", flush=True)
    prober = Prober(server)
    prober.start()
    results = []

    def attack():
        for i in range(2):
            results.append(slowhttptest(["-H", "-c", "200", "-r", "200", "-i", "1", "-x", "1",
                                         "-l", "20", "-t", "POST"], port, "/v1/predict",
                                        scratch, "headers%d" % i))

    t = threading.Thread(target=attack, daemon=True)
    t.start()
    idle = [lambda: Slow(port, b"", b"", "idle") for _ in range(5)]
    after = [lambda: idle_after_answer(port) for _ in range(5)]
    closed, still = slow_clients(port, 10, 200, b"", SLOW_HEADER, "a header byte a second",
                                 idle + after)
    t.join()
    prober.stop_and_check("slow headers")
    kinds = check_deadline(closed, HEADER_TIMEOUT - 0.05, HEADER_TIMEOUT + 3, "header deadline")
    for kind in ("a header byte a second", "idle", "idle after an answer"):
        if kind not in kinds:
            fail("header deadline: no %r connection was closed within 10 s" % kind)
    if len(closed) < 400:
        fail("header deadline: only %d slow connections were closed in 10 s" % len(closed))
    for i, result in enumerate(results):
        check_slowhttptest(result, "-H (run %d)" % (i + 1), 200, HEADER_TIMEOUT + 3)


def slow_bodies(server, scratch):
    port = server.port
    print("slow bodies: 20 of slowhttptest -B, 20 of ours at a byte a second, 100 that send "
          "1 MB of a 1 MiB body and stop", flush=True)
    prober = Prober(server)
    prober.start()
    results = []
    t = threading.Thread(target=lambda: results.append(slowhttptest(
        ["-B", "-c", "20", "-r", "20", "-i", "1", "-x", "4", "-s", "8192", "-l", "20"],
        port, "/v1/predict", scratch, "bodies")), daemon=True)
    t.start()
    head = (b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 4000\r\n\r\n")
    big = (b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n{\"phrase\": \"" % MAX_BODY + b"a" * 1000000)
    stalled = [lambda: Slow(port, big, b"", "1 MB then nothing") for _ in range(100)]
    closed, still = slow_clients(port, 8, 20, head, b'{"phrase": "' + b"a" * 3000, "body",
                                 stalled)
    t.join()
    prober.stop_and_check("slow bodies")
    kinds = check_deadline(closed, BODY_TIMEOUT - 0.05, BODY_TIMEOUT + 3, "body deadline")
    if kinds != ["1 MB then nothing", "body"]:
        fail("body deadline: only %s connections were closed within 8 s" % kinds)
    check_slowhttptest(results[0], "-B", 20, BODY_TIMEOUT + 3)


def slow_readers(server, scratch):
    port = server.port
    print("slow readers: 20 of slowhttptest -X, GET / pipelined 10 times", flush=True)
    prober = Prober(server)
    prober.start()
    status, rows = slowhttptest(["-X", "-c", "20", "-r", "20", "-w", "1", "-y", "8", "-n", "1",
                                 "-z", "8", "-k", "10", "-l", "8"], port, "/", scratch, "reads")
    prober.stop_and_check("slow readers")
    print("  slowhttptest -X: %s; at most %d connected"
          % (status, max((r[3] for r in rows), default=0)), flush=True)
    if not server.alive():
        fail("the server ended during the slow clients: " + server.death())


# ------------------------------------------------------------ malformed requests

def post(body, path="/v1/predict", extra=b""):
    if isinstance(body, str):
        body = body.encode()
    if isinstance(path, str):
        path = path.encode()
    return (b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + extra + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def get(path, method=b"GET", extra=b""):
    return method + b" " + path + b" HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n"


class Case:
    """One request on its own connection and what must come back.

    statuses: the answer's status must be one of them (all 4xx);
    close: the server must close the connection after it (Connection:
    close);  body: bytes sent after `data` by another thread (big bodies);
    early: `data` is a header whose answer must come within 1 s while the
    client sends nothing more; may_close: closing with no answer is right
    too (the client went away mid-request)."""

    def __init__(self, family, name, data, statuses, close=False, body=None, early=False,
                 may_close=False, head=False):
        self.family, self.name, self.data, self.statuses = family, name, data, set(statuses)
        self.close, self.body, self.early, self.may_close = close, body, early, may_close
        self.head = head


FOUR = set(range(400, 500))


def parse_answers(raw, head):
    """[(status, {lower name: value}, body)] and bytes that are not an answer."""
    answers = []
    while raw:
        end = raw.find(b"\r\n\r\n")
        if end < 0:
            break
        lines = raw[:end].decode("latin-1").split("\r\n")
        m = re.fullmatch(r"HTTP/1\.1 (\d{3}) .*", lines[0])
        if not m:
            break
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = 0 if head else int(headers.get("content-length", "0"))
        body = raw[end + 4:end + 4 + length]
        if len(body) < length:
            break
        if m.group(1) != "100":  # 100 Continue: an interim answer
            answers.append((int(m.group(1)), headers, body))
        raw = raw[end + 4 + length:]
    return answers, raw


def exchange(port, case):
    """(bytes received until the server closed, seconds to the first byte,
    error) for one case."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    start = time.perf_counter()
    first = None
    error = None
    sender = None
    try:
        s.sendall(case.data)
        if case.body is not None:
            def send_body():
                try:
                    for i in range(0, len(case.body), 65536):
                        s.sendall(case.body[i:i + 65536])
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            sender = threading.Thread(target=send_body, daemon=True)
            sender.start()
        elif not case.early:
            s.shutdown(socket.SHUT_WR)
    except OSError as e:
        error = "send: %s" % e
    got = b""
    try:
        while True:
            chunk = s.recv(1 << 16)
            if first is None:
                first = time.perf_counter() - start
            if not chunk:
                break
            got += chunk
    except socket.timeout:
        error = "no end within 10 s"
    except OSError as e:
        if not got:
            error = "recv: %s" % e
    s.close()
    if sender:
        sender.join(timeout=10)
    return got, first, error


def check_case(port, case):
    """The problems with the server's answer to `case` (empty: right)."""
    raw, first, error = exchange(port, case)
    answers, rest = parse_answers(raw, case.head)
    problems = []
    if not answers:
        if case.may_close and not raw and error is None:
            return []
        return ["no answer (%s): %r" % (error or "closed", raw[:200])]
    status, headers, body = answers[0]
    if len(answers) > 1 or rest:
        problems.append("%d answers %s and %d more bytes: the rest of the request was read as "
                        "another" % (len(answers), [a[0] for a in answers], len(rest)))
    if status not in case.statuses:
        problems.append("status %d, not %s" % (status, "4xx" if case.statuses == FOUR
                                               else sorted(case.statuses)))
    if status >= 500:
        problems.append("a 5xx: %r" % body[:300])
    if headers.get("content-type") != "application/json":
        problems.append("Content-Type %r" % headers.get("content-type"))
    if case.close and "close" not in headers.get("connection", "").lower():
        problems.append("no \"Connection: close\" though the rest of the request is not read")
    if case.early and (first is None or first > 1.0):
        problems.append("answered after %s s, not before the body was sent" % first)
    if status == 405 and not headers.get("allow"):
        problems.append("405 without Allow")
    if not case.head:
        try:
            doc = json.loads(body)
            e = doc["error"]
            if (set(doc) != {"error"} or set(e) != {"code", "type", "message"}
                    or e["code"] != status or not isinstance(e["type"], str) or not e["type"]
                    or not isinstance(e["message"], str)):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            problems.append("body is not {\"error\": {\"code\": %d, \"type\", \"message\"}}: %r"
                            % (status, body[:200]))
    return problems


def endpoint_cases():
    """Wrong types, out-of-range values, unknown and missing fields for each
    endpoint (400)."""
    text_fields = {"predict": "phrase", "attention": "phrase", "complete": "text", "score": "text",
                   "lens": "phrase", "trace": "phrase", "attribute": "phrase",
                   "generate": "phrase"}
    whole = ['"3"', "1.5", "true", "[]", "{}", "-1", "1e999", "-1e999",
             "123456789012345678901234567890", "-123456789012345678901234567890",
             "18446744073709551616", "1e308"]
    number = ['"0.5"', "true", "[]", "{}", "-1", "1e999", "-1e999", "1e308",
              "123456789012345678901234567890"]
    flag = ['"true"', "1", "0", "[]", "{}", "null1"]
    string = ["1", "true", "[]", "{}", "1e999"]
    fields = {
        "predict": {"k": whole + ["0"], "explain": flag},
        "attention": {"k": whole + ["0"], "format": string + ['"svg"', '"JSON"'], "word": string},
        "complete": {"k": whole + ["0"], "no_repeat": flag, "learn": flag,
                     "learn_weight": number + ["1.5"], "learn_decay": number + ["2"],
                     "learn_context_weight": number, "learn_context_sharpness": number + ["1001"],
                     "learn_temperature": number + ["0.01", "0"]},
        "score": {},
        "lens": {"k": whole + ["0"], "mid": flag, "all_positions": flag},
        "trace": {"only": string[:2] + ["[1]", '["a", 2]', "{}"]},
        "attribute": {"word": string},
        "generate": {"n": whole + ["0", "100001"], "temperature": number + ["101"],
                     "top_k": whole[:8] + ["16777217"], "top_p": number + ["1.01"],
                     "no_repeat_ngram": whole + ["65"], "presence_penalty": number + ["101"],
                     "repeat_window": whole + ["0", "1048577"], "greedy": flag,
                     "seed": ['"1"', "1.5", "-1", "true", "1e999", "18446744073709551616",
                              "123456789012345678901234567890"],
                     "stream": flag},
    }
    cases = []
    for endpoint, one in text_fields.items():
        path = "/v1/" + endpoint
        many = one + "s"
        ok = '"%s": "once upon a"' % one
        for field, values in fields[endpoint].items():
            for value in values:
                cases.append(Case("wrong type or range", "%s %s %s" % (endpoint, field, value),
                                  post("{%s, \"%s\": %s}" % (ok, field, value), path), {400}))
        bodies = ['{"%s": 1}' % one, '{"%s": null}' % one, '{"%s": ["a"]}' % one,
                  '{"%s": {"a": 1}}' % one, "{}", '{%s, "bogus": 1}' % ok,
                  '{%s, "%s": 1}' % (ok, one.capitalize()), '{"%s ": "a"}' % one,
                  '{%s, "": 1}' % ok, "[]", '"a"', "1", "null", "true", "",
                  '{"%s": "%s"}' % (one, "a" * 70000)]
        if endpoint == "generate":
            bodies += ['{"phrases": ["a"]}']
        else:
            bodies += ['{"%s": "a"}' % many, '{"%s": [1]}' % many, '{"%s": ["a", null]}' % many,
                       '{"%s": [["a"]]}' % many, '{"%s": "a", "%s": ["b"]}' % (one, many),
                       '{"%s": %s}' % (many, json.dumps(["a"] * 1025)),
                       '{"%s": ["a", "%s"]}' % (many, "b" * 70000)]
        for body in bodies:
            cases.append(Case("wrong type or field", "%s %s" % (endpoint, body[:60]),
                              post(body, path), {400}))
    return cases


def utf8_cases():
    bad = [b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
           b"\xf8\x88\x80\x80\x80", b"\x80", b"a\xc3", b"\xe2\x82", b"\xc3\x28"]
    escaped = [b"\\ud800", b"\\udc00", b"\\ud800\\u0041", b"\\uZZZZ", b"\\x41", b"\\"]
    cases = []
    for b in bad + escaped:
        for template, path in ((b'{"phrase": "once %s upon"}', "/v1/predict"),
                               (b'{"phrases": ["a", "%s"]}', "/v1/predict"),
                               (b'{"text": "%s"}', "/v1/complete"),
                               (b'{"phrase": "a", "word": "%s"}', "/v1/attribute"),
                               (b'{"phr%sase": "a"}', "/v1/predict")):
            cases.append(Case("bad UTF-8", "%s %r" % (path, template % b), post(template % b, path),
                              {400}))
    for b in bad:
        cases.append(Case("bad UTF-8", "target /%r" % b, get(b"/v1/" + b), {404}))
    return cases


def http_cases():
    """Request lines and headers that are not HTTP/1.1, and smuggling shapes."""
    close = [
        b"GET", b"GET /", b"GET / HTTP/1.1", b"GET / HTTP/1.1\r\n", b" GET / HTTP/1.1\r\n\r\n",
        b"\r\n\r\n", b"GET / HTTP/1.1 x\r\n\r\n", b"GET /  HTTP/1.1\r\n\r\n",
        b"GET\t/\tHTTP/1.1\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"GET / HTTP/1.1\n\n",
        b"GET / HTTP/1\r\n\r\n", b"GET / http/1.1\r\n\r\n", b"GET /\r\n\r\n", b"GET\r\n\r\n",
        b"G\x00ET / HTTP/1.1\r\n\r\n", b"GET /he\x00alth HTTP/1.1\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost x\r\n\r\n", b"GET /health HTTP/1.1\r\n Host: x\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost : x\r\n\r\n", b"GET /health HTTP/1.1\r\n: x\r\n\r\n",
        b"GET /health HTTP/1.1\r\nX-\x01: a\r\n\r\n", b"GET /health HTTP/1.1\r\nX: a\x00b\r\n\r\n",
        b"GET /health HTTP/1.1\r\nX: a\rb\r\n\r\n",
        b"GET /health HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        b"GET /health HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        b"GET /health HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
        b"GET /health HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n",
        b"POST /v1/predict HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n{}",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
        b"0\r\n\r\n",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nGET /health HTTP/1.1\r\n\r\n",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"
        b"0\r\n\r\nGET /health HTTP/1.1\r\n\r\n",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n{\"phrase\": \"a\"}",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"FFFFFFFFFFFFFFFFFFFF\r\nabc\r\n0\r\n\r\n",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nabcdefgh\r\n0\r\n\r\n",
        b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(256)),
        b"SSH-2.0-OpenSSH_9.2p1\r\n", b"\x00" * 64, b"\xff" * 64, b"{\"phrase\": \"a\"}",
    ]
    cases = [Case("not HTTP/1.1", repr(d[:70]), d, {400}, close=True) for d in close]
    # A body that ends early: the client went away; nothing or a 400 is right.
    for d in (post('{"phrase": "a"}')[:-3],
              b"POST /v1/predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"):
        cases.append(Case("truncated body", repr(d[-40:]), d, {400}, close=True, may_close=True))
    return cases


def limit_cases():
    ten = 10 * 1000 * 1000
    big = b'{"phrase": "' + b"a" * (ten - 14) + b'"}'
    chunked = b"".join(b"%x\r\n%s\r\n" % (65536, big[i:i + 65536])
                       for i in range(0, ten - ten % 65536, 65536)) + b"0\r\n\r\n"
    head = b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    cases = []
    for i in range(3):
        cases += [
            Case("10 MB body", "declared, sent", head + b"Content-Length: %d\r\n\r\n" % len(big),
                 {413}, close=True, body=big),
            Case("10 MB body", "chunked, sent", head + b"Transfer-Encoding: chunked\r\n\r\n",
                 {413}, close=True, body=chunked),
            Case("10 MB body", "declared, not sent: answered first",
                 head + b"Content-Length: %d\r\n\r\n" % ten, {413}, close=True, early=True),
            Case("10 MB body", "Expect: 100-continue",
                 head + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % ten, {413},
                 close=True, early=True),
            Case("10 MB body", "to an unknown path, not sent",
                 b"POST /v1/nope HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % ten, {404, 413},
                 close=True, early=True),
            Case("10 MB body", "to GET /health, not sent",
                 b"GET /health HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % ten, {405, 413},
                 close=True, early=True),
            Case("max body", "--max-body + 1 declared",
                 head + b"Content-Length: %d\r\n\r\n" % (MAX_BODY + 1), {413}, close=True,
                 early=True),
            Case("max body", "a 1 MiB phrase (--max-body exactly)",
                 post(b'{"phrase": "' + b"a " * ((MAX_BODY - 14) // 2) + b'"}'), {400}),
        ]
    long_target = b"/health?" + b"a" * 9216
    cases += [
        Case("URI", "9 KiB target", get(long_target), {414}, close=True),
        Case("URI", "9 KiB target, POST", b"POST /v1/predict?" + b"a" * 9216
             + b" HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", {414}, close=True),
        Case("URI", "64 KiB target", get(b"/" + b"a" * 65536), {414}, close=True),
        Case("header", "9 KiB field", get(b"/health", extra=b"X-Big: " + b"a" * 9216 + b"\r\n"),
             {431}, close=True),
        Case("header", "9 KiB field name", get(b"/health", extra=b"X" * 9216 + b": a\r\n"),
             {431}, close=True),
        Case("header", "101 fields",
             get(b"/health", extra=b"".join(b"X-%d: a\r\n" % i for i in range(101))), {431},
             close=True),
        Case("header", "1000 fields",
             get(b"/health", extra=b"".join(b"X-%d: a\r\n" % i for i in range(1000))), {431},
             close=True),
        Case("header", "80 KiB in 20 fields",
             get(b"/health", extra=b"".join(b"X-%d: %s\r\n" % (i, b"a" * 4000) for i in range(20))),
             {431}, close=True),
    ]
    return cases


def route_cases():
    cases = []
    for method in (b"GET", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"FOO", b"get",
                   b"post"):
        for path in (b"/v1/predict", b"/v1/generate", b"/v1/complete"):
            cases.append(Case("wrong method", (method + b" " + path).decode(), get(path, method),
                              {405}))
    cases.append(Case("wrong method", "HEAD /v1/predict", get(b"/v1/predict", b"HEAD"), {405},
                      head=True))
    for method in (b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS"):
        for path in (b"/", b"/health", b"/v1/model", b"/metrics"):
            cases.append(Case("wrong method", (method + b" " + path).decode(),
                              method + b" " + path + b" HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
                              {405}))
    for path in (b"/v2/predict", b"/v1/predict/", b"/V1/predict", b"/v1/Predict", b"/v1/", b"/v1",
                 b"//health", b"/health/", b"/favicon.ico", b"/v1/predict%2f", b"/../etc/passwd",
                 b"/v1/../health", b"/index.html", b"/v1/predictx", b"/v1/predict;x", b"*",
                 b"/%00", b"/v1/model/x", b"/metrics/", b"/.env"):
        cases.append(Case("unknown path", "GET " + path.decode(), get(path), {404}))
        cases.append(Case("unknown path", "POST " + path.decode(), post('{"phrase": "a"}', path),
                          {404}))
    return cases


def json_cases():
    cases = []
    bodies = ['{"phrase": "once upon a", "k": 3}', '{"phrases": ["a b", "c"], "explain": true}',
              '{"phrase": "the cat", "k": 1}']
    for body in bodies:
        for cut in range(len(body)):
            cases.append(Case("truncated JSON", body[:cut], post(body[:cut]), {400}))
    for body in ('{"text": "once upon a ti", "k": 3, "learn": true}',):
        for cut in range(len(body)):
            cases.append(Case("truncated JSON", body[:cut], post(body[:cut], "/v1/complete"),
                              {400}))
    deep = 100000
    for body, name in (("[" * deep + "]" * deep, "100,000 arrays"),
                       ("[" * deep, "100,000 arrays, unclosed"),
                       ('{"phrase": ' + "[" * deep + "]" * deep + "}", "100,000 arrays in a field"),
                       ('{"a": ' * deep + "1" + "}" * deep, "100,000 objects"),
                       ('{"phrases": ["a", ' + "{" * deep, "100,000 objects, unclosed"),
                       ("[" * 33 + "]" * 33, "33 arrays"),
                       ('{"phrase": "' + "[" * deep + '"}', "100,000 [ in a string")):
        cases.append(Case("deep nesting", name, post(body), {400}))
    for body in ('{"phrase": "a"}{"phrase": "b"}', '{"phrase": "a",}', "{'phrase': 'a'}",
                 '{"phrase": "a" "k": 3}', '{phrase: "a"}', '{"phrase": "a", "k": 03}',
                 '{"phrase": "a", "k": +3}', '{"phrase": "a", "k": NaN}',
                 '{"phrase": "a", "k": Infinity}', '{"phrase": "a", "k": 0x10}',
                 '{"phrase": "a\x01"}', '{"phrase": "a\n"}',
                 '{"phrase": "a"} x', "/* */ {\"phrase\": \"a\"}", '{"phrase": "a", "k": 1.}',
                 '{"phrase": "a", "k": .5}', '{"phrase": "a", "k": 1e}', '{"phrase": "a", "k": -}',
                 '{"phrase": "a", "k": 1e999}', '{"phrase": "a", "x": -1e999}',
                 '{"phrase": "a", "k": 123456789012345678901234567890}',
                 '{"phrase": "a", "k": 1' + "0" * 400 + "}", '{"phrase": "a", "k": 1e-999}'):
        cases.append(Case("bad JSON", body[:60], post(body), {400}))
    return cases


def random_cases(count, rng):
    """Bytes that are not HTTP: random bytes, random printable lines, and a
    request line followed by random header lines."""
    cases = []
    printable = bytes(range(32, 127))
    for i in range(count):
        kind = i % 3
        if kind == 0:
            data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 2000)))
            data = data.lstrip(b"\r\n") or b"\x00"
        elif kind == 1:
            lines = [bytes(rng.choice(printable) for _ in range(rng.randint(1, 120)))
                     for _ in range(rng.randint(1, 8))]
            data = b"\r\n".join(lines) + b"\r\n\r\n"
            if re.match(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP/1\.[01]\r\n", data):
                data = b"\x01" + data
        else:
            lines = [bytes(rng.choice(printable + b"\x00\x7f\t") for _ in range(rng.randint(1, 80)))
                     for _ in range(rng.randint(1, 6))]
            data = b"POST /v1/predict HTTP/1.1\r\n" + b"\r\n".join(lines) + b"\r\n\r\n"
        cases.append(Case("random", "%d bytes %r" % (len(data), data[:40]), data,
                          {400} if kind < 2 else FOUR, close=kind < 2))
    return cases


def malformed_phase(server, rng):
    cases = (http_cases() + limit_cases() + route_cases() + json_cases() + utf8_cases()
             + endpoint_cases())
    cases += random_cases(max(0, CASES - len(cases)), rng)
    print("malformed requests: %d" % len(cases), flush=True)
    counts = {}
    started = time.perf_counter()
    for case in cases:
        counts[case.family] = counts.get(case.family, 0) + 1
        problems = check_case(server.port, case)
        if not server.alive():
            fail("%s %s: the server ended: %s" % (case.family, case.name, server.death()))
            return
        for p in problems:
            fail("%s %s: %s" % (case.family, case.name, p))
    print("  %s in %.1f s" % (", ".join("%s %d" % kv for kv in counts.items()),
                              time.perf_counter() - started), flush=True)


# ---------------------------------------------------------------------- main

def warm_up(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    phrases = ["once upon a", "lily and her mom went to the", "the dog", "she was very"]
    for i in range(40):
        c.request("POST", "/v1/predict", json.dumps({"phrase": phrases[i % 4]}))
        c.getresponse().read()
    for path, body in (("/v1/predict", {"phrases": phrases * 16}),
                       ("/v1/score", {"texts": phrases * 16}),
                       ("/v1/complete", {"text": "once upon a ti"}),
                       ("/v1/attention", {"phrase": "once upon a"}),
                       ("/v1/generate", {"phrase": "once upon a", "n": 20}),
                       ("/v1/predict", {"phrase": "a " * 30000})):
        c.request("POST", path, json.dumps(body))
        c.getresponse().read()
    for path in ("/", "/v1/model", "/health", "/metrics"):
        c.request("GET", path)
        c.getresponse().read()
    c.close()
    for _ in range(20):
        normal(port)


def abandoned_generations(workers):
    """Clients that ask a long generation and hang up."""
    print("abandoned generations: %d clients ask generate n 100000 and hang up" % workers,
          flush=True)
    server = Server("-t", str(workers))
    try:
        for _ in range(workers):
            s = socket.create_connection(("127.0.0.1", server.port))
            s.sendall(post('{"phrase": "once upon a", "n": 100000}', "/v1/generate"))
            time.sleep(0.2)
            s.close()
        time.sleep(0.3)
        seconds, status = normal(server.port, timeout=3)
        print("  a normal request then: %s after %.3f s" % (status, seconds), flush=True)
        if status != 200 or seconds >= 1.0:
            fail("abandoned generations: %d clients asked POST /v1/generate {\"n\": 100000} and "
                 "closed their connections; a normal POST /v1/predict then got %r after %.2f s "
                 "(the workers go on generating for nobody)" % (workers, status, seconds))
    finally:
        server.process.kill()
        server.process.wait()


def attacks(server, scratch, rng):
    warm_up(server.port)
    before = server.rss_kib()
    print("after the warm-up: VmRSS %d KiB" % before, flush=True)
    # Bodies first: 100 MB of them, freed, while the heap is young.
    for phase in (slow_bodies, slow_headers, slow_readers):
        if server.alive():
            phase(server, scratch)
        if server.alive():
            print("  VmRSS %d KiB after it" % server.rss_kib(), flush=True)
    if server.alive():
        malformed_phase(server, rng)
    if not server.alive():
        fail("the server is not up after the attacks: " + server.death())
        return
    print("  VmRSS %d KiB after it" % server.rss_kib(), flush=True)
    time.sleep(1)
    for _ in range(20):
        normal(server.port)
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    c.request("GET", "/health")
    r = c.getresponse()
    if r.status != 200 or r.read() != b'{"status":"ok"}\n':
        fail("/health after the attacks: %d" % r.status)
    c.close()
    after = server.rss_kib()
    print("after the attacks and 20 normal requests: VmRSS %d KiB (%+.1f%%)"
          % (after, 100 * (after / before - 1)), flush=True)
    if SANITIZED:
        print("  (not compared: AddressSanitizer keeps freed memory in its quarantine; "
              "LeakSanitizer checks the server at its exit instead)")
    elif abs(after - before) > 0.1 * before:
        fail("resident memory: %d KiB after the warm-up, %d KiB after the attacks: more than "
             "10%% apart" % (before, after))


def main():
    global BINARY, DATA, SANITIZED
    args = [a for a in sys.argv[1:] if a not in ("--sanitized", "")]  # "": the flag off in ctest
    if len(args) != 2:
        sys.exit("usage: hostile_test.py BUILD/nextword DATA_DIR [--sanitized]")
    BINARY, DATA = os.path.abspath(args[0]), os.path.abspath(args[1])
    SANITIZED = "--sanitized" in sys.argv
    if not shutil.which("slowhttptest"):
        print("skipped: slowhttptest is not installed (apt-get install slowhttptest)")
        sys.exit(77)
    started = time.perf_counter()
    scratch = tempfile.TemporaryDirectory()
    server = Server("--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT),
                    "-t", "2")
    try:
        attacks(server, scratch.name, random.Random(25))
    finally:
        if server.alive():
            server.process.send_signal(signal.SIGTERM)
            try:
                code = server.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.process.kill()
                code = "no exit within 30 s of SIGTERM (killed)"
            if code != 0:
                fail("SIGTERM: the server ended with %s" % code)
    abandoned_generations(2)
    print("%d failures; %.0f s" % (len(failures), time.perf_counter() - started))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
