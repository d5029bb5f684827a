#!/usr/bin/env python3
"""A small LSP 3.17 client over real pipes, for the benchmarks and tests of
`nextword lsp` (standard library only).

    client = LspClient([NEXTWORD, "lsp", "-m", MODEL], encoding="utf-16")
    client.initialize()                       # initialize + initialized
    doc = client.open("file:///a.txt", "Once upon a ")
    doc.edit_to("Once upon a ti")             # one incremental didChange
    words = client.complete_words(doc)        # ["time", ...]
    client.close()                            # shutdown, exit; returns the exit status

Positions are computed here from the Python text (code points), in the
encoding the server answered at initialize: UTF-16 code units (the default),
UTF-8 bytes or UTF-32 code points; lines end at \\n, \\r\\n or \\r.

Round trips are measured with time.perf_counter from just before the request
is written to the end of parsing its response; `request()` returns the
response and leaves the time in `client.last_seconds`.
"""
import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time

from ksr_protocol import file_tail, status_soon  # tests/bench/, beside this file


class ProtocolError(RuntimeError):
    """The server broke the protocol: a bad frame, an unexpected answer, a
    crash, or no answer in time."""


ENCODINGS = ["utf-16", "utf-8", "utf-32"]  # the position encodings a client may offer


def bench_argv(argv=None):
    """A benchmark's arguments (default: sys.argv's) without the empty ones
    ctest passes."""
    return [a for a in (sys.argv[1:] if argv is None else argv) if a != ""]


def bench_parser(doc):
    """The command line of a benchmark of `nextword lsp` (lsp_ksr.py,
    lsp_latency.py), described by the first paragraph of its `doc`: first
    the binary and the model directory."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("nextword")
    ap.add_argument("model", help="model directory")
    return ap


def units(s, encoding):
    """Length of s in the encoding's code units."""
    if encoding == "utf-16":
        return len(s.encode("utf-16-le", "surrogatepass")) // 2
    if encoding == "utf-8":
        return len(s.encode("utf-8", "surrogatepass"))
    return len(s)


def position(text, offset, encoding):
    """LSP position {line, character} of the code-point offset in text."""
    head = text[:offset]
    crlf = head.count("\r\n")
    line = head.count("\n") + head.count("\r") - crlf
    start = max(head.rfind("\n"), head.rfind("\r")) + 1
    return {"line": line, "character": units(head[start:], encoding)}


class Document:
    """An open document as the client sees it."""

    def __init__(self, client, uri, text, version=1):
        self.client = client
        self.uri = uri
        self.text = text
        self.version = version
        self.end_cache = None  # (len(text), position of its end)

    def end_position(self):
        if self.end_cache and self.end_cache[0] == len(self.text):
            return self.end_cache[1]
        p = position(self.text, len(self.text), self.client.encoding)
        self.end_cache = (len(self.text), p)
        return p

    def change_message(self, start, end, new_text):
        """The didChange replacing text[start:end] by new_text (code-point
        offsets); applies it to self.text."""
        enc = self.client.encoding
        if start == end == len(self.text):
            p_start = p_end = self.end_position()
        else:
            p_start = position(self.text, start, enc)
            p_end = p_start if end == start else position(self.text, end, enc)
        self.version += 1
        old_len = len(self.text)
        self.text = self.text[:start] + new_text + self.text[end:]
        # Appending at the end: the new end's position follows from the old one.
        if start == end == old_len and self.end_cache and self.end_cache[0] == old_len \
                and "\n" not in new_text and "\r" not in new_text:
            self.end_cache = (len(self.text), {
                "line": p_start["line"],
                "character": p_start["character"] + units(new_text, enc)})
        else:
            self.end_cache = None
        return {"jsonrpc": "2.0", "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": self.uri, "version": self.version},
                           "contentChanges": [{"range": {"start": p_start, "end": p_end},
                                               "text": new_text}]}}

    def edit_to(self, wanted):
        """One incremental didChange turning the text into `wanted`: text
        appended at the end, or replaced from the first differing character
        to the end. No message when they are equal."""
        cur = self.text
        if wanted == cur:
            return
        if wanted.startswith(cur):
            p = len(cur)
        else:
            p = 0
            n = min(len(cur), len(wanted))
            # Compare in blocks first, then character by character.
            step = 4096
            while p + step <= n and cur[p:p + step] == wanted[p:p + step]:
                p += step
            while p < n and cur[p] == wanted[p]:
                p += 1
        self.client.send(self.change_message(p, len(cur), wanted[p:]))

    def replace(self, start, end, new_text):
        self.client.send(self.change_message(start, end, new_text))


class LspClient:
    def __init__(self, argv, encoding="utf-16", timeout=60.0, env=None):
        self.argv = list(argv)
        self.offered_encoding = encoding
        self.encoding = "utf-16"
        self.timeout = timeout
        self.next_id = 1
        self.last_seconds = None
        self.notifications = []
        self._buf = b""
        self._stderr = tempfile.TemporaryFile()
        self.spawned_at = time.perf_counter()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=env, bufsize=0)
        self._out = self.proc.stdout.fileno()
        self._in = self.proc.stdin.fileno()
        self.initialize_result = None
        self.spawn_to_initialized = None   # seconds, process start -> initialize answered
        self.initialize_round_trip = None  # seconds, initialize written -> answered

    # --- plumbing --------------------------------------------------------------

    def stderr_text(self, limit=4000):
        return file_tail(self._stderr, limit)

    def _fail(self, what):
        raise ProtocolError("%s (server exit status %s)\nserver stderr:\n%s"
                            % (what, status_soon(self.proc), self.stderr_text().rstrip()))

    @staticmethod
    def frame(message):
        """The bytes of one message: header and JSON body."""
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def send(self, message):
        self.write(self.frame(message))

    def write(self, data):
        try:
            view = memoryview(data)
            while view:
                n = os.write(self._in, view)
                view = view[n:]
        except (BrokenPipeError, OSError) as e:
            self._fail("writing to the server: %s" % e)

    def _fill(self, deadline):
        left = deadline - time.perf_counter()
        if left <= 0:
            self._fail("no answer within %.0f s" % self.timeout)
        ready, _, _ = select.select([self._out], [], [], left)
        if not ready:
            return
        chunk = os.read(self._out, 1 << 20)
        if not chunk:
            self._fail("the server closed its output")
        self._buf += chunk

    def read_message(self, deadline=None):
        deadline = deadline or time.perf_counter() + self.timeout
        while True:
            end = self._buf.find(b"\r\n\r\n")
            if end >= 0:
                length = None
                for line in self._buf[:end].split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    self._fail("a frame without Content-Length: %r" % self._buf[:end])
                start = end + 4
                while len(self._buf) < start + length:
                    self._fill(deadline)
                body = self._buf[start:start + length]
                self._buf = self._buf[start + length:]
                try:
                    return json.loads(body.decode("utf-8"))
                except ValueError as e:
                    self._fail("a body that is not JSON (%s): %r" % (e, body[:200]))
            self._fill(deadline)

    def request(self, method, params=None, expect_error=False, preface=b""):
        """Sends a request, returns its response (the whole message). Server
        notifications meanwhile go to self.notifications; server requests are
        answered with null. `preface`: framed messages (bytes) written in the
        same write, just before the request, inside the timed span."""
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        data = preface + self.frame(msg)
        t0 = time.perf_counter()
        self.write(data)
        deadline = t0 + self.timeout
        while True:
            m = self.read_message(deadline)
            if "method" in m:
                if "id" in m:
                    self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
                else:
                    self.notifications.append(m)
                continue
            self.last_seconds = time.perf_counter() - t0
            if m.get("id") != rid:
                self._fail("a response to id %r while waiting for %r: %r" % (m.get("id"), rid, m))
            if "error" in m and not expect_error:
                self._fail("%s answered an error: %r" % (method, m["error"]))
            if expect_error and "error" not in m:
                self._fail("%s was expected to fail: %r" % (method, m))
            return m

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    # --- the protocol ----------------------------------------------------------

    def initialize(self, options=None):
        params = {"processId": os.getpid(), "rootUri": None,
                  "capabilities": {"general": {"positionEncodings": [self.offered_encoding]}}}
        if options is not None:
            params["initializationOptions"] = options
        r = self.request("initialize", params)
        self.initialize_round_trip = self.last_seconds
        self.spawn_to_initialized = time.perf_counter() - self.spawned_at
        self.initialize_result = r["result"]
        caps = r["result"].get("capabilities", {})
        self.encoding = caps.get("positionEncoding", "utf-16")
        if self.encoding != self.offered_encoding:
            self._fail("offered %s, the server chose %s" % (self.offered_encoding, self.encoding))
        self.notify("initialized", {})
        return r["result"]

    def open(self, uri, text, language="plaintext"):
        doc = Document(self, uri, text)
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language, "version": doc.version, "text": text}})
        return doc

    def completion(self, doc, pos=None):
        """The completion result at pos (default: the end of the document)."""
        pos = pos or doc.end_position()
        r = self.request("textDocument/completion",
                         {"textDocument": {"uri": doc.uri}, "position": pos})
        result = r["result"]
        if result is None:
            return {"isIncomplete": False, "items": []}
        if isinstance(result, list):
            return {"isIncomplete": False, "items": result}
        return result

    def complete_words(self, doc, check=None):
        """The newText of each item at the end of the document; `check`,
        when given, is called with (doc, position, result)."""
        pos = doc.end_position()
        result = self.completion(doc, pos)
        if check is not None:
            check(doc, pos, result)
        return [item["textEdit"]["newText"] if "textEdit" in item else item.get("insertText", item["label"])
                for item in result["items"]]

    def cheap(self, preface=b""):
        """An unknown method: the server answers -32601 at once."""
        r = self.request("nextword/noSuchMethod", {}, expect_error=True, preface=preface)
        if r["error"].get("code") != -32601:
            self._fail("an unknown method answered %r, not -32601" % r["error"])
        return r

    def close(self, wait=5.0):
        """shutdown + exit when the server is alive; returns its exit status."""
        status = None
        if self.proc.poll() is None:
            try:
                self.request("shutdown")
                self.notify("exit")
                status = self.proc.wait(wait)
            except (ProtocolError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        return status if status is not None else self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            self.kill()
        else:
            self.close()
        self._stderr.close()
        return False


def _self_check():
    t = "a\r\nb\rc\nNaïve 😀 x"
    assert position(t, len(t), "utf-16") == {"line": 3, "character": 10}
    assert position(t, len(t), "utf-8") == {"line": 3, "character": 13}
    assert position(t, len(t), "utf-32") == {"line": 3, "character": 9}
    assert position(t, 1, "utf-16") == {"line": 0, "character": 1}
    assert position(t, 3, "utf-16") == {"line": 1, "character": 0}
    print("lsp_client self-check passed")


if __name__ == "__main__":
    _self_check()
