#!/usr/bin/env python3
"""The HTML attention page in a real browser: headless Chromium (Debian's
`chromium`), driven over the DevTools protocol on a pipe, standard library
only.

    python3 tests/browser/html_test.py build/nextword data [--screenshot OUT.png]
        [--require-browser=ON]

The page is opened from a file with background networking off. The test
checks that the heatmap rendered (T x T cells, colored, a row explained on
hover, switching layer and head re-renders), that nothing was written to the
console as an error, that no request left the file itself, and takes a
screenshot. Exits 77 (skipped) without chromium unless --require-browser=ON.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--no-first-run",
         "--no-default-browser-check", "--metrics-recording-only", "--mute-audio",
         "--window-size=1000,800"]


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands) and 4 (replies)."""

    def __init__(self, chromium, profile):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def wire():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)
        self.process = subprocess.Popen(
            [chromium, *FLAGS, "--user-data-dir=" + profile, "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer, self.next_id, self.events = b"", 0, []

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = self.receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(method)

    def receive(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e.get("method") == method for e in self.events):
                return
            self.events.append(self.receive())
        raise TimeoutError(method)

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:  # it is going away either way
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self.to_browser)
        os.close(self.from_browser)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("data")
    parser.add_argument("--screenshot")
    parser.add_argument("--require-browser", default="OFF")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        if args.require_browser.upper() in ("ON", "1", "TRUE"):
            sys.exit("chromium is not installed (apt-get install chromium)")
        print("skipped: no chromium")
        sys.exit(77)

    tmp = tempfile.mkdtemp()
    failures = []
    browser = None
    try:
        page = os.path.join(tmp, "attention.html")
        phrase = "once upon a time there was a"
        subprocess.run([args.nextword, "attention", phrase, "-m", os.path.join(args.data, "default"),
                        "-f", "html", "-o", page], check=True)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        for forbidden in ("http://", "https://", "//cdn", "<link", "src=", "@import", "url("):
            if forbidden in html:
                failures.append("the page refers to something outside it: %r" % forbidden)
        T = 8  # <bos> and the seven words

        browser = Browser(chromium, os.path.join(tmp, "profile"))
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Network", "Page", "Log"):
            browser.send(domain + ".enable", session=session)
        url = "file://" + page
        browser.send("Page.navigate", {"url": url}, session=session)
        browser.wait_for("Page.loadEventFired")

        def evaluate(expression):
            result = browser.send("Runtime.evaluate",
                                  {"expression": expression, "returnByValue": True}, session=session)
            if "exceptionDetails" in result:
                failures.append("evaluating %s: %s" % (expression, result["exceptionDetails"]))
                return None
            return result["result"].get("value")

        cells = evaluate("document.querySelectorAll('#map .cell').length")
        masked = evaluate("document.querySelectorAll('#map .cell.masked').length")
        colored = evaluate("[...document.querySelectorAll('#map .cell:not(.masked)')]"
                           ".filter(c => getComputedStyle(c).backgroundColor.startsWith('rgb(')).length")
        size = evaluate("(r => [r.width, r.height])(document.getElementById('map').getBoundingClientRect())")
        if cells != T * T:
            failures.append("%s cells, expected %d" % (cells, T * T))
        if masked != T * (T - 1) // 2:
            failures.append("%s masked cells, expected %d (the causal mask)" % (masked, T * (T - 1) // 2))
        if colored != T * (T + 1) // 2:
            failures.append("%s colored cells, expected %d" % (colored, T * (T + 1) // 2))
        if not size or size[0] < 200 or size[1] < 200:
            failures.append("the heatmap is %s pixels" % size)
        why = evaluate("document.getElementById('map').rows[2].dispatchEvent(new MouseEvent('mouseenter'));"
                       "document.getElementById('why').textContent")
        if not why or not why.startswith("\u201conce\u201d attends to:"):
            failures.append("hovering 'once' shows %r" % why)
        first = evaluate("document.querySelector('#map .cell').textContent")
        switched = evaluate("document.querySelectorAll('#layers button')[1].click();"
                            "document.querySelectorAll('#heads button')[2].click();"
                            "[document.querySelector('#layers button.on').textContent,"
                            " document.querySelector('#heads button.on').textContent,"
                            " document.querySelectorAll('#map .cell').length]")
        if switched != ["1", "2", T * T]:
            failures.append("switching to layer 1, head 2 gave %s" % switched)
        predictions = evaluate("document.getElementById('predictions').textContent")
        if not predictions or "little" not in predictions:
            failures.append("the predictions read %r" % predictions)
        shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
        png = base64.b64decode(shot["data"])
        if not png.startswith(b"\x89PNG") or len(png) < 10000:
            failures.append("the screenshot is %d bytes" % len(png))
        if args.screenshot:
            with open(args.screenshot, "wb") as f:
                f.write(png)

        errors = [e for e in browser.events
                  if (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
                  or e.get("method") == "Runtime.exceptionThrown"
                  or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
        requests = [e["params"]["request"]["url"] for e in browser.events
                    if e.get("method") == "Network.requestWillBeSent"]
        if errors:
            failures.append("console errors: %s" % errors)
        if requests != [url]:
            failures.append("requests other than the page itself: %s" % requests)
        print("%d cells (%d masked), hover: %s; first cell %s%%; %d request(s); %d console errors; "
              "screenshot %d bytes" % (cells or 0, masked or 0, why, first, len(requests),
                                       len(errors), len(png)))
    finally:
        if browser:
            browser.close()
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
