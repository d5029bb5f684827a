// The attention pictures (src/cli/attention_view.h, attention_page.h): the
// means of attention_matrix against hand-computed values, the explanations,
// the text heatmap's shades, the SVG's cells, bertviz's shape and the HTML
// page's data, on hand-made weights, the fruit example (data/examples/fruit:
// "banana apple" attends [[1, 0], [0.5, 0.5]]) and the default model.
#include "views/attention_view.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "views/attention_page.h"
#include "views/heat.h"
#include "views/records.h"

using namespace nextword;
using namespace nextword::views;

namespace {

const Model& load(const std::string& name) {
  static std::map<std::string, Model> models;
  auto it = models.find(name);
  if (it == models.end()) {
    it = models
             .emplace(name, load_model(ModelPaths::in_directory(std::string(NEXTWORD_DATA_DIR) +
                                                                "/" + name)))
             .first;
  }
  return it->second;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Two layers of two heads over T = 2 words; the first word sees only itself.
// Row 2 of each head: l0h0 [0.2, 0.8], l0h1 [0.6, 0.4], l1h0 [0.5, 0.5],
// l1h1 [0.9, 0.1].
Prediction two_by_two(Config& c) {
  c.n_layers = 2;
  c.n_heads = 2;
  c.causal = true;
  Prediction p;
  p.input.tokens = {"a", "b"};
  p.input.ids = {1, 2};
  p.attention = {1, 0, 0.2f, 0.8f, 1, 0, 0.6f, 0.4f, 1, 0, 0.5f, 0.5f, 1, 0, 0.9f, 0.1f};
  return p;
}

void check_matrix(const std::vector<float>& m, std::vector<float> expected) {
  REQUIRE(m.size() == expected.size());
  for (size_t i = 0; i < m.size(); ++i) CHECK(m[i] == Approx(expected[i]).margin(1e-6));
}

}  // namespace

TEST_CASE("attention_matrix: one head, the mean of a layer's heads, of a head over layers, of all",
          "[attention_view]") {
  Config c;
  const Prediction p = two_by_two(c);
  check_matrix(attention_matrix(c, p, {1, 0}), {1, 0, 0.5f, 0.5f});
  check_matrix(attention_matrix(c, p, {0, -1}), {1, 0, 0.4f, 0.6f});     // (0.2 + 0.6) / 2
  check_matrix(attention_matrix(c, p, {1, -1}), {1, 0, 0.7f, 0.3f});     // (0.5 + 0.9) / 2
  check_matrix(attention_matrix(c, p, {-1, 0}), {1, 0, 0.35f, 0.65f});   // (0.2 + 0.5) / 2
  check_matrix(attention_matrix(c, p, {-1, 1}), {1, 0, 0.75f, 0.25f});   // (0.6 + 0.9) / 2
  check_matrix(attention_matrix(c, p, {-1, -1}), {1, 0, 0.55f, 0.45f});  // 2.2 / 4
  CHECK(AttentionChoice{-1, 1}.describe(c) == "mean of all 2 layers, head 2 of 2");
  CHECK(AttentionChoice{0, -1}.describe(c) == "layer 1 of 2, mean of 2 heads");
}

TEST_CASE("strongest keys: by weight, the earlier on a tie, never a masked key",
          "[attention_view]") {
  Config c;
  c.causal = true;
  const std::vector<float> row{0.25f, 0.5f, 0.25f, 0.9f};  // key 3 is after query 2
  CHECK(strongest_keys(c, row, 2, 4) == std::vector<size_t>{1, 0, 2});
  CHECK(strongest_keys(c, row, 2, 2) == std::vector<size_t>{1, 0});
  c.causal = false;
  CHECK(strongest_keys(c, row, 2, 4) == std::vector<size_t>{3, 1, 0, 2});
}

TEST_CASE("the fruit example: its matrix, explanation lines and hover lines", "[attention_view]") {
  const Model& fruit = load("examples/fruit");
  Predictor predictor(fruit);
  const Prediction p = predictor.predict("banana apple", 3, true);
  REQUIRE(p.input.tokens == std::vector<std::string>{"banana", "apple"});
  check_matrix(attention_matrix(fruit.config, p, {0, 0}), {1, 0, 0.5f, 0.5f});
  check_matrix(attention_matrix(fruit.config, p, {-1, -1}), {1, 0, 0.5f, 0.5f});
  // A tie: the earlier word first.
  CHECK(explain_lines(fruit, p) ==
        std::vector<std::string>{"layer 1: \"apple\" looked most at \"banana\" (50%) and itself "
                                 "(50%)"});
  const std::vector<float> m = attention_matrix(fruit.config, p, {-1, -1});
  CHECK(attends_to(fruit.config, p.input.tokens, m, 0) ==
        "\u201cbanana\u201d attends to: banana 100%");
  CHECK(attends_to(fruit.config, p.input.tokens, m, 1) ==
        "\u201capple\u201d attends to: banana 50%, apple 50%");
}

TEST_CASE("the text heatmap without color: a shade per quarter, a dot below 2%, blanks masked",
          "[attention_view]") {
  const Model& fruit = load("examples/fruit");
  Prediction p;
  p.input.tokens = {"banana", "apple", "phone"};
  p.input.ids = {2, 1, 3};
  p.attention = {1, 0, 0, 0.3f, 0.7f, 0, 0.01f, 0.24f, 0.75f};
  p.top = {{4, 0.75f, 2.0f}};
  const std::string expected =
      "attention, layer 1 of 1, head 1 of 1 (rows: the word attending; columns: the word "
      "attended to)\n"
      "       banana apple  phone\n"
      "banana \u2588\u2588\u2588\u2588\u2588\u2588\n"
      "apple  \u2592\u2592\u2592\u2592\u2592\u2592 \u2593\u2593\u2593\u2593\u2593\u2593\n"
      "phone  \u00b7      \u2591\u2591\u2591\u2591\u2591\u2591 "
      "\u2588\u2588\u2588\u2588\u2588\u2588\n"
      "       \u00b7 <2%  \u2591 <25%  \u2592 <50%  \u2593 <75%  \u2588 75% and more\n"
      "next: pie 0.7500";
  CHECK(attention_text(fruit, p, {0, 0}, Color::kNone) == expected);
  // With color: no shade characters, each visible cell's percent on its color.
  const std::string colored = attention_text(fruit, p, {0, 0}, Color::kTrue);
  CHECK(count(colored, "\u2588") == 0);
  CHECK(count(colored, "\x1b[48;2;250;200;70m") == 1);  // heat(1), the "banana" cell
  CHECK(count(colored, "\x1b[0m") == 6);                // T (T + 1) / 2 cells
}

TEST_CASE("the color scale: its three stops and what lies between", "[attention_view]") {
  CHECK(hex(heat(0)) == "#1e2030");
  CHECK(hex(heat(0.5f)) == "#aa3c3c");
  CHECK(hex(heat(1)) == "#fac846");
  CHECK(hex(heat(0.25f)) == "#642e36");  // halfway between the first two stops
  CHECK(hex(heat(-1)) == hex(heat(0)));
  CHECK(hex(heat(2)) == hex(heat(1)));
  CHECK(percent(0.374f) == "37%");
}

TEST_CASE("the SVG: one rect a cell, the masked ones grey, the others on the scale",
          "[attention_view]") {
  const Model& model = load("stories");
  Predictor predictor(model);
  const Prediction p = predictor.predict("once upon a time", 3, true);
  const size_t T = p.input.tokens.size();
  REQUIRE(T == 5);
  const std::string svg = attention_svg(model, p, {-1, -1});
  CHECK(svg.starts_with("<?xml"));
  CHECK(svg.ends_with("</svg>"));
  CHECK(count(svg, "<rect class=\"cell\"") == T * (T + 1) / 2);
  CHECK(count(svg, "<rect class=\"cell masked\"") == T * (T - 1) / 2);
  CHECK(count(svg, "fill=\"#eeeeee\"") == T * (T - 1) / 2);
  // The first cell, <bos> attending to itself with weight 1.
  CHECK(count(svg, "fill=\"" + hex(heat(1)) + "\"><title>&lt;bos&gt; \u2192 &lt;bos&gt;: 100%") ==
        1);
  CHECK(count(svg, "<script") == 0);
}

TEST_CASE("bertviz: [layer][batch of 1][head][query][key] and the tokens", "[attention_view]") {
  const Model& model = load("stories");
  Predictor predictor(model);
  const Prediction p = predictor.predict("once upon a", 3, true);
  const auto j = nlohmann::json::parse(attention_bertviz(model, p));
  CHECK(j["tokens"] == nlohmann::json(p.input.tokens));
  const auto& a = j["attention"];
  const size_t L = static_cast<size_t>(model.config.n_layers);
  const size_t H = static_cast<size_t>(model.config.n_heads), T = 4;  // bos once upon a
  REQUIRE(a.size() == L);
  for (const auto& layer : a) {
    REQUIRE(layer.size() == 1);
    REQUIRE(layer[0].size() == H);
    for (const auto& head : layer[0]) {
      REQUIRE(head.size() == T);
      for (const auto& row : head) CHECK(row.size() == T);
    }
  }
  CHECK(a[L - 1][0][H - 2][1][0].get<float>() ==
        p.attention[(((L - 1) * H + H - 2) * T + 1) * T + 0]);
}

// A file of src/views as it is on disk.
std::string source_file(const std::string& name) {
  std::ifstream file(std::string(NEXTWORD_DATA_DIR) + "/../src/views/" + name, std::ios::binary);
  std::stringstream on_disk;
  on_disk << file.rdbuf();
  return on_disk.str();
}

TEST_CASE("the HTML page: the embedded files with every view C++ computed in its placeholder",
          "[attention_view]") {
  const std::string on_disk = source_file("attention_page.html");
  CHECK(attention_page_template() == on_disk);
  CHECK(attention_draw_script() == source_file("attention_draw.js"));
  CHECK(attention_view_style() == source_file("attention_view.css"));
  CHECK(attention_view_markup() == source_file("attention_view.html"));
  for (const std::string_view placeholder : {kPageData, kPageDraw, kPageStyle, kPageView}) {
    CHECK(count(on_disk, std::string(placeholder)) == 1);
  }

  const Model& model = load("stories");
  Predictor predictor(model);
  const Prediction p = predictor.predict("once upon a time", 3, true);
  const Config& c = model.config;
  const size_t T = p.input.tokens.size();
  const std::string page = attention_html(model, "once upon a time", p);
  CHECK(page.starts_with("<!DOCTYPE html>"));
  for (const std::string_view placeholder : {kPageData, kPageDraw, kPageStyle, kPageView}) {
    CHECK(count(page, std::string(placeholder)) == 0);
  }
  CHECK(count(page, std::string(attention_view_markup())) == 1);
  CHECK(count(page, std::string(attention_draw_script())) == 1);
  CHECK(count(page, std::string(attention_view_style())) == 1);
  const std::string open = "<script id=\"data\" type=\"application/json\">";
  const size_t from = page.find(open) + open.size();
  const auto d = nlohmann::json::parse(page.substr(from, page.find("</script>", from) - from));
  // "mean", then 1 .. n: the names of the layers' and heads' menus.
  const auto menu = [](int n) {
    nlohmann::json names = {"mean"};
    for (int i = 1; i <= n; ++i) names.push_back(std::to_string(i));
    return names;
  };
  CHECK(d["layers"] == menu(c.n_layers));
  CHECK(d["heads"] == menu(c.n_heads));
  CHECK(d["layer"] == c.n_layers);  // the last layer
  CHECK(d["head"] == 0);            // the mean of its heads
  REQUIRE(d["views"].size() == static_cast<size_t>(c.n_layers) + 1);
  for (int l = -1; l < c.n_layers; ++l) {
    REQUIRE(d["views"][l + 1].size() == static_cast<size_t>(c.n_heads) + 1);
    for (int h = -1; h < c.n_heads; ++h) {
      const auto& view = d["views"][l + 1][h + 1];
      const std::vector<float> m = attention_matrix(c, p, {l, h});
      REQUIRE(view["rows"].size() == T);
      for (size_t q = 0; q < T; ++q) {
        REQUIRE(view["rows"][q].size() == q + 1);  // the keys the causal mask leaves
        for (size_t k = 0; k <= q; ++k) {
          const float w = m[q * T + k];
          const auto& look = d["scale"].at(view["rows"][q][k].get<size_t>());
          char exact[16];
          std::snprintf(exact, sizeof exact, "%.1f%%", w * 100.0);
          CHECK(look == nlohmann::json({hex(heat(w)), w > 0.5f ? "#000" : "#fff",
                                        std::to_string(std::lround(w * 100.0)), exact}));
        }
        const std::string why = view["why"][q];
        CHECK(why == attends_to(c, p.input.tokens, m, q));
      }
    }
  }
  CHECK(d["scale"][d["views"][0][0]["rows"][0][0].get<size_t>()] ==
        nlohmann::json({"#fac846", "#000", "100", "100.0%"}));  // <bos> to itself: 1
  REQUIRE(d["predictions"].size() == 3);
  CHECK(d["predictions"][0]["text"].get<std::string>().starts_with(
      std::string(model.vocab.word(p.top[0].id)) + " "));
}
