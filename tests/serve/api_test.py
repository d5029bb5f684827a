#!/usr/bin/env python3
"""`nextword serve` through real sockets (standard-library Python):

  - every endpoint's record is byte for byte what the command prints with
    -f json for the same input, on the default model and on fruit
    (predict, attention, complete, score, lens, trace, attribute, generate;
    /v1/model is `info -f json`);
  - "phrases" and "texts" batches keep their order, with an error record in
    place of a phrase that cannot be predicted, and equal the stdin stream;
    concurrent clients get their own records while the workers batch them;
  - generate with "stream" sends server-sent events that parse: one word per
    event, then "done" with generate's record;
  - every error answers its status and {"error": {"code", "type",
    "message"}}: 400 (malformed JSON, wrong type, unknown field), 401 (key),
    404, 405, 413, 414, 422, 431; /health stays public; CORS only with
    --cors-origin;
  - /metrics counts requests by route and status in Prometheus's format;
  - SIGTERM with requests in flight answers every one of them, then exit 0.

    python3 tests/serve/api_test.py BUILD/nextword DATA_DIR
"""
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

BINARY = DATA = None


class Server:
    """`nextword serve --port 0 ARGS...`, its port read from its stderr line."""

    def __init__(self, *args):
        self.process = subprocess.Popen([BINARY, "serve", "--port", "0", *args],
                                        stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+) ", line)
        if not match:
            self.process.kill()
            raise AssertionError("no listening line: " + line)
        self.port = int(match.group(1))

    def request(self, method, path, body=None, headers=None, raw=False):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body)
        connection.request(method, path, body=data, headers=headers or {})
        response = connection.getresponse()
        text = response.read()
        connection.close()
        return response, (text if raw else text.decode())

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def stop(self):
        self.process.terminate()
        code = self.process.wait(timeout=60)
        self.process.stderr.close()
        return code


def cli(*args, stdin=None):
    r = subprocess.run([BINARY, *args], input=stdin, capture_output=True, text=True, timeout=120)
    return r.stdout


def raw_exchange(port, data, timeout=10):
    """Sends bytes, returns every byte the server sends until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        got = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return got
            got += chunk


class Records(unittest.TestCase):
    """Each endpoint's record against the command's -f json line."""

    def check_model(self, model, phrase, word, text):
        server = Server("-m", model)
        try:
            m = ["-m", model]
            cases = [
                ("predict", {"phrase": phrase}, ["predict", "-f", "json", *m, phrase]),
                ("predict", {"phrase": phrase, "k": 3, "explain": True},
                 ["predict", "-f", "json", "-k", "3", "--explain", *m, phrase]),
                ("attention", {"phrase": phrase}, ["attention", *m, phrase]),
                ("complete", {"text": text}, ["complete", "-f", "json", *m, text]),
                ("complete", {"text": text, "k": 3, "learn": True, "no_repeat": True},
                 ["complete", "-f", "json", "-k", "3", "--learn", "--no-repeat", *m, text]),
                ("score", {"text": phrase}, ["score", "-f", "json", "-q", *m, phrase]),
                ("lens", {"phrase": phrase, "k": 2, "mid": True, "all_positions": True},
                 ["lens", "-f", "json", "-k", "2", "--mid", "--all-positions", *m, phrase]),
                ("trace", {"phrase": phrase, "only": "blocks.0.attn.*"},
                 ["trace", "-f", "json", "--only", "blocks.0.attn.*", *m, phrase]),
                ("attribute", {"phrase": phrase}, ["attribute", "-f", "json", *m, phrase]),
                ("attribute", {"phrase": phrase, "word": word},
                 ["attribute", "-f", "json", "--word", word, *m, phrase]),
                ("generate", {"phrase": phrase, "n": 7},
                 ["generate", "-f", "json", "-n", "7", *m, phrase]),
                ("generate", {"phrase": phrase, "n": 9, "temperature": 0.8, "top_k": 5,
                              "top_p": 0.9, "seed": 7},
                 ["generate", "-f", "json", "-n", "9", "--temperature", "0.8", "--top-k", "5",
                  "--top-p", "0.9", "--seed", "7", *m, phrase]),
                ("generate", {"phrase": phrase, "n": 30, "greedy": True},
                 ["generate", "-f", "json", "-n", "30", "--greedy", *m, phrase]),
                ("generate", {"phrase": phrase, "n": 30, "no_repeat_ngram": 3,
                              "presence_penalty": 0.5, "repeat_window": 40},
                 ["generate", "-f", "json", "-n", "30", "--no-repeat-ngram", "3",
                  "--presence-penalty", "0.5", "--repeat-window", "40", *m, phrase]),
            ]
            for endpoint, body, command in cases:
                with self.subTest(model=model, endpoint=endpoint, body=body):
                    response, text = server.post("/v1/" + endpoint, body)
                    self.assertEqual(response.status, 200, text)
                    self.assertEqual(response.getheader("Content-Type"), "application/json")
                    self.assertEqual(text, cli(*command))
            response, html = server.post("/v1/attention", {"phrase": phrase, "format": "html"})
            self.assertEqual(html, cli("attention", "-f", "html", *m, phrase))
            response, info = server.request("GET", "/v1/model")
            self.assertEqual(info, cli("info", "-f", "json", *m))
        finally:
            self.assertEqual(server.stop(), 0)

    def test_default_model(self):
        self.check_model(os.path.join(DATA, "stories"), "lily and her mom went to the", "park",
                         "Once upon a time, there was a ti")

    def test_fruit(self):
        self.check_model(os.path.join(DATA, "examples", "fruit"), "banana apple", "pie",
                         "banana ap")


class Batches(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("-t", "2")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_phrases_keep_their_order(self):
        phrases = ["once upon a", "zzqx qqq", "lily and her mom went to the", "", "the dog"] * 7
        response, text = self.server.post("/v1/predict", {"phrases": phrases, "k": 3})
        self.assertEqual(response.status, 200)
        results = json.loads(text)["results"]
        stream = cli("predict", "-f", "json", "-k", "3", stdin="\n".join(phrases) + "\n")
        self.assertEqual([json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in results],
                         stream.splitlines())
        self.assertEqual(results[1]["exit_code"], 4)

    def test_texts_are_one_typing_session(self):
        texts = ["Once", "Once upon", "Once upon a ", "Once upon a ti", "Once upon a time, "]
        body = {"texts": texts, "learn": True, "no_repeat": True}
        response, text = self.server.post("/v1/complete", body)
        self.assertEqual(response.status, 200)
        stream = cli("complete", "-f", "json", "--learn", "--no-repeat", stdin="\n".join(texts) + "\n")
        self.assertEqual(text, '{"results":[' + ",".join(stream.splitlines()) + "]}\n")
        response, text = self.server.post("/v1/score", {"texts": texts})
        stream = cli("score", "-f", "json", "-q", stdin="\n".join(texts) + "\n")
        self.assertEqual(text, '{"results":[' + ",".join(stream.splitlines()) + "]}\n")

    def test_concurrent_clients_get_their_own_records(self):
        phrases = ["once upon a", "the little", "she was very", "he went to the", "they played"]
        expected = {p: cli("predict", "-f", "json", "-k", str(1 + i % 4), p)
                    for i, p in enumerate(phrases)}
        failures = []

        def client(n):
            for round_ in range(20):
                i = (n + round_) % len(phrases)
                _, text = self.server.post("/v1/predict", {"phrase": phrases[i], "k": 1 + i % 4})
                if text != expected[phrases[i]]:
                    failures.append((phrases[i], text))
        threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_stream_events_parse(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        connection.request("POST", "/v1/generate",
                           json.dumps({"phrase": "once upon a", "n": 12, "stream": True}))
        response = connection.getresponse()
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader("Content-Type"), "text/event-stream")
        events = response.read().decode().split("\n\n")
        self.assertEqual(events[-1], "")
        words = [json.loads(e[len("data: "):]) for e in events[:-2]]
        self.assertEqual([w["index"] for w in words], list(range(12)))
        done = events[-2].split("\n")
        self.assertEqual(done[0], "event: done")
        record = json.loads(done[1][len("data: "):])
        self.assertEqual([w["word"] for w in words], record["words"])
        self.assertEqual(done[1][len("data: "):] + "\n",
                         cli("generate", "-f", "json", "-n", "12", "once upon a"))


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-body", "4096", "--api-key", "s3cret",
                            "--cors-origin", "https://example.org")
        cls.key = {"Authorization": "Bearer s3cret"}

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def check(self, response, text, status, kind=None):
        self.assertEqual(response.status, status, text)
        error = json.loads(text)["error"]
        self.assertEqual(sorted(error), ["code", "message", "type"])
        self.assertEqual(error["code"], status)
        if kind:
            self.assertEqual(error["type"], kind)
        self.assertTrue(error["message"])

    def test_bad_bodies_are_400(self):
        for body, kind in [(b'{"phrase": "a', "invalid_json"), (b"[1, 2]", "invalid_request"),
                           (b'{"phrase": 3}', "invalid_request"),
                           (b'{"phrase": "a", "kk": 1}', "invalid_request"),
                           (b'{"phrase": "a", "k": 0}', "invalid_request"),
                           (b'{"phrase": "a", "k": 1e999}', None),
                           (b'{"phrase": "a", "k": 123456789012345678901234567890}', "invalid_request"),
                           (b'{"phrase": "a", "k": 2.5}', "invalid_request"),
                           (b'{"phrases": "a"}', "invalid_request"),
                           (b'{"phrase": "a", "phrases": ["b"]}', "invalid_request"),
                           (b"{}", "invalid_request"),
                           (b'{"phrase": "caf\xc3"}', "invalid_json"),
                           (b"[" * 2000 + b"]" * 2000, "invalid_json")]:
            with self.subTest(body=body[:40]):
                self.check(*self.server.post("/v1/predict", body, headers=self.key), 400, kind)
        self.check(*self.server.post("/v1/complete", {"text": "a", "learn_weight": 0.6,
                                                      "learn_context_weight": 0.6},
                                     headers=self.key), 400)

    def test_keys(self):
        self.check(*self.server.post("/v1/predict", {"phrase": "a"}), 401, "unauthorized")
        self.check(*self.server.post("/v1/predict", {"phrase": "a"},
                                     headers={"Authorization": "Bearer nope"}), 401)
        self.assertEqual(self.server.post("/v1/predict", {"phrase": "once"},
                                          headers={"X-API-Key": "s3cret"})[0].status, 200)
        self.assertEqual(self.server.request("GET", "/health")[0].status, 200)
        self.assertEqual(self.server.request("GET", "/")[0].status, 200)
        self.check(*self.server.request("GET", "/metrics"), 401)

    def test_key_from_a_file(self):
        # Its first line is the key (the line's end is not part of it); a
        # file whose first line is empty is a usage error naming the file.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "api-key")
            with open(path, "w") as f:
                f.write("from-a-file\r\nsecond line\n")
            server = Server("--api-key-file", path)
            try:
                self.check(*server.post("/v1/predict", {"phrase": "a"}), 401, "unauthorized")
                self.assertEqual(server.post("/v1/predict", {"phrase": "once"},
                                             headers={"X-API-Key": "from-a-file"})[0].status, 200)
            finally:
                self.assertEqual(server.stop(), 0)
            with open(path, "w") as f:
                f.write("\nkey on the second line\n")
            r = subprocess.run([BINARY, "serve", "--port", "0", "--api-key-file", path],
                               capture_output=True, text=True, timeout=60, check=False)
            self.assertEqual((r.returncode, r.stdout), (2, ""))
            self.assertEqual(r.stderr, f"nextword: {path}: api key: the first line is empty\n")

    def test_routes_and_methods(self):
        self.check(*self.server.request("GET", "/v2/predict", headers=self.key), 404, "not_found")
        response, text = self.server.request("GET", "/v1/predict", headers=self.key)
        self.check(response, text, 405, "method_not_allowed")
        self.assertEqual(response.getheader("Allow"), "POST")
        self.check(*self.server.request("POST", "/health"), 405)

    def test_unprocessable_is_422(self):
        self.check(*self.server.post("/v1/predict", {"phrase": "zzqx"}, headers=self.key), 422,
                   "unprocessable")
        self.check(*self.server.post("/v1/attribute", {"phrase": "once", "word": "zzqx"},
                                     headers=self.key), 422)
        self.check(*self.server.post("/v1/generate", {"phrase": "zzqx"}, headers=self.key), 422)

    def test_limits(self):
        self.check(*self.server.post("/v1/predict", {"phrase": "a " * 3000}, headers=self.key),
                   413, "payload_too_large")
        # Refused from its header alone: the body is never sent.
        answer = raw_exchange(self.server.port, b"POST /v1/predict HTTP/1.1\r\nHost: x\r\n"
                              b"Authorization: Bearer s3cret\r\nContent-Length: 10000000\r\n\r\n")
        self.assertTrue(answer.startswith(b"HTTP/1.1 413 "), answer[:80])
        chunk = b"1000\r\n" + b"a" * 4096 + b"\r\n"
        answer = raw_exchange(self.server.port, b"POST /v1/predict HTTP/1.1\r\nHost: x\r\n"
                              b"Authorization: Bearer s3cret\r\nTransfer-Encoding: chunked\r\n\r\n" +
                              chunk * 3)
        self.assertTrue(answer.startswith(b"HTTP/1.1 413 "), answer[:80])
        self.check(*self.server.request("GET", "/health?" + "x" * 9000), 414, "uri_too_long")
        self.check(*self.server.request("GET", "/health", headers={"X-Big": "y" * 9000}), 431)
        many = {"X-H%d" % i: "1" for i in range(101)}
        self.check(*self.server.request("GET", "/health", headers=many), 431, "header_too_large")

    def test_cors(self):
        response, _ = self.server.request("GET", "/health")
        self.assertEqual(response.getheader("Access-Control-Allow-Origin"), "https://example.org")
        response, _ = self.server.request("OPTIONS", "/v1/predict")
        self.assertEqual(response.status, 204)
        self.assertIn("Authorization", response.getheader("Access-Control-Allow-Headers"))

    def test_metrics(self):
        self.server.post("/v1/predict", {"phrase": "once"}, headers=self.key)
        response, text = self.server.request("GET", "/metrics", headers=self.key)
        self.assertEqual(response.status, 200)
        self.assertRegex(text, r'nextword_requests_total\{route="predict",code="200"\} [1-9]')
        self.assertRegex(text, r'nextword_errors_total\{route="predict"\} [1-9]')
        self.assertRegex(text, r'nextword_request_duration_seconds_count\{route="predict"\} [1-9]')
        self.assertRegex(text, r"\nnextword_queue_depth \d+\n")


class Shutdown(unittest.TestCase):
    def test_sigterm_answers_every_request_in_flight(self):
        server = Server("-t", "1")
        phrases = ["once upon a time there was a"] * 300
        expected = cli("generate", "-f", "json", "-n", "400", "once upon a")
        results, errors = [], []

        def client(i):
            try:
                if i % 2:
                    results.append(server.post("/v1/generate", {"phrase": "once upon a", "n": 400})[1]
                                   == expected)
                else:
                    response, text = server.post("/v1/predict", {"phrases": phrases})
                    results.append(response.status == 200 and len(json.loads(text)["results"]) == 300)
            except Exception as e:  # noqa: BLE001 -- any failure is a lost request
                errors.append(repr(e))
        threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        time.sleep(0.3)  # every request sent and queued behind the one worker
        server.process.send_signal(15)
        for t in threads:
            t.join()
        self.assertEqual(server.process.wait(timeout=60), 0)
        server.process.stderr.close()
        self.assertEqual(errors, [])
        self.assertEqual(results, [True] * 8)


def main():
    global BINARY, DATA
    BINARY, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0], "-v"])


if __name__ == "__main__":
    main()
