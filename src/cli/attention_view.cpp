#include "cli/attention_view.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>

#include "cli/output.h"

namespace nextword::cli {
namespace {

using json = nlohmann::ordered_json;

// Characters a UTF-8 word takes on screen (one per code point; good enough
// for the words of a vocabulary).
size_t width_of(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// The first `width` characters of s, padded with spaces to `width`.
std::string fit(const std::string& s, size_t width) {
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool starts = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    if (starts && n == width) break;
    n += starts ? 1 : 0;
    out += s[i];
  }
  return out + std::string(width - n, ' ');
}

struct Rgb {
  int r, g, b;
};

// The color scale of every picture (the HTML page gets it from here too):
// weight 0 is a dark blue-grey, weight 1 a warm yellow, through red.
constexpr Rgb kHeatStops[] = {{30, 32, 48}, {170, 60, 60}, {250, 200, 70}};

Rgb heat(float w) {
  w = std::clamp(w, 0.0f, 1.0f);
  const Rgb* stops = kHeatStops;
  const float x = w * 2.0f;
  const int i = std::min(1, static_cast<int>(x));
  const float f = x - static_cast<float>(i);
  auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g),
          mix(stops[i].b, stops[i + 1].b)};
}

std::string hex(Rgb c) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", c.r, c.g, c.b);
  return buffer;
}

std::string percent(float w) {
  return std::to_string(static_cast<int>(std::lround(w * 100))) + "%";
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;
    }
  }
  return out;
}

// JSON text that can sit inside a <script> element.
std::string script_json(const json& j) {
  std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool masked(const Config& c, size_t q, size_t k) { return c.causal && k > q; }

}  // namespace

std::string AttentionChoice::describe(const Config& c) const {
  std::string text =
      layer < 0 ? "mean of all " + std::to_string(c.n_layers) + " layers"
                : "layer " + std::to_string(layer + 1) + " of " + std::to_string(c.n_layers);
  text += head < 0 ? ", mean of " + std::to_string(c.n_heads) + " heads"
                   : ", head " + std::to_string(head + 1) + " of " + std::to_string(c.n_heads);
  return text;
}

std::vector<float> attention_matrix(const Config& c, const Prediction& p, AttentionChoice choice) {
  const size_t T = p.input.ids.size(), TT = T * T;
  std::vector<float> m(TT, 0.0f);
  int count = 0;
  for (int l = 0; l < c.n_layers; ++l) {
    if (choice.layer >= 0 && l != choice.layer) continue;
    for (int h = 0; h < c.n_heads; ++h) {
      if (choice.head >= 0 && h != choice.head) continue;
      const float* a = p.attention.data() + (static_cast<size_t>(l) * c.n_heads + h) * TT;
      for (size_t i = 0; i < TT; ++i) m[i] += a[i];
      ++count;
    }
  }
  for (float& x : m) x /= static_cast<float>(std::max(count, 1));
  return m;
}

Color terminal_color() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  if ((no_color != nullptr && *no_color != '\0') || !::isatty(STDOUT_FILENO) ||
      (term != nullptr && std::strcmp(term, "dumb") == 0)) {
    return Color::kNone;
  }
  const char* colorterm = std::getenv("COLORTERM");
  if (colorterm != nullptr &&
      (std::strcmp(colorterm, "truecolor") == 0 || std::strcmp(colorterm, "24bit") == 0)) {
    return Color::kTrue;
  }
  return Color::k256;
}

std::string attention_text(const Model& model, const Prediction& p, AttentionChoice choice,
                           Color color) {
  const Config& c = model.config;
  const std::vector<std::string>& words = p.input.tokens;
  const size_t T = words.size();
  const std::vector<float> m = attention_matrix(c, p, choice);
  size_t label = 4, column = 3;
  for (const std::string& w : words) {
    label = std::max(label, std::min<size_t>(width_of(w), 16));
    column = std::max(column, std::min<size_t>(width_of(w), 6));
  }
  std::string out = "attention, " + choice.describe(c) +
                    " (rows: the word attending; columns: the word attended to)\n";
  out += std::string(label + 1, ' ');
  for (const std::string& w : words) out += fit(w, column) + " ";
  while (out.back() == ' ') out.pop_back();
  out += "\n";
  static const char* const kShades[] = {"\u2591", "\u2592", "\u2593", "\u2588"};
  for (size_t q = 0; q < T; ++q) {
    out += fit(words[q], label) + " ";
    for (size_t k = 0; k < T; ++k) {
      const float w = m[q * T + k];
      std::string cell;
      if (masked(c, q, k)) {
        cell = std::string(column, ' ');
      } else if (color != Color::kNone) {
        const Rgb rgb = heat(w);
        char code[40];
        if (color == Color::kTrue) {
          std::snprintf(code, sizeof code, "\x1b[48;2;%d;%d;%dm", rgb.r, rgb.g, rgb.b);
        } else {
          auto six = [](int v) { return static_cast<int>(std::lround(v / 255.0 * 5)); };
          std::snprintf(code, sizeof code, "\x1b[48;5;%dm",
                        16 + 36 * six(rgb.r) + 6 * six(rgb.g) + six(rgb.b));
        }
        const std::string number = std::to_string(static_cast<int>(std::lround(w * 100)));
        cell = std::string(code) + (w > 0.5f ? "\x1b[30m" : "\x1b[97m") +
               std::string(column - std::min(column, number.size()), ' ') + number + "\x1b[0m";
      } else if (w < 0.02f) {
        cell = fit("\u00b7", column);
      } else {
        const int level = std::min(3, static_cast<int>(w * 4.0f));
        for (size_t i = 0; i < column; ++i) cell += kShades[level];
      }
      out += cell + " ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();  // the masked end of the row
    out += "\n";
  }
  if (color == Color::kNone) {
    out += std::string(label + 1, ' ') + "\u00b7 <2%  \u2591 <25%  \u2592 <50%  \u2593 <75%  " +
           "\u2588 75% and more\n";
  }
  return out + "next: " + prediction_record(model, "", p, Format::kText);
}

std::string attention_svg(const Model& model, const Prediction& p, AttentionChoice choice) {
  const Config& c = model.config;
  const std::vector<std::string>& words = p.input.tokens;
  const size_t T = words.size();
  const std::vector<float> m = attention_matrix(c, p, choice);
  size_t longest = 1;
  for (const std::string& w : words) longest = std::max(longest, std::min<size_t>(width_of(w), 20));
  const int cell = 32, left = static_cast<int>(longest) * 8 + 16,
            top = static_cast<int>(longest) * 6 + 44;
  const std::string heading = choice.describe(c) + ": row attends to column";
  // Wide enough for the heading too (about 7.5 pixels a character at 14 px).
  const int width = std::max(left + static_cast<int>(T) * cell + 16,
                             static_cast<int>(width_of(heading) * 15 / 2) + 16);
  const int height = top + static_cast<int>(T) * cell + 16;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
         "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) +
         " " + std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"13\">\n";
  out += "<title>nextword attention, " + xml_escape(choice.describe(c)) + "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  out += "<text x=\"8\" y=\"18\" font-size=\"14\">" + xml_escape(heading) + "</text>\n";
  for (size_t i = 0; i < T; ++i) {
    const int pos = static_cast<int>(i) * cell + cell / 2;
    out += "<text class=\"row\" x=\"" + std::to_string(left - 6) + "\" y=\"" +
           std::to_string(top + pos + 4) + "\" text-anchor=\"end\">" + xml_escape(words[i]) +
           "</text>\n";
    out += "<text class=\"column\" transform=\"translate(" + std::to_string(left + pos + 4) + "," +
           std::to_string(top - 6) + ") rotate(-60)\">" + xml_escape(words[i]) + "</text>\n";
  }
  for (size_t q = 0; q < T; ++q) {
    for (size_t k = 0; k < T; ++k) {
      const float w = m[q * T + k];
      const bool hidden = masked(c, q, k);
      out += "<rect class=\"cell" + std::string(hidden ? " masked" : "") + "\" x=\"" +
             std::to_string(left + static_cast<int>(k) * cell) + "\" y=\"" +
             std::to_string(top + static_cast<int>(q) * cell) + "\" width=\"" +
             std::to_string(cell - 2) + "\" height=\"" + std::to_string(cell - 2) + "\" fill=\"" +
             (hidden ? std::string("#eeeeee") : hex(heat(w))) + "\"><title>" +
             xml_escape(words[q]) + " \u2192 " + xml_escape(words[k]) + ": " +
             (hidden ? std::string("masked (a later word)") : percent(w)) + "</title></rect>\n";
    }
  }
  return out + "</svg>";
}

std::string attention_html(const Model& model, const std::string& phrase, const Prediction& p) {
  const Config& c = model.config;
  json heat_stops = json::array();
  for (const Rgb& stop : kHeatStops) heat_stops.push_back({stop.r, stop.g, stop.b});
  json predictions = json::array();
  for (const Candidate& cand : p.top) {
    predictions.push_back({{"word", model.vocab.word(cand.id)}, {"probability", cand.probability}});
  }
  const json data = {{"phrase", phrase},           {"tokens", p.input.tokens},
                     {"layers", c.n_layers},       {"heads", c.n_heads},
                     {"causal", c.causal},         {"attention", attention_layers(model, p)},
                     {"predictions", predictions}, {"heat", heat_stops}};
  // Everything the page needs is in this file: no fonts, scripts or images
  // are fetched, so it opens offline and from a mail attachment alike.
  return R"html(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nextword attention</title>
<style>
body { font-family: system-ui, sans-serif; margin: 24px; color: #1d1d28; background: #fafafc; }
h1 { font-size: 20px; margin: 0 0 4px; } .phrase { font-size: 18px; margin: 0 0 16px; }
.controls { margin: 6px 0; } .controls b { display: inline-block; width: 56px; color: #666; font-weight: normal; }
button { margin: 2px; padding: 4px 10px; border: 1px solid #bbb; border-radius: 4px; background: #fff; cursor: pointer; }
button.on { background: #2d2d48; color: #fff; border-color: #2d2d48; }
#map { border-collapse: collapse; margin: 12px 0; }
#map td { padding: 0; } #map th { font-weight: normal; font-size: 13px; padding: 2px 6px; }
#map th.col { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; height: 90px; }
#map th.row { text-align: right; cursor: default; }
.cell { width: 34px; height: 34px; border: 1px solid #fafafc; font-size: 11px; text-align: center; line-height: 34px; }
.cell.masked { background: #eee; } tr.hot th.row { font-weight: bold; color: #a33; }
tr.hot .cell { outline: 2px solid #2d2d48; }
#why { min-height: 1.5em; margin: 8px 0; } #predictions { margin-top: 12px; }
.bar { display: inline-block; height: 10px; background: #c84; margin-left: 6px; vertical-align: middle; }
</style></head>
<body>
<h1>Attention</h1>
<p class="phrase" id="phrase"></p>
<div class="controls"><b>layer</b><span id="layers"></span></div>
<div class="controls"><b>head</b><span id="heads"></span></div>
<table id="map"></table>
<div id="why">Hover over a word on the left to see which words it attends to.</div>
<div id="predictions"></div>
<script id="data" type="application/json">)html" +
         script_json(data) + R"html(</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const T = D.tokens.length;
let layer = D.layers - 1, head = -1;  // -1: the mean
function matrix() {
  const m = new Array(T * T).fill(0);
  let n = 0;
  for (let l = 0; l < D.layers; ++l) {
    if (layer >= 0 && l !== layer) continue;
    for (let h = 0; h < D.heads; ++h) {
      if (head >= 0 && h !== head) continue;
      D.attention[l][h].flat().forEach((w, i) => { m[i] += w; });
      ++n;
    }
  }
  return m.map(w => w / Math.max(n, 1));
}
function heat(w) {
  const stops = D.heat;
  const x = Math.min(Math.max(w, 0), 1) * 2, i = Math.min(1, Math.floor(x)), f = x - i;
  const c = stops[i].map((v, j) => Math.round(v + (stops[i + 1][j] - v) * f));
  return "rgb(" + c.join(",") + ")";
}
function buttons(id, count, get, set) {
  const box = document.getElementById(id);
  box.textContent = "";
  for (let i = -1; i < count; ++i) {
    const b = document.createElement("button");
    b.textContent = i < 0 ? "mean" : String(i + 1);
    if (i === get()) b.className = "on";
    b.onclick = () => { set(i); render(); };
    box.appendChild(b);
  }
}
function render() {
  buttons("layers", D.layers, () => layer, v => { layer = v; });
  buttons("heads", D.heads, () => head, v => { head = v; });
  const m = matrix(), table = document.getElementById("map");
  table.textContent = "";
  const header = table.insertRow();
  header.appendChild(document.createElement("th"));
  D.tokens.forEach(t => { const th = document.createElement("th"); th.className = "col"; th.textContent = t; header.appendChild(th); });
  for (let q = 0; q < T; ++q) {
    const row = table.insertRow();
    const th = document.createElement("th");
    th.className = "row";
    th.textContent = D.tokens[q];
    row.appendChild(th);
    row.onmouseenter = () => explain(q, m, row);
    for (let k = 0; k < T; ++k) {
      const td = row.insertCell(), cell = document.createElement("div"), w = m[q * T + k];
      cell.className = "cell";
      if (D.causal && k > q) {
        cell.className += " masked";
        cell.title = D.tokens[q] + " \u2192 " + D.tokens[k] + ": masked (a later word)";
      } else {
        cell.style.background = heat(w);
        cell.style.color = w > 0.5 ? "#000" : "#fff";
        cell.textContent = Math.round(w * 100);
        cell.title = D.tokens[q] + " \u2192 " + D.tokens[k] + ": " + (w * 100).toFixed(1) + "%";
      }
      td.appendChild(cell);
    }
  }
  explain(T - 1, m, table.rows[T]);
}
function explain(q, m, row) {
  document.querySelectorAll("tr.hot").forEach(r => r.classList.remove("hot"));
  row.classList.add("hot");
  const order = [...Array(T).keys()].filter(k => !(D.causal && k > q))
    .sort((a, b) => m[q * T + b] - m[q * T + a]).slice(0, 4);
  document.getElementById("why").textContent = "\u201c" + D.tokens[q] + "\u201d attends to: " +
    order.map(k => D.tokens[k] + " " + Math.round(m[q * T + k] * 100) + "%").join(", ");
}
document.getElementById("phrase").textContent = D.phrase;
const list = document.getElementById("predictions");
list.textContent = "Next word: ";
D.predictions.forEach(p => {
  const item = document.createElement("div");
  item.textContent = p.word + " " + (p.probability * 100).toFixed(1) + "%";
  const bar = document.createElement("span");
  bar.className = "bar";
  bar.style.width = Math.round(p.probability * 200) + "px";
  item.appendChild(bar);
  list.appendChild(item);
});
render();
</script>
</body></html>)html";
}

std::string attention_bertviz(const Model& model, const Prediction& p) {
  json layers = json::array();
  for (json& layer : attention_layers(model, p)) {
    layers.push_back(json::array({std::move(layer)}));  // a batch of one
  }
  return json{{"tokens", p.input.tokens}, {"attention", std::move(layers)}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

std::vector<std::string> explain_lines(const Model& model, const Prediction& p) {
  const Config& c = model.config;
  const std::vector<std::string>& words = p.input.tokens;
  const size_t T = words.size();
  std::vector<std::string> lines;
  if (T == 0) return lines;
  for (int l = 0; l < c.n_layers; ++l) {
    const std::vector<float> m = attention_matrix(c, p, {l, -1});
    std::vector<size_t> order(T);
    std::iota(order.begin(), order.end(), size_t{0});
    const float* last = m.data() + (T - 1) * T;
    std::stable_sort(order.begin(), order.end(),
                     [last](size_t a, size_t b) { return last[a] > last[b]; });
    std::string line =
        "layer " + std::to_string(l + 1) + ": \"" + words[T - 1] + "\" looked most at ";
    for (size_t i = 0; i < std::min<size_t>(3, T); ++i) {
      const size_t k = order[i];
      if (i > 0) line += i + 1 == std::min<size_t>(3, T) ? " and " : ", ";
      line += (k == T - 1 ? "itself" : "\"" + words[k] + "\"") + " (" + percent(last[k]) + ")";
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace nextword::cli
