"""Headless Chromium (Debian's `chromium`) driven over the DevTools protocol
on a pipe, standard library only: what the browser tests (html_test.py,
serve_page_test.py) share.
"""
import json
import os
import select
import shutil
import subprocess
import sys
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--no-first-run",
         "--no-default-browser-check", "--metrics-recording-only", "--mute-audio",
         "--window-size=1000,800"]


def chromium_or_skip(require_browser):
    """The chromium to run; without one, exits 77 (skipped) or, when
    require_browser is ON, fails."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        if require_browser.upper() in ("ON", "1", "TRUE"):
            sys.exit("chromium is not installed (apt-get install chromium)")
        print("skipped: no chromium")
        sys.exit(77)
    return chromium


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
        while True:
            reply = self.receive(deadline, method)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def receive(self, deadline, waiting_for):
        """The next message; TimeoutError when none is whole by deadline."""
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise TimeoutError(waiting_for)
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self.receive(deadline, method))

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:  # it is going away either way
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)


def console_errors(events):
    """The events that wrote an error to the console or threw."""
    return [e for e in events
            if (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
            or e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]


def requested(events):
    """The addresses the page asked for, in order."""
    return [e["params"]["request"]["url"] for e in events
            if e.get("method") == "Network.requestWillBeSent"]
