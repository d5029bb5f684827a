#!/usr/bin/env python3
"""The HTML attention page in a real browser: headless Chromium (Debian's
`chromium`), driven over the DevTools protocol on a pipe, standard library
only.

    python3 tests/browser/html_test.py build/nextword data [--screenshot OUT.png]
        [--require-browser=ON]

Each page is opened from a file with background networking off. On the
default model the test checks that the heatmap rendered (T x T cells,
colored, a row explained on hover, switching layer and head re-renders).
On the default model, data/examples/fruit and a model of 0 layers it checks
the logit lens and the logit attribution as drawn against the commands:
every lens row (embed, 1.mid, 1, ...) with its top words, their
probabilities (the tooltip exactly, the label in tenths of a percent) and
the final word's rank and probability as `nextword lens --mid -f json`
gives them; every attribution bar as `nextword attribute -f json` gives its
part (names largest |value| first, value exactly in the tooltip, the sign's
side and color, the length in proportion), the logit and the constant
stated. On every page: nothing written to the console as an error, no
request but the file itself. Takes a screenshot of the default model's
whole page. Exits 77 (skipped) without chromium unless --require-browser=ON.
"""
import argparse
import base64
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from devtools import Browser, chromium_or_skip, console_errors, requested

HERE = os.path.dirname(os.path.abspath(__file__))
ZERO_LAYERS = os.path.join(HERE, "..", "fixtures", "parity",
                           "28-L0-h1-dk3-dv6-ff0-lear-laye-res-bidir-ssqrt-untied-bos")
# Rotary positions, rmsnorm and swiglu together (the modern options).
LLAMA_STYLE = os.path.join(HERE, "..", "fixtures", "parity",
                           "43-L3-h3-dk4-dv6-ff16s-rope-rmsn-res-causal-snone-tied")

# What the page drew of the lens and the attribution, read from the DOM.
DRAWN = """(() => {
  const text = (e, q) => (e.querySelector(q) || {}).textContent;
  const width = e => e ? Math.round(e.getBoundingClientRect().width) : null;
  const color = e => e ? getComputedStyle(e).backgroundColor : null;
  return {
    lensNote: document.getElementById("lens-note").textContent,
    lens: [...document.querySelectorAll("#lens tr.step")].map(r => ({
      step: text(r, "td.name"), rank: text(r, "td.rank"),
      title: r.querySelector("td.final").title, label: text(r, "td.final .p"),
      bar: width(r.querySelector("td.final .bar")),
      chips: [...r.querySelectorAll(".chip")].map(c => ({
        word: text(c, ".word"), label: text(c, ".p"), title: c.title,
        final: c.classList.contains("final"), fill: color(c)}))})),
    note: document.getElementById("attribution-note").textContent,
    legend: [...document.querySelectorAll(".legend .bar")].map(color),
    parts: [...document.querySelectorAll("#attribution tr.part")].map(r => {
      const bar = r.querySelector(".bar");
      return {name: text(r, "td.name"), value: text(r, "td.value"), title: r.title,
              sign: r.classList.contains("neg") ? "neg" : "pos",
              side: bar ? bar.parentElement.classList[1] : null, bar: width(bar), color: color(bar)};
    })};
})()"""


def float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def percent(p):
    """A probability as the page labels it (C++'s "%.1f%%" of the float)."""
    return "%.1f%%" % (float32(p) * 100.0)


def exact(title):
    """The number after the last ": " of a tooltip."""
    return float(title.rsplit(": ", 1)[1])


def command_json(nextword, command, model, phrase):
    out = subprocess.run([nextword, *command, "-m", model, "-f", "json", phrase],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def check_inspect(drawn, nextword, model, phrase, failures, word=None):
    """The page's lens and attribution against `lens --mid` and `attribute`
    (of word when given, else of the top prediction)."""
    def fail(message):
        failures.append("%s: %s" % (os.path.basename(model), message))
    lens = command_json(nextword, ["lens", "--mid"], model, phrase)["layers"]
    final = lens[-1]["top"][0]["word"]
    rows = drawn["lens"]
    if [r["step"] for r in rows] != [str(s["layer"]) for s in lens]:
        fail("lens steps %s, expected %s" % ([r["step"] for r in rows], [s["layer"] for s in lens]))
    for row, step in zip(rows, lens):
        where = "lens step %s: " % step["layer"]
        p = step["final_word_probability"]
        if row["rank"] != str(step["final_word_rank"]):
            fail(where + "rank %r, expected %d" % (row["rank"], step["final_word_rank"]))
        if exact(row["title"]) != p or row["label"] != percent(p):
            fail(where + "%r / %r for %s's probability %r" % (row["title"], row["label"], final, p))
        if row["bar"] is None or abs(row["bar"] - round(p * 100)) > 1:
            fail(where + "%s's bar is %s px for %r" % (final, row["bar"], p))
        got = [(c["word"], exact(c["title"]), c["label"]) for c in row["chips"]]
        want = [(t["word"], t["probability"], percent(t["probability"])) for t in step["top"]]
        if got != want:
            fail(where + "top words %s, expected %s" % (got, want))
        outlined = [c["word"] for c in row["chips"] if c["final"]]
        if outlined != [w for w, _, _ in want if w == final]:
            fail(where + "outlined %s, the final word is %s" % (outlined, final))
        if not all(c["fill"].startswith("rgb(") for c in row["chips"]):
            fail(where + "uncolored words: %s" % [c["fill"] for c in row["chips"]])
    if "\u201c%s\u201d" % final not in drawn["lensNote"]:
        fail("the lens note does not name %s: %r" % (final, drawn["lensNote"]))

    a = command_json(nextword, ["attribute"] + (["--word", word] if word else []), model, phrase)
    if a["word"] != (word or final):
        fail("attribute's word %s is not %s" % (a["word"], word or "the lens's " + final))
    parts = sorted(a["parts"], key=lambda q: -abs(q["value"]))  # stable: ties in stream order
    bars = drawn["parts"]
    if [b["name"] for b in bars] != [q["name"] for q in parts]:
        fail("bars %s, expected %s" % ([b["name"] for b in bars], [q["name"] for q in parts]))
    values = [exact(b["title"]) for b in bars]
    if values != [q["value"] for q in parts]:
        fail("bar values %s, expected %s" % (values, [q["value"] for q in parts]))
    if any(abs(x) < abs(y) for x, y in zip(values, values[1:])):
        fail("the bars are not largest |value| first: %s" % values)
    positive, negative = drawn["legend"] if len(drawn["legend"]) == 2 else (None, None)
    if not positive or positive == negative:
        fail("the legend's colors are %s" % drawn["legend"])
    largest = max((abs(v) for v in values), default=0)
    for b, v in zip(bars, values):
        sign = "neg" if v < 0 else "pos"
        if b["sign"] != sign or b["side"] != sign or b["color"] != (negative if v < 0 else positive):
            fail("%s (%r) is drawn as %s on the %s side in %s" % (b["name"], v, b["sign"], b["side"],
                                                                  b["color"]))
        if abs(float(b["value"]) - v) > 0.5e-4 + 1e-9 or b["value"][0] != ("-" if v < 0 else "+"):
            fail("%s reads %r for %r" % (b["name"], b["value"], v))
        length = round(abs(v) / largest * 200) if largest else 0
        if b["bar"] is None or abs(b["bar"] - length) > 1:
            fail("%s's bar is %s px, expected %d" % (b["name"], b["bar"], length))
    stated = re.search(r"\u201c(.*)\u201d after .*: (-?\d+\.\d{4}) = the (\d+) parts? below "
                       r"\+ the constant (-?\d+\.\d{4})", drawn["note"])
    if (not stated or stated.group(1) != a["word"] or abs(float(stated.group(2)) - a["logit"]) > 5e-5
            or int(stated.group(3)) != len(parts)
            or abs(float(stated.group(4)) - a["constant"]) > 5e-5):
        fail("the attribution note reads %r (logit %r, constant %r)"
             % (drawn["note"], a["logit"], a["constant"]))
    return "%s: %d lens rows, %d bars" % (os.path.basename(model), len(rows), len(bars))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("data")
    parser.add_argument("--screenshot")
    parser.add_argument("--require-browser", default="OFF")
    args = parser.parse_args()
    chromium = chromium_or_skip(args.require_browser)

    tmp = tempfile.mkdtemp()
    failures = []
    browser = None
    try:
        browser = Browser(chromium, os.path.join(tmp, "profile"))
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Network", "Page", "Log"):
            browser.send(domain + ".enable", session=session)

        def evaluate(expression):
            result = browser.send("Runtime.evaluate",
                                  {"expression": expression, "returnByValue": True}, session=session)
            if "exceptionDetails" in result:
                failures.append("evaluating %s: %s" % (expression, result["exceptionDetails"]))
                return None
            return result["result"].get("value")

        def open_page(model, phrase):
            """Writes the page of phrase on model and opens it; its file:// address."""
            page = os.path.join(tmp, os.path.basename(model) + ".html")
            subprocess.run([args.nextword, "attention", phrase, "-m", model, "-f", "html", "-o", page],
                           check=True)
            with open(page, encoding="utf-8") as f:
                html = f.read()
            for forbidden in ("http://", "https://", "//cdn", "<link", "src=", "@import", "url("):
                if forbidden in html:
                    failures.append("the page refers to something outside it: %r" % forbidden)
            browser.events = []
            browser.send("Page.navigate", {"url": "file://" + page}, session=session)
            browser.wait_for("Page.loadEventFired")
            return "file://" + page

        def check_quiet(url):
            """No console errors and no request but the page itself; how many errors."""
            errors = console_errors(browser.events)
            requests = requested(browser.events)
            if errors:
                failures.append("%s: console errors: %s" % (url, errors))
            if requests != [url]:
                failures.append("%s: requests other than the page itself: %s" % (url, requests))
            return len(errors)

        phrase = "once upon a time there was a"
        default = os.path.join(args.data, "stories")
        url = open_page(default, phrase)
        T = 8  # <bos> and the seven words
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
        inspected = []
        drawn = evaluate(DRAWN)
        if drawn:
            inspected.append(check_inspect(drawn, args.nextword, default, phrase, failures))
        page = browser.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        shot = browser.send("Page.captureScreenshot",
                            {"format": "png", "captureBeyondViewport": True,
                             "clip": {"x": 0, "y": 0, "width": page["width"],
                                      "height": page["height"], "scale": 1}}, session=session)
        png = base64.b64decode(shot["data"])
        if not png.startswith(b"\x89PNG") or len(png) < 10000:
            failures.append("the screenshot is %d bytes" % len(png))
        if args.screenshot:
            with open(args.screenshot, "wb") as f:
                f.write(png)
        requests = 1
        errors = check_quiet(url)

        # The lens and the attribution of three more models: no bos, one layer
        # and one head (fruit); no layer at all (its lens: embed alone); rope,
        # rmsnorm and swiglu (attribution through rmsnorm's scale).
        for model, words in ((os.path.join(args.data, "examples", "fruit"), "banana phone apple"),
                             (os.path.normpath(ZERO_LAYERS), "mat ?"),
                             (os.path.normpath(LLAMA_STYLE), "the little girl")):
            url = open_page(model, words)
            drawn = evaluate(DRAWN)
            if drawn:
                inspected.append(check_inspect(drawn, args.nextword, model, words, failures))
            requests += 1
            errors += check_quiet(url)
        print("%d cells (%d masked), hover: %s; first cell %s%%; %s; %d page(s), no other request "
              "checked; %d console errors; screenshot %d bytes"
              % (cells or 0, masked or 0, why, first, "; ".join(inspected), requests, errors, len(png)))
    finally:
        if browser:
            browser.close()
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
