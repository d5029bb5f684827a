#include "views/attention_view.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <span>

#include "views/heat.h"
#include "views/records.h"

namespace nextword::views {
namespace {

using json = nlohmann::ordered_json;

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

}  // namespace

size_t width_of(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string shown_token(const Model& model, std::string_view token) {
  if (!model.subword) return std::string(token);
  std::string out;
  if (token.starts_with(' ')) {
    out = "\u2581";
    token.remove_prefix(1);
  }
  for (const char c : token) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> shown_tokens(const Model& model, const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  for (const std::string& t : tokens) out.push_back(shown_token(model, t));
  return out;
}

std::string token_noun(const Model& model) { return model.subword ? "piece" : "word"; }

std::string piece_label(const Model& model, bool several) {
  return !model.subword ? "" : several ? "pieces " : "piece ";
}

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

bool masked(const Config& c, size_t q, size_t k) { return c.causal && k > q; }

std::vector<size_t> strongest_keys(const Config& c, std::span<const float> row, size_t q,
                                   size_t n) {
  std::vector<size_t> keys;
  for (size_t k = 0; k < row.size(); ++k) {
    if (!masked(c, q, k)) keys.push_back(k);
  }
  std::stable_sort(keys.begin(), keys.end(), [row](size_t a, size_t b) { return row[a] > row[b]; });
  keys.resize(std::min(n, keys.size()));
  return keys;
}

std::string attends_to(const Config& c, const std::vector<std::string>& words,
                       const std::vector<float>& m, size_t q) {
  const size_t T = words.size();
  std::string line = "\u201c" + words[q] + "\u201d attends to: ";
  const std::span<const float> row(m.data() + q * T, T);
  const std::vector<size_t> keys = strongest_keys(c, row, q, 4);
  for (size_t i = 0; i < keys.size(); ++i) {
    line += (i > 0 ? ", " : "") + words[keys[i]] + " " + percent(row[keys[i]]);
  }
  return line;
}

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
  const std::vector<std::string> words = shown_tokens(model, p.input.tokens);
  const size_t T = words.size();
  const std::vector<float> m = attention_matrix(c, p, choice);
  size_t label = 4, column = 3;
  for (const std::string& w : words) {
    label = std::max(label, std::min<size_t>(width_of(w), 16));
    column = std::max(column, std::min<size_t>(width_of(w), 6));
  }
  std::string out = "attention, " + choice.describe(c) + " (rows: the " + token_noun(model) +
                    " attending; columns: the " + token_noun(model) + " attended to)\n";
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
  const std::vector<std::string> words = shown_tokens(model, p.input.tokens);
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
  const std::vector<std::string> words = shown_tokens(model, p.input.tokens);
  const size_t T = words.size();
  std::vector<std::string> lines;
  if (T == 0) return lines;
  for (int l = 0; l < c.n_layers; ++l) {
    const std::vector<float> m = attention_matrix(c, p, {l, -1});
    const std::span<const float> last(m.data() + (T - 1) * T, T);
    const std::vector<size_t> order = strongest_keys(c, last, T - 1, 3);
    std::string line =
        "layer " + std::to_string(l + 1) + ": \"" + words[T - 1] + "\" looked most at ";
    for (size_t i = 0; i < order.size(); ++i) {
      const size_t k = order[i];
      if (i > 0) line += i + 1 == order.size() ? " and " : ", ";
      line += (k == T - 1 ? "itself" : "\"" + words[k] + "\"") + " (" + percent(last[k]) + ")";
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace nextword::views
