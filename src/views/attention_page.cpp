#include "views/attention_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/error.h"
#include "inspect/attribution.h"
#include "inspect/inspection.h"
#include "inspect/lens.h"
#include "views/attention_view.h"
#include "views/heat.h"
#include "views/inspect_records.h"

namespace nextword::views {
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

// How the page draws a weight: [fill, ink, the cell's label in whole
// percent, the tooltip's percent with one decimal].
json drawn(float w) {
  char exact[16];
  std::snprintf(exact, sizeof exact, "%.1f%%", static_cast<double>(w) * 100.0);
  return json::array({hex(heat(w)), w > 0.5f ? "#000" : "#fff",
                      std::to_string(std::lround(static_cast<double>(w) * 100.0)), exact});
}

// The page's "scale": each different look once, in order of first use; a
// cell names its look by index (a few digits instead of four strings).
class Looks {
 public:
  int index(float w) {
    json look = drawn(w);
    const auto [at, added] = index_.try_emplace(look.dump(), static_cast<int>(looks_.size()));
    if (added) looks_.push_back(std::move(look));
    return at->second;
  }
  json take() { return std::move(looks_); }

 private:
  std::map<std::string, int> index_;
  json looks_ = json::array();
};

// "mean", "1", ..., "count": the buttons of a choice, the mean first.
json labels(int count) {
  json out = json::array({"mean"});
  for (int i = 1; i <= count; ++i) out.push_back(std::to_string(i));
  return out;
}

// The logit lens at the last position, every step (the mids too), as `lens
// --mid -f json` gives it, each step with the looks of its top words'
// probabilities ("looks") and of the final word's ("final_look").
json lens_view(const Inspection& inspection, Looks& looks) {
  const int last = inspection.length() - 1;
  const std::vector<LensStep> steps = logit_lens(inspection, last, 5, true);
  json layers = lens_json(inspection.model(), {{last, steps}});
  for (size_t i = 0; i < steps.size(); ++i) {
    json top_looks = json::array();
    for (const Candidate& c : steps[i].top) top_looks.push_back(looks.index(c.probability));
    layers[i]["looks"] = std::move(top_looks);
    layers[i]["final_look"] = looks.index(steps[i].final_word_probability);
  }
  const std::vector<Candidate>& best = steps.back().top;
  return {{"token", inspection.input().tokens.back()},
          {"word", best.empty() ? json(nullptr) : json(inspection.model().vocab.word(best[0].id))},
          {"layers", std::move(layers)}};
}

// The direct logit attribution of the top predicted word, as `attribute -f
// json` gives it but with the parts largest |value| first, and whether a
// final norm stands between them and the classifier; null when the
// vocabulary has no word to predict.
json attribution_view(const Inspection& inspection, int word) {
  if (word < 0) {
    std::vector<Candidate> best;
    top_candidates(inspection.model(), inspection.final_logits().data(), 1, best);
    if (best.empty()) return nullptr;
    word = best.front().id;
  }
  Attribution a = attribute(inspection, word);
  std::stable_sort(a.parts.begin(), a.parts.end(), [](const LogitPart& x, const LogitPart& y) {
    return std::abs(x.value) > std::abs(y.value);
  });
  json view = attribution_json(inspection.model(), a);
  view["norm"] = inspection.model().config.norm != Norm::kNone;  // how the page words it
  return view;
}

}  // namespace

void fill_placeholder(std::string& page, std::string_view placeholder, std::string_view text,
                      const std::string& file) {
  const size_t at = page.find(placeholder);
  if (at == std::string::npos) {
    throw Error(ExitCode::kFailure, file + ": has no " + std::string(placeholder));
  }
  page.replace(at, placeholder.size(), text);
}

void fill_shared_view(std::string& page, const std::string& file) {
  fill_placeholder(page, kPageStyle, attention_view_style(), file);
  fill_placeholder(page, kPageView, attention_view_markup(), file);
  fill_placeholder(page, kPageDraw, attention_draw_script(), file);
}

json attention_page_data(const Model& model, const std::string& phrase, const Prediction& p,
                         int word) {
  const Config& c = model.config;
  const std::vector<std::string> words = shown_tokens(model, p.input.tokens);
  const size_t T = words.size();
  // views[layer + 1][head + 1]: each row's visible cells (the keys before
  // the causal mask) as looks, and its hover line.
  Looks looks;
  json views = json::array();
  for (int l = -1; l < c.n_layers; ++l) {
    json heads = json::array();
    for (int h = -1; h < c.n_heads; ++h) {
      const std::vector<float> m = attention_matrix(c, p, {l, h});
      json rows = json::array(), why = json::array();
      for (size_t q = 0; q < T; ++q) {
        json visible = json::array();
        for (size_t k = 0; k < T && !masked(c, q, k); ++k) {
          visible.push_back(looks.index(m[q * T + k]));
        }
        rows.push_back(std::move(visible));
        why.push_back(attends_to(c, words, m, q));
      }
      heads.push_back({{"rows", std::move(rows)}, {"why", std::move(why)}});
    }
    views.push_back(std::move(heads));
  }
  json predictions = json::array();
  auto predict = [&](const std::string& shown, double probability) {
    char text[32];
    std::snprintf(text, sizeof text, " %.1f%%", probability * 100.0);
    predictions.push_back(
        {{"text", shown + text}, {"bar", std::to_string(std::lround(probability * 200.0)) + "px"}});
  };
  // A subword model predicts whole words (predict/word_search.h).
  for (const NextWord& w : p.words) predict(w.word, w.probability);
  if (!model.subword) {
    for (const Candidate& cand : p.top)
      predict(std::string(model.vocab.word(cand.id)), cand.probability);
  }
  const Inspection inspection(model, p.input);
  json lens = lens_view(inspection, looks);
  return {{"phrase", phrase},
          {"tokens", words},
          {"layers", labels(c.n_layers)},
          {"heads", labels(c.n_heads)},
          {"layer", c.n_layers},  // the last layer
          {"head", 0},            // the mean of its heads
          {"views", std::move(views)},
          {"scale", looks.take()},
          {"predictions", std::move(predictions)},
          {"lens", std::move(lens)},
          {"attribution", attribution_view(inspection, word)}};
}

std::string attention_html(const Model& model, const std::string& phrase, const Prediction& p) {
  std::string page(attention_page_template());
  fill_shared_view(page, "attention_page.html");
  fill_placeholder(page, kPageData, script_json(attention_page_data(model, phrase, p)),
                   "attention_page.html");
  if (page.ends_with('\n')) page.pop_back();  // the record's own newline ends it
  return page;
}

}  // namespace nextword::views
