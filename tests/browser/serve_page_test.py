#!/usr/bin/env python3
"""The live page of `nextword serve` in a real browser, used as a person
would: headless Chromium (Debian's `chromium`) driven over the DevTools
protocol on a pipe (devtools.py), standard library only.

    python3 tests/browser/serve_page_test.py build/nextword data [--out DIR]
        [--require-browser=ON]

Starts `nextword serve --port 0` on data/stories, reads its port from the
line it writes on stderr and opens http://127.0.0.1:PORT/. With real input
events (a mouse click into the text box, then key events one character at a
time) it types "once upon a " and "ti". After each keystroke, when the page
has settled (its status speaks of the word being typed, no request in
flight, the attention drawn for the current context), the suggestions shown
(#suggestions .suggestion, their data-word) must be the words of `nextword
complete -f json TEXT`, and after a space the first must be the top word of
`nextword predict -f json TEXT` (its first prediction with a letter or
digit: `complete` suggests only words; when the completion comes from the
model);
the attention part is hidden while the text before the word being typed is
blank. On the text typed it checks the logit lens and the attribution as
drawn against `nextword lens --mid` and `nextword attribute`
(html_test.check_inspect); hovering another suggestion in the vocabulary
(a real mouse move) marks it and makes the attribution that word's, against `attribute --word`. A real
Tab key appends the first suggestion and a space to #text, the focus
staying there. Then, clicking the buttons of #layers and #heads, every drawn
attention cell (#map .cell: its tooltip's percentage with one decimal, the
causal mask's cells marked masked) is checked against POST /v1/attention
{"format": "json"} for the completion's context: the page's first choice
(the last layer's mean, kept when the text changes), the mean of
everything, a head's mean over the layers, single heads, a layer's mean;
and the grid (one small table per head of the layer, each checked,
also after changing the layer in grid mode). The means are computed as the
program does (float32 sums in layer then head order, divided by the count).
Throughout: nothing written to the console as an error, no request to any
address but the server's, no request failed but those the page aborted
itself, no HTTP error. The server must stop on SIGTERM with status 0.
Screenshots of the whole page go to --out (default: a new temporary folder,
printed): typed.png, hover.png, tab.png, grid.png. Exits 77 (skipped)
without chromium unless --require-browser=ON.
"""
import argparse
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from devtools import Browser, chromium_or_skip, console_errors, requested
from html_test import DRAWN, check_inspect, float32

TIMEOUT = 10  # seconds for any one thing the page should do
FIRST = "once upon a "
SECOND = "ti"

# What a person sees of the text box, the suggestions and the attention.
SNAPSHOT = """(() => {
  const $ = id => document.getElementById(id), box = $("text");
  return {
    value: box.value, cursor: box.selectionStart, focused: document.activeElement === box,
    status: $("status").textContent, statusClass: $("status").className,
    words: [...document.querySelectorAll("#suggestions .suggestion")].map(s => s.dataset.word),
    explained: !$("explained").hidden, context: $("context").textContent,
    rows: $("map").rows.length, note: $("attribution-note").textContent,
    layers: [...document.querySelectorAll("#layers button")].map(b => b.textContent),
    heads: [...document.querySelectorAll("#heads button")].map(b => b.textContent),
    layer: (document.querySelector("#layers button.on") || {}).textContent,
    head: (document.querySelector("#heads button.on") || {}).textContent,
    mapHidden: $("map").hidden, gridHidden: $("grid").hidden,
    lensRows: document.querySelectorAll("#lens tr.step").length,
    parts: document.querySelectorAll("#attribution tr.part").length,
  };
})()"""

# The tooltip and maskedness of each cell of the heatmap, row by row, and of
# each small table of the grid.
CELLS = """(() => {
  const cells = root => [...root.querySelectorAll(".cell")].map(
    c => [c.title, c.classList.contains("masked")]);
  return {map: cells(document.getElementById("map")),
          grid: [...document.querySelectorAll("#grid figure")].map(
            f => ({caption: f.querySelector("figcaption").textContent, cells: cells(f)}))};
})()"""


class Server:
    """`nextword serve --port 0` with its stderr in a file."""

    def __init__(self, nextword, model, log):
        self.log = log
        with open(log, "w") as f:
            self.process = subprocess.Popen([nextword, "serve", "--port", "0", "-m", model],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=f)
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        deadline = time.monotonic() + TIMEOUT
        while True:
            listening = re.search(r"listening on http://127\.0\.0\.1:(\d+) ", self.stderr())
            if listening:
                self.port = int(listening.group(1))
                self.url = "http://127.0.0.1:%d/" % self.port
                return
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("nextword serve did not start: %r" % self.stderr())
            time.sleep(0.02)

    def stderr(self):
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f.read()

    def get(self, path):
        with self.opener.open(self.url + path, timeout=TIMEOUT) as answer:
            return json.loads(answer.read())

    def post(self, path, body):
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with self.opener.open(request, timeout=TIMEOUT) as answer:
            return json.loads(answer.read())

    def stop(self):
        """SIGTERM; its exit status (None if it had to be killed)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None


def cli(nextword, model, command, text):
    out = subprocess.run([nextword, *command, "-m", model, "-f", "json", text],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def in_vocabulary(nextword, model, word, phrase):
    return subprocess.run([nextword, "attribute", "-m", model, "-q", "--word", word, "--", phrase],
                          capture_output=True).returncode == 0


def top_word(predictions, special):
    """The first prediction that is a word, as `complete` suggests them (a
    letter or digit in it, not <unk> or <bos>)."""
    return next((p["word"] for p in predictions
                 if p["word"] not in special and any(c.isalnum() for c in p["word"])), None)


def expected_cells(record, layer, head):
    """Each cell's tooltip and maskedness for the page's layer and head
    buttons (0: the mean), from /v1/attention's weights."""
    weights, tokens, causal = record["attention"], record["tokens"], record["causal"]
    T = len(tokens)
    chosen = [(l, h) for l in range(len(weights)) for h in range(len(weights[l]))
              if layer in (0, l + 1) and head in (0, h + 1)]
    mean = [0.0] * (T * T)
    for l, h in chosen:  # as views::attention_matrix: float32 sums, then / count
        for q in range(T):
            for k in range(T):
                mean[q * T + k] = float32(mean[q * T + k] + weights[l][h][q][k])
    mean = [float32(m / len(chosen)) for m in mean]
    cells = []
    for q in range(T):
        for k in range(T):
            pair = "%s \u2192 %s: " % (tokens[q], tokens[k])
            if causal and k > q:
                cells.append([pair + "masked (a later word)", True])
            else:
                cells.append([pair + "%.1f%%" % (mean[q * T + k] * 100.0), False])
    return cells


def differences(drawn, expected):
    """The cells drawn otherwise than expected, as "drawn (expected ...)"."""
    if len(drawn) != len(expected):
        return "%d cells, expected %d" % (len(drawn), len(expected))
    return ", ".join("%r (expected %r)" % (d, e) for d, e in zip(drawn, expected) if d != e)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("data")
    parser.add_argument("--out")
    parser.add_argument("--require-browser", default="OFF")
    args = parser.parse_args()
    chromium = chromium_or_skip(args.require_browser)
    model = os.path.join(args.data, "stories")
    out = args.out or tempfile.mkdtemp(prefix="nextword-serve-page-")
    os.makedirs(out, exist_ok=True)

    started = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))  # the cleanup still runs
    tmp = tempfile.mkdtemp()
    failures = []
    browser = server = None
    try:
        server = Server(args.nextword, model, os.path.join(tmp, "serve.log"))
        config = server.get("v1/model")["config"]
        causal, special = config["causal"], (config["unk_token"], config["bos_token"])
        browser = Browser(chromium, os.path.join(tmp, "profile"))
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Network", "Page", "Log"):
            browser.send(domain + ".enable", session=session)

        def send(method, params=None):
            return browser.send(method, params, session=session)

        def evaluate(expression):
            result = send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
            if "exceptionDetails" in result:
                raise RuntimeError("evaluating %s: %s" % (expression, result["exceptionDetails"]))
            return result["result"].get("value")

        def in_flight():
            """The requests the page has started and not finished."""
            begun, ended = set(), set()
            for e in browser.events:
                if e.get("method") == "Network.requestWillBeSent":
                    begun.add(e["params"]["requestId"])
                elif e.get("method") in ("Network.loadingFinished", "Network.loadingFailed"):
                    ended.add(e["params"]["requestId"])
            return begun - ended

        def settle(ready, what):
            """The page's snapshot once ready(snapshot) holds with no request
            in flight, polled; on timeout a failure and the last snapshot."""
            deadline = time.monotonic() + TIMEOUT
            while True:
                snap = evaluate(SNAPSHOT)
                if ready(snap) and not in_flight():
                    return snap
                if time.monotonic() > deadline:
                    failures.append("%s: the page did not settle in %ds: %s (requests in flight: %d)"
                                    % (what, TIMEOUT, snap, len(in_flight())))
                    return snap
                time.sleep(0.02)

        def point(element):
            """The middle of element (a JavaScript expression), scrolled into view."""
            return evaluate("(e => { e.scrollIntoView({block: 'center', inline: 'nearest'});"
                            " const r = e.getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })(%s)" % element)

        def mouse(kind, x, y, **more):
            send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **more})

        def click(element):
            x, y = point(element)
            mouse("mouseMoved", x, y)
            mouse("mousePressed", x, y, button="left", buttons=1, clickCount=1)
            mouse("mouseReleased", x, y, button="left", buttons=0, clickCount=1)

        def away():
            """The mouse off everything that reacts to it (the right margin)."""
            mouse("mouseMoved", 995, 2)

        def key(char):
            if char == " ":
                code, vk = "Space", 32
            else:
                code, vk = "Key" + char.upper(), ord(char.upper())
            common = {"key": char, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
            send("Input.dispatchKeyEvent", {"type": "keyDown", "text": char, "unmodifiedText": char,
                                            **common})
            send("Input.dispatchKeyEvent", {"type": "keyUp", **common})

        def tab():
            common = {"key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9, "nativeVirtualKeyCode": 9}
            send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **common})
            send("Input.dispatchKeyEvent", {"type": "keyUp", **common})

        def screenshot(name):
            page = send("Page.getLayoutMetrics")["cssContentSize"]
            shot = send("Page.captureScreenshot",
                        {"format": "png", "captureBeyondViewport": True,
                         "clip": {"x": 0, "y": 0, "width": page["width"], "height": page["height"],
                                  "scale": 1}})
            png = base64.b64decode(shot["data"])
            if not png.startswith(b"\x89PNG") or len(png) < 10000:
                failures.append("the screenshot %s is %d bytes" % (name, len(png)))
            with open(os.path.join(out, name), "wb") as f:
                f.write(png)

        attention = {}  # context -> /v1/attention's record (with the model's "causal")

        def weights(context):
            if context not in attention:
                attention[context] = server.post("v1/attention", {"phrase": context, "format": "json"})
                attention[context]["causal"] = causal
            return attention[context]

        def check_text(text):
            """Waits for the page to settle on text; checks the suggestions
            against the CLI; the completion record."""
            record = cli(args.nextword, model, ["complete"], text)
            words = [s["word"] for s in record["suggestions"]]
            status = ("Completing \u201c%s\u201d" % record["prefix"]) if record["prefix"] else "The next word"
            context = record["context"]
            reading = "Reading \u201c%s\u201d" % context.strip()
            rows = len(weights(context)["tokens"]) + 1 if context.strip() else 0

            def ready(s):
                if s["value"] != text or s["status"] != status:
                    return False
                if not context.strip():
                    return not s["explained"]
                return s["explained"] and s["context"].startswith(reading) and s["rows"] == rows
            snap = settle(ready, repr(text))
            where = "after typing %r: " % text
            if snap["words"] != words:
                failures.append(where + "the page shows %s, `complete` says %s" % (snap["words"], words))
            if text.endswith(" ") and record["suggestions"] and record["suggestions"][0]["source"] == "model":
                top = top_word(cli(args.nextword, model, ["predict", "-k", "50"], text)["predictions"],
                               special)
                if top is None or snap["words"][:1] not in ([top], [top[:1].upper() + top[1:]]):
                    failures.append(where + "the first suggestion of %s is not predict's top %r"
                                    % (snap["words"], top))
            if snap["statusClass"]:
                failures.append(where + "the status is an error: %r" % snap["status"])
            return record, snap

        shown = {}  # the buttons lit (indices): the page's first choice is the last layer's mean

        def check_cells(record, layer=None, head=None):
            """Clicks the buttons of layer and head (indices) unless None;
            checks the buttons lit and every cell drawn."""
            tokens = record["tokens"]
            layers = ["mean"] + [str(i) for i in range(1, len(record["attention"]) + 1)]
            heads = ["mean"] + [str(i) for i in range(1, len(record["attention"][0]) + 1)]
            shown.setdefault("layer", len(layers) - 1)
            shown.setdefault("head", 0)
            if layer is not None:
                click("document.querySelectorAll('#layers button')[%d]" % layer)
                shown["layer"] = layer
            if head is not None:
                click("document.querySelectorAll('#heads button')[%d]" % head)
                shown["head"] = head
            grid = shown["head"] == len(heads)
            want_layer = layers[shown["layer"]]
            want_head = "grid" if grid else heads[shown["head"]]
            what = "layer %s, head %s" % (want_layer, want_head)
            snap = settle(lambda s: s["layer"] == want_layer and s["head"] == want_head
                          and s["mapHidden"] == grid and s["gridHidden"] != grid, what)
            if snap["layers"] != layers or snap["heads"] != heads + (["grid"] if len(heads) > 2 else []):
                failures.append("%s: buttons %s and %s" % (what, snap["layers"], snap["heads"]))
            drawn = evaluate(CELLS)
            number = layers.index(want_layer)
            if grid:
                captions = [f["caption"] for f in drawn["grid"]]
                if captions != ["head " + h for h in heads[1:]]:
                    failures.append("%s: the grid's figures are %s" % (what, captions))
                for h, figure in enumerate(drawn["grid"], 1):
                    want = expected_cells(record, number, h)
                    if figure["cells"] != want:
                        failures.append("%s: %s draws %s" % (what, figure["caption"],
                                                             differences(figure["cells"], want)))
                return len(drawn["grid"])
            want = expected_cells(record, number, heads.index(want_head))
            if drawn["map"] != want:
                failures.append("%s: the cells %s" % (what, differences(drawn["map"], want)))
            if len(drawn["map"]) != len(tokens) ** 2:
                failures.append("%s: %d cells for %d tokens" % (what, len(drawn["map"]), len(tokens)))
            return len(drawn["map"])

        send("Page.navigate", {"url": server.url})
        browser.wait_for("Page.loadEventFired")
        check_text("")
        click("document.getElementById('text')")
        typed = ""
        for char in FIRST + SECOND:
            key(char)
            typed += char
            record, snap = check_text(typed)
        if not snap["focused"] or snap["cursor"] != len(typed):
            failures.append("after typing, the focus is %s and the cursor at %s"
                            % (snap["focused"], snap["cursor"]))
        context = record["context"]
        cells = check_cells(weights(context))  # the page's own choice
        if snap["lensRows"] == 0 or snap["parts"] == 0:
            failures.append("no lens (%d rows) or attribution (%d parts)" % (snap["lensRows"], snap["parts"]))
        inspected = ["as typed, " + check_inspect(evaluate(DRAWN), args.nextword, model, context, failures)]
        screenshot("typed.png")

        # Hovering a suggestion (not the first) in the vocabulary explains it.
        hovered = next((w for w in snap["words"][1:]
                        if in_vocabulary(args.nextword, model, w.lower(), context)), None)
        if hovered is None:
            failures.append("no suggestion of %s is in the vocabulary" % snap["words"])
        else:
            before = snap["note"]
            x, y = point("[...document.querySelectorAll('#suggestions .suggestion')]"
                         ".find(s => s.dataset.word === %s)" % json.dumps(hovered))
            mouse("mouseMoved", x, y)
            word = hovered.lower()
            snap = settle(lambda s: "\u201c%s\u201d" % word in s["note"]
                          and s["context"].endswith("attribution of \u201c%s\u201d." % word), "hover " + word)
            if snap["note"] == before:
                failures.append("hovering %s left the attribution note as it was: %r" % (hovered, before))
            inspected.append("hovering %s, " % hovered + check_inspect(
                evaluate(DRAWN), args.nextword, model, context, failures, word=word))
            chosen = evaluate("[...document.querySelectorAll('#suggestions .suggestion.chosen')]"
                              ".map(s => s.dataset.word)")
            if chosen != [hovered]:
                failures.append("hovering %s marks %s as chosen" % (hovered, chosen))
            screenshot("hover.png")
            away()

        # Tab takes the first suggestion and a space.
        first = snap["words"][0] if snap["words"] else None
        tab()
        accepted = typed[:len(typed) - len(record["prefix"])] + "%s " % first
        record, snap = check_text(accepted)
        if not snap["focused"] or snap["cursor"] != len(accepted):
            failures.append("after Tab, the focus is %s and the cursor at %s of %r"
                            % (snap["focused"], snap["cursor"], snap["value"]))
        screenshot("tab.png")

        # Layers and heads, clicked, against /v1/attention for the context.
        record = weights(record["context"])
        n_layers, n_heads = len(record["attention"]), len(record["attention"][0])
        cells += check_cells(record)  # the choice kept on new data
        for layer, head in ((0, 0), (None, 2), (2, None), (None, 0), (n_layers, n_heads), (1, 1)):
            cells += check_cells(record, layer, head)
        figures = 0
        if n_heads > 1:
            figures += check_cells(record, head=n_heads + 1)  # the grid of layer 1
            figures += check_cells(record, layer=n_layers)    # still a grid on another layer
            screenshot("grid.png")
            cells += check_cells(record, head=3)               # back to one head

        # Quiet: no console error, nothing but the server, nothing failed.
        errors = console_errors(browser.events)
        if errors:
            failures.append("console errors: %s" % errors)
        urls = requested(browser.events)
        elsewhere = [u for u in urls if not u.startswith(server.url)]
        if elsewhere or not urls:
            failures.append("requests to other addresses: %s" % elsewhere)
        aborted = 0
        for e in browser.events:
            if e.get("method") == "Network.loadingFailed":
                if e["params"].get("canceled"):
                    aborted += 1
                else:
                    failures.append("a request failed: %s" % e["params"])
            elif e.get("method") == "Network.responseReceived" and e["params"]["response"]["status"] >= 400:
                failures.append("HTTP %d for %s" % (e["params"]["response"]["status"],
                                                    e["params"]["response"]["url"]))
        stopped = server.stop()
        if stopped != 0:
            failures.append("nextword serve stopped on SIGTERM with status %s: %r" % (stopped, server.stderr()))
        print("typed %r + Tab -> %r, suggestions as `complete` at each of %d keystrokes; %s; "
              "%d attention cells and %d grid figures checked; %d requests to %s (%d aborted by the page), "
              "%d console errors; screenshots in %s; %.1f s"
              % (FIRST + SECOND, accepted, len(FIRST + SECOND) + 1, "; ".join(inspected), cells, figures,
                 len(urls), server.url, aborted, len(errors), out, time.monotonic() - started))
    finally:
        if browser:
            browser.close()
        if server:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
