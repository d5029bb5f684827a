#!/usr/bin/env python3
"""`nextword lsp` through real pipes (standard-library Python), as an editor
speaks to it:

  - framing: a message written one byte at a time, two messages in one
    write, a blank line before a header;
  - a completion after "Naïve 😀 once upon a Ti": its range counts UTF-16
    code units (the emoji is 2), its items keep the capital; UTF-8 and
    UTF-32 positions when the client offers them;
  - a CRLF document, and one with lone "\\r" line ends;
  - incremental edits (after an emoji, lines deleted and joined) give the
    same completions at every line end as the text sent whole;
  - Markdown: silent in fenced code, inline code and URLs; other languages
    silent unless --languages names them; settings from
    initializationOptions and workspace/didChangeConfiguration;
  - the lifecycle: -32002 before initialize, -32601 for an unknown method,
    "$/" notifications ignored, -32800 once canceled, shutdown answers null,
    then -32600, exit 0 after shutdown and 1 without, end of input exits
    within 1 s; every request answered exactly once;
  - 500 malformed frames and bodies, each answered (or, for a notification,
    logged), and the server still serving afterwards;
  - nothing but framed protocol on stdout, every byte of it.

    python3 tests/lsp/protocol_test.py BUILD/nextword DATA_DIR
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time
import unittest

BINARY = DATA = None
DOC = "file:///tmp/story.md"


def frame(body):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def utf16_length(text):
    return len(text.encode("utf-16-le")) // 2


class Client:
    """`nextword lsp ARGS...` on pipes; a thread reads every frame on its
    stdout, and fails the test on any byte that is not one."""

    def __init__(self, *args, model=None):
        self.process = subprocess.Popen(
            [BINARY, "lsp", "-m", model or os.path.join(DATA, "stories"), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages = queue.Queue()
        self.stray = []
        self.next_id = 100
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()

    def _read(self):
        out = self.process.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    if header:
                        self.stray.append(header)
                    self.messages.put(None)
                    return
                header += byte
            fields = dict(line.split(b": ", 1) for line in header.strip().split(b"\r\n"))
            if set(fields) != {b"Content-Length"}:
                self.stray.append(header)
            body = out.read(int(fields[b"Content-Length"]))
            try:
                self.messages.put(json.loads(body.decode("utf-8")))
            except ValueError:
                self.stray.append(body)

    def write(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message):
        self.write(frame(message))

    def notify(self, method, params=None):
        self.send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def receive(self, timeout=30):
        message = self.messages.get(timeout=timeout)
        if message is None:
            raise AssertionError("stdout ended; stderr: %r" % b"".join(self.stderr))
        return message

    def response(self, id, timeout=30):
        """The response to request `id` (window/showMessage notifications skipped)."""
        while True:
            message = self.receive(timeout)
            if "method" in message:
                continue
            assert message.get("id") == id, "expected the response to %r, got %r" % (id, message)
            return message

    def request(self, method, params=None):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        return self.response(self.next_id)

    def initialize(self, capabilities=None, options=None):
        params = {"processId": None, "rootUri": None, "capabilities": capabilities or {}}
        if options is not None:
            params["initializationOptions"] = options
        result = self.request("initialize", params)["result"]
        self.notify("initialized")
        return result

    def open(self, text, uri=DOC, language="markdown"):
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language, "version": 1, "text": text}})

    def complete(self, line, character, uri=DOC):
        response = self.request("textDocument/completion", {
            "textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
        assert "result" in response, response
        return response["result"]

    def close(self, shutdown=True):
        if shutdown:
            assert self.request("shutdown")["result"] is None
        self.notify("exit")
        code = self.process.wait(timeout=10)
        assert not self.stray, "stray bytes on stdout: %r" % self.stray
        return code


def words(result):
    return [item["textEdit"]["newText"] for item in result["items"]]


class Framing(unittest.TestCase):
    def test_one_byte_writes_and_two_messages_in_one_write(self):
        c = Client()
        data = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"capabilities": {}}})
        for i in range(len(data)):
            c.write(data[i:i + 1])
        self.assertIn("capabilities", c.response(1)["result"])
        c.write(frame({"jsonrpc": "2.0", "id": 2, "method": "nosuch/method"}) +
                frame({"jsonrpc": "2.0", "id": 3, "method": "nosuch/other"}))
        self.assertEqual(c.response(2)["error"]["code"], -32601)
        self.assertEqual(c.response(3)["error"]["code"], -32601)
        # A header split inside "\r\n\r\n", then a body split across writes.
        data = frame({"jsonrpc": "2.0", "id": 4, "method": "nosuch/third"})
        cut = data.index(b"\r\n\r\n") + 2
        c.write(data[:cut])
        time.sleep(0.05)
        c.write(data[cut:cut + 5])
        time.sleep(0.05)
        c.write(data[cut + 5:])
        self.assertEqual(c.response(4)["error"]["code"], -32601)
        self.assertEqual(c.close(), 0)


class Positions(unittest.TestCase):
    def test_utf16_range_and_capital(self):
        c = Client()
        result = c.initialize()
        self.assertEqual(result["capabilities"]["positionEncoding"], "utf-16")
        sync = result["capabilities"]["textDocumentSync"]
        self.assertEqual((sync["openClose"], sync["change"]), (True, 2))
        text = "Naïve 😀 once upon a Ti"
        c.open(text)
        end = utf16_length(text)
        self.assertEqual(end, 23)  # N a ï v e, space, 😀 (2), space, 12, T i
        r = c.complete(0, end)
        self.assertTrue(r["isIncomplete"])
        self.assertEqual(words(r)[0], "Time")
        for item in r["items"]:
            self.assertEqual(item["textEdit"]["range"],
                             {"start": {"line": 0, "character": 21},
                              "end": {"line": 0, "character": 23}})
            self.assertEqual(item["label"], item["textEdit"]["newText"])
            self.assertEqual(item["filterText"], item["textEdit"]["newText"])
            self.assertTrue(item["textEdit"]["newText"].startswith("Ti"), item)
        self.assertEqual([i["sortText"] for i in r["items"]],
                         sorted(i["sortText"] for i in r["items"]))
        self.assertRegex(r["items"][0]["detail"], r"^\d+\.\d% \(model\)$")
        # Lower case typed: lower case offered; a position past the line's
        # end is its end.
        c.open("once upon a ti", uri="file:///lower.txt", language="plaintext")
        r = c.complete(0, 99, uri="file:///lower.txt")
        self.assertEqual(words(r)[0], "time")
        self.assertEqual(r["items"][0]["textEdit"]["range"]["start"], {"line": 0, "character": 12})
        self.assertEqual(r["items"][0]["textEdit"]["range"]["end"], {"line": 0, "character": 14})
        # Asked again as the person types (trigger kind 3, the list was
        # incomplete), or by a trigger character (2): the same answer.
        for context in ({"triggerKind": 3}, {"triggerKind": 2, "triggerCharacter": "i"}):
            again = c.request("textDocument/completion", {
                "textDocument": {"uri": "file:///lower.txt"},
                "position": {"line": 0, "character": 14}, "context": context})["result"]
            self.assertEqual(again, r)
        # Between words: the next word, an empty range at the cursor.
        c.open("once upon a ", uri="file:///next.txt", language="plaintext")
        r = c.complete(0, 12, uri="file:///next.txt")
        self.assertEqual(words(r)[0], "time")
        self.assertEqual(r["items"][0]["textEdit"]["range"]["start"], {"line": 0, "character": 12})
        self.assertEqual(c.close(), 0)

    def test_utf8_and_utf32_when_offered(self):
        text = "Naïve 😀 once upon a Ti"
        for name, length in (("utf-8", len(text.encode())), ("utf-32", len(text))):
            c = Client()
            result = c.initialize({"general": {"positionEncodings": ["utf-7", name, "utf-16"]}})
            self.assertEqual(result["capabilities"]["positionEncoding"], name)
            c.open(text)
            r = c.complete(0, length)
            self.assertEqual(words(r)[0], "Time")
            self.assertEqual(r["items"][0]["textEdit"]["range"]["start"],
                             {"line": 0, "character": length - 2})
            self.assertEqual(c.close(), 0)

    def test_crlf_and_cr_documents(self):
        c = Client()
        c.initialize()
        for ending in ("\r\n", "\r"):
            uri = "file:///lines%d.txt" % len(ending)
            c.open(ending.join(["The end.", "", "Once upon a ti"]) + ending + "x", uri=uri,
                   language="plaintext")
            r = c.complete(2, 14, uri=uri)
            self.assertEqual(words(r)[0], "time")
            self.assertEqual(r["items"][0]["textEdit"]["range"],
                             {"start": {"line": 2, "character": 12},
                              "end": {"line": 2, "character": 14}})
        self.assertEqual(c.close(), 0)

    def test_incremental_edits_equal_a_full_resync(self):
        c = Client()
        c.initialize()
        text = "Naïve 😀 story\nOnce upon a time\nthere was\na cat"
        c.open(text, uri="file:///edited.md")
        # (start line, start char, end line, end char, new text): UTF-16 units.
        edits = [
            (0, 9, 0, 9, "little "),          # after the emoji (2 units) and a space
            (2, 0, 3, 0, ""),                 # line 2 deleted
            (1, 16, 2, 0, " "),               # lines joined
            (0, 6, 0, 9, "🐈 "),              # the emoji replaced by another
            (1, 17, 1, 17, "the dog was happy. The dog "),
            (9, 0, 9, 0, "\r\nThey were "),   # past the end: at the end
        ]
        lines = text
        for sl, sc, el, ec, new in edits:
            c.notify("textDocument/didChange", {
                "textDocument": {"uri": "file:///edited.md", "version": 2},
                "contentChanges": [{"range": {"start": {"line": sl, "character": sc},
                                              "end": {"line": el, "character": ec}},
                                    "text": new}]})
            lines = apply_edit(lines, sl, sc, el, ec, new)
        self.assertEqual(lines, "Naïve 🐈 little story\nOnce upon a time the dog was happy."
                                " The dog a cat\r\nThey were ")
        c.open(lines, uri="file:///whole.md")
        for n, line in enumerate(split_lines(lines)):
            for character in range(0, utf16_length(line) + 1, 3):
                a = c.complete(n, character, uri="file:///edited.md")
                b = c.complete(n, character, uri="file:///whole.md")
                self.assertEqual(a, b, (n, character))
        # A full change replaces everything.
        c.notify("textDocument/didChange", {"textDocument": {"uri": "file:///edited.md"},
                                            "contentChanges": [{"text": "once upon a ti"}]})
        self.assertEqual(words(c.complete(0, 14, uri="file:///edited.md"))[0], "time")
        self.assertEqual(c.close(), 0)


def split_lines(text):
    lines, start, i = [], 0, 0
    while i < len(text):
        if text[i] in "\r\n":
            lines.append(text[start:i])
            i += 2 if text[i:i + 2] == "\r\n" else 1
            start = i
        else:
            i += 1
    lines.append(text[start:])
    return lines


def apply_edit(text, sl, sc, el, ec, new):
    """The edit applied as LSP 3.17 says, written independently of the server."""
    def offset(line, character):
        starts, i = [0], 0
        while i < len(text):
            if text[i] in "\r\n":
                i += 2 if text[i:i + 2] == "\r\n" else 1
                starts.append(i)
            else:
                i += 1
        if line >= len(starts):
            return len(text)
        start = starts[line]
        end = start
        while end < len(text) and text[end] not in "\r\n":
            end += 1
        units = 0
        for j in range(start, end):
            units += utf16_length(text[j])
            if units > character:
                return j
        return end
    a, b = offset(sl, sc), offset(el, ec)
    return text[:a] + new + text[b:]


class Markdown(unittest.TestCase):
    def test_silent_in_code_and_urls_and_other_languages(self):
        c = Client()
        c.initialize()
        cases = [
            ("Once upon a ti", True),
            ("```\nonce upon a ti", False),
            ("~~~~python\nonce upon a ti", False),
            ("```\ncode\n```\nOnce upon a ti", True),
            ("Once upon a `ti", False),
            ("Once `code` upon a ti", True),
            ("See https://once.upon/a/ti", False),
            ("See www.onceupon", False),
            ("A [link](http://ex", False),
        ]
        for n, (text, speaks) in enumerate(cases):
            uri = "file:///md%d.md" % n
            c.open(text, uri=uri)
            last = text.split("\n")[-1]
            r = c.complete(text.count("\n"), utf16_length(last), uri=uri)
            self.assertEqual(bool(r["items"]), speaks, text)
        c.open("once upon a ti", uri="file:///main.c", language="c")
        self.assertEqual(c.complete(0, 14, uri="file:///main.c")["items"], [])
        c.open("# Please enter the commit message\nonce upon a ti", uri="file:///COMMIT",
               language="gitcommit")
        self.assertEqual(c.complete(0, 20, uri="file:///COMMIT")["items"], [])
        self.assertEqual(words(c.complete(1, 14, uri="file:///COMMIT"))[0], "time")
        self.assertEqual(c.close(), 0)

    def test_settings_by_the_flags_names(self):
        c = Client("--languages", "c")
        result = c.initialize(options={"top-k": 2, "trigger-characters": " ."})
        self.assertEqual(result["capabilities"]["completionProvider"]["triggerCharacters"],
                         [" ", "."])
        c.open("once upon a ti", uri="file:///main.c", language="c")
        self.assertEqual(len(c.complete(0, 14, uri="file:///main.c")["items"]), 2)
        c.open("once upon a ti", uri="file:///a.md")
        self.assertEqual(c.complete(0, 14, uri="file:///a.md")["items"], [])
        c.notify("workspace/didChangeConfiguration",
                 {"settings": {"nextword": {"top-k": 4, "languages": ["markdown"]}}})
        self.assertEqual(len(c.complete(0, 14, uri="file:///a.md")["items"]), 4)
        # A setting that does not fit is shown to the person and not applied.
        c.notify("workspace/didChangeConfiguration", {"settings": {"top-k": "many", "tops": 1}})
        shown = [c.receive()["params"]["message"] for _ in range(2)]
        self.assertEqual(shown[0], "nextword: settings.top-k: not a whole number from 1 to 65536")
        self.assertTrue(shown[1].startswith("nextword: settings.tops: unknown setting"), shown)
        self.assertEqual(len(c.complete(0, 14, uri="file:///a.md")["items"]), 4)
        self.assertEqual(c.close(), 0)


class Learning(unittest.TestCase):
    def test_learn_and_history_across_sessions(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            history = os.path.join(tmp, "history.txt")
            with open(history, "w") as f:
                f.write("Earlier we met Zanzibarian cats.\n")
            c = Client("--history", history)
            c.initialize()
            text = "The Zanzibarian cats sat.\nOnce upon a time"
            c.open(text, language="plaintext")
            r = c.complete(1, 16)
            self.assertEqual(words(r)[0], "time")
            c.open("We saw the zan", uri="file:///b.txt", language="plaintext")
            r = c.complete(0, 14, uri="file:///b.txt")
            self.assertEqual(words(r)[:1], ["Zanzibarian"])
            self.assertIn("(history)", r["items"][0]["detail"])
            # Saved: the new lines are appended, once.
            c.notify("textDocument/didChange", {"textDocument": {"uri": DOC}, "contentChanges": [
                {"range": {"start": {"line": 1, "character": 16},
                           "end": {"line": 1, "character": 16}},
                 "text": " a Quetzalcoatlus flew.\n\fcontrol line"}]})
            c.notify("textDocument/didSave", {"textDocument": {"uri": DOC}})
            c.notify("textDocument/didSave", {"textDocument": {"uri": DOC}})
            self.assertEqual(c.close(), 0)
            with open(history) as f:
                self.assertEqual(f.read(), "Earlier we met Zanzibarian cats.\n"
                                           "Once upon a time a Quetzalcoatlus flew.\n")
            # The next session starts adapted.
            c = Client("--history", history)
            c.initialize()
            c.open("Then the quet", language="plaintext")
            r = c.complete(0, 13)
            self.assertEqual(words(r)[:1], ["Quetzalcoatlus"])
            self.assertEqual(c.close(), 0)
            # The history named by the editor's settings, as by the flag; a
            # file that is not text is shown as an error and not used.
            c = Client()
            c.initialize(options={"history": history})
            c.open("Then the quet", language="plaintext")
            self.assertEqual(words(c.complete(0, 13))[:1], ["Quetzalcoatlus"])
            binary = os.path.join(tmp, "binary")
            with open(binary, "wb") as f:
                f.write(b"text\n\x00\x01\n")
            c.notify("workspace/didChangeConfiguration", {"settings": {"history": binary}})
            shown = c.receive()["params"]
            self.assertEqual((shown["type"], shown["message"]),
                             (1, "nextword: settings.history: %s:2: holds a control character "
                                 "(a history file is plain text)" % binary))
            self.assertEqual(words(c.complete(0, 13))[:1], ["Quetzalcoatlus"])
            self.assertEqual(c.close(), 0)
            # Without --learn or --history, a word of the document is not learned.
            c = Client()
            c.initialize()
            c.open("A Quetzalcoatlus flew. Then the quet", language="plaintext")
            self.assertNotIn("Quetzalcoatlus", words(c.complete(0, 36)))
            self.assertEqual(c.close(), 0)
            c = Client("--learn")
            c.initialize()
            c.open("A Quetzalcoatlus flew. Then the quet", language="plaintext")
            self.assertEqual(words(c.complete(0, 36))[:1], ["Quetzalcoatlus"])
            self.assertEqual(c.close(), 0)


class Lifecycle(unittest.TestCase):
    def test_codes(self):
        c = Client()
        r = c.request("textDocument/completion", {})
        self.assertEqual(r["error"]["code"], -32002)
        self.assertEqual(c.request("shutdown")["error"]["code"], -32002)
        c.initialize()
        self.assertEqual(c.request("initialize", {"capabilities": {}})["error"]["code"], -32600)
        self.assertEqual(c.request("workspace/symbol", {})["error"]["code"], -32601)
        c.notify("$/setTrace", {"value": "off"})
        c.notify("$/unknown/thing", {})
        c.notify("some/unknownNotification", {})
        r = c.request("textDocument/completion", {"textDocument": {"uri": "file:///nope"},
                                                  "position": {"line": 0, "character": 0}})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertIn("file:///nope", r["error"]["message"])
        r = c.request("textDocument/completion", {"textDocument": {"uri": DOC},
                                                  "position": {"line": -1, "character": 0}})
        self.assertEqual(r["error"]["message"],
                         "textDocument/completion: params.textDocument.uri: '%s' is not open" % DOC)
        c.open("x")
        r = c.request("textDocument/completion", {"textDocument": {"uri": DOC},
                                                  "position": {"line": -1, "character": 0}})
        self.assertEqual(r["error"],
                         {"code": -32602, "message": "textDocument/completion: "
                          "params.position.line: not a whole number"})
        self.assertIsNone(c.request("shutdown")["result"])
        self.assertEqual(c.request("textDocument/completion", {})["error"]["code"], -32600)
        self.assertEqual(c.close(shutdown=False), 0)
        self.assertTrue(c.messages.empty() or c.messages.get() is None)

    def test_exit_without_shutdown_is_1(self):
        c = Client()
        c.initialize()
        self.assertEqual(c.close(shutdown=False), 1)

    def test_end_of_input_exits_within_a_second(self):
        for shutdown, code in ((False, 1), (True, 0)):
            c = Client()
            c.initialize()
            c.open("once upon a ti")
            if shutdown:
                c.request("shutdown")
            start = time.monotonic()
            c.process.stdin.close()
            self.assertEqual(c.process.wait(timeout=5), code)
            self.assertLess(time.monotonic() - start, 1.0)

    def test_cancellation_answers_each_request_once(self):
        c = Client()
        c.initialize()
        c.open("Once upon a time there was a little girl. " * 50)
        ids = list(range(1000, 1100))
        data = b""
        for n, id in enumerate(ids):
            data += frame({"jsonrpc": "2.0", "id": id, "method": "textDocument/completion",
                           "params": {"textDocument": {"uri": DOC},
                                      "position": {"line": 0, "character": 5 + 7 * n}}})
        for id in ids:
            data += frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}})
        c.write(data)
        answered = {}
        while len(answered) < len(ids):
            m = c.receive()
            self.assertNotIn(m["id"], answered)
            answered[m["id"]] = m
        canceled = [id for id, m in answered.items() if "error" in m]
        for id in canceled:
            self.assertEqual(answered[id]["error"]["code"], -32800)
        for id, m in answered.items():
            self.assertTrue("error" in m or "items" in m["result"], m)
        self.assertGreater(len(canceled), 0)
        self.assertIn(ids[-1], canceled)
        # A cancel for a request already answered changes nothing.
        c.notify("$/cancelRequest", {"id": ids[0]})
        self.assertIn("items", c.complete(0, 4))
        self.assertEqual(c.close(), 0)


def malformed_cases():
    """(bytes, answered): 500 frames and bodies that are not messages."""
    cases = []
    good = lambda n: {"jsonrpc": "2.0", "id": n, "method": "nosuch"}
    bodies = [b"", b"{", b"}", b"[]", b"[1,2]", b"42", b"\"text\"", b"null", b"true",
              b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ", b"\xff\xfe", b"{\"a\": \"\xc3\"}",
              b"{\"jsonrpc\": \"1.0\", \"id\": 7, \"method\": \"x\"}",
              b"{\"jsonrpc\": \"2.0\", \"id\": {}, \"method\": \"x\"}",
              b"{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"x\"}",
              b"{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": 12}",
              b"{\"jsonrpc\": \"2.0\", \"id\": 9}",
              b"{\"jsonrpc\": \"2.0\", \"method\": 3}",
              b"{\"id\": 10, \"method\": \"shutdown\"}",
              "{\"jsonrpc\": \"2.0\", \"id\": 11, \"method\": \"😀\"}".encode()]
    for body in bodies:
        cases.append((frame(body), True))
    bad_params = [
        {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}},
        {"textDocument": {"uri": DOC}, "position": {"line": "0", "character": 0}},
        {"textDocument": {"uri": DOC}, "position": {"line": 0}},
        {"textDocument": {"uri": DOC}, "position": [0, 0]},
        {"textDocument": {"uri": DOC}, "position": {"line": 1.5, "character": 0}},
        {"textDocument": "x"}, [], 7, None,
        {"textDocument": {"uri": DOC}, "position": {"line": 10 ** 30, "character": 0}},
    ]
    for p in bad_params:
        cases.append((frame({"jsonrpc": "2.0", "id": 5, "method": "textDocument/completion",
                             "params": p}), True))
    bad_notes = [
        ("textDocument/didChange", {"textDocument": {"uri": DOC}, "contentChanges": 3}),
        ("textDocument/didChange", {"textDocument": {"uri": DOC},
                                    "contentChanges": [{"range": {"start": {}}, "text": "x"}]}),
        ("textDocument/didChange", {"textDocument": {"uri": DOC},
                                    "contentChanges": [{"range": {"start": {"line": -1}}}]}),
        ("textDocument/didOpen", {"textDocument": {"uri": DOC}}),
        ("textDocument/didClose", {}),
        ("workspace/didChangeConfiguration", 7),
    ]
    for method, p in bad_notes:
        cases.append((frame({"jsonrpc": "2.0", "method": method, "params": p}), False))
    headers = [b"Content-Length: abc\r\n\r\n", b"Content-Length: -3\r\n\r\n",
               b"Content-Type: application/json\r\n\r\n", b"garbage\r\n\r\n",
               b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
               b"Content-Length: 99999999999999999999999\r\n\r\n",
               b"Content-Length: 2\r\nno colon here\r\n\r\n{}", b"\r\n\r\n"]
    for h in headers:
        cases.append((h, True))
    n = 0
    while len(cases) < 500:
        kind = n % 5
        if kind == 0:
            cases.append((frame(b"{\"jsonrpc\": \"2.0\", \"id\": %d, \"method\"" % n), True))
        elif kind == 1:
            cases.append((b"Content-Length: x%d\r\n\r\n" % n, True))
        elif kind == 2:
            cases.append((frame(bytes([n % 256, (n * 7) % 256, 0x80 | n % 64])), True))
        elif kind == 3:
            cases.append((frame({"jsonrpc": "2.0", "id": n, "method": "textDocument/completion",
                                 "params": {"position": n}}), True))
        else:
            cases.append((frame({"jsonrpc": "2.0", "id": n, "method": "initialize",
                                 "params": {"capabilities": []}}), True))
        n += 1
    return cases


class Malformed(unittest.TestCase):
    def test_500_malformed_frames_and_bodies(self):
        c = Client()
        c.initialize()
        c.open("Once upon a ti")
        cases = malformed_cases()
        self.assertEqual(len(cases), 500)
        for data, answered in cases:
            c.write(data)
            if answered:
                m = c.receive()
                self.assertIn("error", m, data)
                self.assertIsInstance(m["error"]["code"], int)
                self.assertTrue(m["error"]["message"], data)
        # A header without its end, over 8 KiB, then a body over the cap.
        c.write(b"X" * 9000)
        self.assertEqual(c.receive()["error"]["code"], -32700)
        c.write(b"\r\n\r\n")
        self.assertEqual(c.receive()["error"]["code"], -32700)  # the rest of it, no length
        big = 64 * 2 ** 20 + 1
        c.write(b"Content-Length: %d\r\n\r\n" % big)
        self.assertIn("over the", c.receive()["error"]["message"])
        chunk = b" " * 2 ** 20
        for _ in range(64):
            c.write(chunk)
        c.write(b" ")
        # Still serving, the document as it was.
        self.assertEqual(words(c.complete(0, 14))[0], "time")
        # A document over the cap (16 MiB) is dropped, with an error shown;
        # a full change that fits brings it back.
        c.open("word " * (16 * 2 ** 20 // 5 + 1), uri="file:///big.txt", language="plaintext")
        shown = c.receive()
        self.assertEqual(shown["method"], "window/showMessage")
        self.assertEqual(shown["params"]["type"], 1)
        self.assertIn("over 16 MiB", shown["params"]["message"])
        r = c.request("textDocument/completion", {"textDocument": {"uri": "file:///big.txt"},
                                                  "position": {"line": 0, "character": 3}})
        self.assertEqual(r["error"]["code"], -32803)
        c.notify("textDocument/didChange", {"textDocument": {"uri": "file:///big.txt"},
                                            "contentChanges": [{"text": "once upon a ti"}]})
        self.assertEqual(words(c.complete(0, 14, uri="file:///big.txt"))[0], "time")
        self.assertEqual(c.close(), 0)
        log = b"".join(c.stderr).decode()
        self.assertIn("textDocument/didChange: params.contentChanges: not an array", log)


def main():
    global BINARY, DATA
    args = [a for a in sys.argv[1:] if a]
    BINARY, DATA = args[0], args[1]
    unittest.main(argv=[sys.argv[0], "-v"])


if __name__ == "__main__":
    main()
