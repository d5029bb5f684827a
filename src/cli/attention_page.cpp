#include "cli/attention_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/error.h"
#include "cli/attention_view.h"
#include "cli/heat.h"

namespace nextword::cli {
namespace {

using json = nlohmann::ordered_json;

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

// A weight in thousandths: finer than anything the page shows (whole percent
// in a cell, tenths of a percent in its tooltip), and three digits a cell.
int per_mille(float w) { return static_cast<int>(std::lround(std::clamp(w, 0.0f, 1.0f) * 1000)); }

// How the page draws a weight of v thousandths: [fill, ink, the cell's
// label in whole percent, the tooltip's percent with one decimal].
json drawn(int v) {
  const std::string tenths = std::to_string(v / 10) + "." + std::to_string(v % 10) + "%";
  return json::array({hex(heat(static_cast<float>(v) / 1000)), v > 500 ? "#000" : "#fff",
                      std::to_string(static_cast<int>(std::lround(v / 10.0))), tenths});
}

// "mean", "1", ..., "count": the buttons of a choice, the mean first.
json labels(int count) {
  json out = json::array({"mean"});
  for (int i = 1; i <= count; ++i) out.push_back(std::to_string(i));
  return out;
}

}  // namespace

std::string attention_html(const Model& model, const std::string& phrase, const Prediction& p) {
  const Config& c = model.config;
  const std::vector<std::string>& words = p.input.tokens;
  const size_t T = words.size();
  // views[layer + 1][head + 1]: each row's visible weights (the keys before
  // the causal mask) and its hover line.
  std::map<int, json> scale;
  json views = json::array();
  for (int l = -1; l < c.n_layers; ++l) {
    json heads = json::array();
    for (int h = -1; h < c.n_heads; ++h) {
      const std::vector<float> m = attention_matrix(c, p, {l, h});
      json rows = json::array(), why = json::array();
      for (size_t q = 0; q < T; ++q) {
        json visible = json::array();
        for (size_t k = 0; k < T && !masked(c, q, k); ++k) {
          const int v = per_mille(m[q * T + k]);
          if (!scale.contains(v)) scale[v] = drawn(v);
          visible.push_back(v);
        }
        rows.push_back(std::move(visible));
        why.push_back(attends_to(c, words, m, q));
      }
      heads.push_back({{"rows", std::move(rows)}, {"why", std::move(why)}});
    }
    views.push_back(std::move(heads));
  }
  json scale_json = json::object();
  for (auto& [v, look] : scale) scale_json[std::to_string(v)] = std::move(look);
  json predictions = json::array();
  for (const Candidate& cand : p.top) {
    char text[32];
    std::snprintf(text, sizeof text, " %.1f%%", cand.probability * 100.0);
    predictions.push_back({{"text", model.vocab.word(cand.id) + text},
                           {"bar", std::to_string(std::lround(cand.probability * 200.0)) + "px"}});
  }
  const json data = {{"phrase", phrase},
                     {"tokens", words},
                     {"layers", labels(c.n_layers)},
                     {"heads", labels(c.n_heads)},
                     {"layer", c.n_layers},  // the last layer
                     {"head", 0},            // the mean of its heads
                     {"views", std::move(views)},
                     {"scale", std::move(scale_json)},
                     {"predictions", std::move(predictions)}};
  std::string page(attention_page_template());
  const size_t at = page.find(kPageData);
  if (at == std::string::npos) {
    throw Error(ExitCode::kFailure, "attention_page.html: has no " + std::string(kPageData));
  }
  page.replace(at, kPageData.size(), script_json(data));
  if (page.ends_with('\n')) page.pop_back();  // the record's own newline ends it
  return page;
}

}  // namespace nextword::cli
