#include "views/inspect_records.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "text/tokenizer.h"
#include "views/attention_view.h"

namespace nextword::views {
namespace {

using json = nlohmann::ordered_json;

// A float for JSON: its shortest decimal, or null for -inf (a masked score).
json number(float value) { return std::isinf(value) ? json(nullptr) : json(shortest(value)); }

std::string step_label(const Step& step) {
  const json name = step_name(step);
  return name.is_string() ? name.get<std::string>() : name.dump();
}

// A value in a text matrix: 4 decimals, right-aligned in `width`.
std::string cell(float value, size_t width) {
  const std::string text = std::isinf(value) ? (value < 0 ? "-inf" : "inf") : fixed(value, 4);
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

// A matrix [rows, cols] with its rows labelled (and its columns, when given).
std::string matrix_text(const float* data, const std::vector<std::string>& row_labels, int cols,
                        const std::vector<std::string>& col_labels) {
  size_t label = 0, width = 9;
  for (const std::string& l : row_labels)
    label = std::max(label, std::min<size_t>(width_of(l), 16));
  for (const std::string& l : col_labels)
    width = std::max(width, std::min<size_t>(width_of(l), 12) + 1);
  std::string out;
  if (!col_labels.empty()) {
    out += "    " + std::string(label, ' ');
    for (const std::string& l : col_labels) {
      const size_t w = std::min<size_t>(width_of(l), width - 1);
      out += std::string(width - w, ' ') + fit(l, w);
    }
    out += "\n";
  }
  for (size_t r = 0; r < row_labels.size(); ++r) {
    out += "    " + fit(row_labels[r], label);
    for (int j = 0; j < cols; ++j) out += cell(data[r * static_cast<size_t>(cols) + j], width);
    out += "\n";
  }
  return out;
}

// One activation as labelled matrices: rows are tokens (or queries), one
// matrix per head for [T, h, d_head] and [h, T, T].
std::string activation_text(const Inspection& inspection, const NamedActivation& a) {
  const Model& model = inspection.model();
  const std::vector<std::string> tokens = shown_tokens(model, inspection.input().tokens);
  std::string shape;
  for (int n : a.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(n);
  std::string out = a.name + " [" + shape + "]  " + a.formula + "\n";
  const auto T = static_cast<int>(tokens.size());
  if (a.axes == Axes::kVocabulary) {
    std::vector<std::string> words;
    for (int id = 0; id < a.shape[0]; ++id)
      words.push_back(shown_token(model, model.vocab.word(id)));
    return out + matrix_text(a.data.data(), words, 1, {});
  }
  if (a.axes == Axes::kPosition) return out + matrix_text(a.data.data(), tokens, a.shape[1], {});
  const bool per_query = a.axes == Axes::kHeadQueryKey;
  const int heads = per_query ? a.shape[0] : a.shape[1];
  for (int h = 0; h < heads; ++h) {
    out += "  head " + std::to_string(h + 1) + "\n";
    if (per_query) {  // [h, query, key]
      out += matrix_text(a.data.data() + static_cast<size_t>(h) * T * T, tokens, T, tokens);
    } else {  // [pos, h, d_head]: this head's columns
      const int d_head = a.shape[2];
      std::vector<float> rows;
      for (int t = 0; t < T; ++t) {
        const float* row = a.data.data() + (static_cast<size_t>(t) * heads + h) * d_head;
        rows.insert(rows.end(), row, row + d_head);
      }
      out += matrix_text(rows.data(), tokens, d_head, {});
    }
  }
  return out;
}

// What the constant of an attribution holds, for this model.
std::string constant_terms(const Model& model) {
  const bool norm = model.weights.final_norm_bias != nullptr;
  const bool bias = model.weights.classifier_bias != nullptr;
  return norm && bias ? "final_norm's bias and the classifier bias"
         : norm       ? "final_norm's bias"
         : bias       ? "the classifier bias"
                      : "none in this model";
}

}  // namespace

json step_name(const Step& step) {
  if (step.layer == 0) return "embed";
  if (step.mid) return std::to_string(step.layer) + ".mid";
  return step.layer;
}

json lens_json(const Model& model, const std::vector<PositionLens>& lens) {
  json layers = json::array();
  for (const PositionLens& at : lens) {
    for (const LensStep& s : at.steps) {
      json top = json::array();
      for (const Candidate& c : s.top) {
        top.push_back({{"word", model.vocab.word(c.id)}, {"probability", shortest(c.probability)}});
      }
      layers.push_back({{"position", at.position},
                        {"layer", step_name(s.step)},
                        {"top", std::move(top)},
                        {"final_word_rank", s.final_word_rank},
                        {"final_word_probability", shortest(s.final_word_probability)}});
    }
  }
  return layers;
}

json attribution_json(const Model& model, const Attribution& a) {
  json parts = json::array();
  // Summed in double, printed as every float nextword prints.
  for (const LogitPart& p : a.parts) {
    parts.push_back({{"name", p.name}, {"value", shortest(static_cast<float>(p.value))}});
  }
  return {{"word", model.vocab.word(a.id)},
          {"id", a.id},
          {"logit", shortest(a.logit)},
          {"parts", std::move(parts)},
          {"constant", shortest(static_cast<float>(a.constant))}};
}

std::string lens_record(const std::string& phrase, const Inspection& inspection,
                        const std::vector<PositionLens>& lens, Format format) {
  const Model& model = inspection.model();
  if (format == Format::kJson) {
    json record = input_json(inspection.model(), phrase, inspection.input());
    record["layers"] = lens_json(model, lens);
    return dump(record);
  }
  std::string out;
  for (const PositionLens& at : lens) {
    if (at.steps.empty()) continue;
    const std::vector<Candidate>& last = at.steps.back().top;
    const std::string word =
        last.empty() ? "?" : shown_token(model, model.vocab.word(last.front().id));
    if (!out.empty()) out += "\n";
    out += "after " + piece_label(model) + "\"" +
           shown_token(model, inspection.input().tokens[static_cast<size_t>(at.position)]) +
           "\" (position " + std::to_string(at.position) + "): the lens at each step\n";
    const std::string heading = "\"" + word + "\" rank";
    const size_t rank_width = std::max<size_t>(width_of(heading), 6);
    out += "step   " + std::string(rank_width - width_of(heading), ' ') + heading +
           "  probability  top " + token_noun(model) + "s\n";
    for (const LensStep& s : at.steps) {
      const std::string rank = std::to_string(s.final_word_rank);
      std::string line = fit(step_label(s.step), 7) +
                         std::string(rank_width - std::min(rank.size(), rank_width), ' ') + rank +
                         "  " + fixed(s.final_word_probability, 4) + "       ";
      for (const Candidate& c : s.top) {
        line += shown_token(model, model.vocab.word(c.id)) + " " + fixed(c.probability, 4) + "  ";
      }
      while (line.ends_with(' ')) line.pop_back();
      out += line + "\n";
    }
  }
  if (!out.empty()) out.pop_back();
  return out;
}

std::string trace_record(const std::string& phrase, const Inspection& inspection,
                         const std::vector<NamedActivation>& activations, Format format) {
  if (format == Format::kJson) {
    json record = input_json(inspection.model(), phrase, inspection.input());
    json all = json::object();
    for (const NamedActivation& a : activations) {
      json data = json::array();
      for (const float v : a.data) data.push_back(number(v));
      all[a.name] = {{"shape", a.shape}, {"data", std::move(data)}};
    }
    record["activations"] = std::move(all);
    return dump(record);
  }
  std::string out;
  for (const NamedActivation& a : activations) out += activation_text(inspection, a) + "\n";
  if (!out.empty()) out.resize(out.size() - 2);  // the record's own newline ends it
  return out;
}

std::string attribution_record(const std::string& phrase, const Inspection& inspection,
                               const Attribution& a, Format format) {
  const Model& model = inspection.model();
  if (format == Format::kJson) {
    json record = input_json(inspection.model(), phrase, inspection.input());
    record.update(attribution_json(model, a));
    return dump(record);
  }
  double sum = 0, largest = 0;
  size_t label = 8;
  for (const LogitPart& p : a.parts) {
    sum += p.value;
    largest = std::max(largest, std::abs(p.value));
    label = std::max(label, p.name.size());
  }
  std::vector<LogitPart> parts = a.parts;
  std::stable_sort(parts.begin(), parts.end(), [](const LogitPart& x, const LogitPart& y) {
    return std::abs(x.value) > std::abs(y.value);
  });
  std::string out =
      "logit of " + piece_label(model) + "\"" + shown_token(model, model.vocab.word(a.id)) +
      "\" (id " + std::to_string(a.id) + ") after " + piece_label(model, true) + "\"" +
      join(shown_tokens(model, inspection.input().tokens)) + "\": " + fixed(a.logit, 4) + " = " +
      fixed(sum, 4) + " (" + std::to_string(a.parts.size()) +
      (a.parts.size() == 1 ? " part) " : " parts) ") + (a.constant < 0 ? "- " : "+ ") +
      fixed(std::abs(a.constant), 4) + " (constant: " + constant_terms(model) + ")\n";
  constexpr int kBar = 40;
  for (const LogitPart& p : parts) {
    const int n =
        largest > 0 ? static_cast<int>(std::lround(std::abs(p.value) / largest * kBar)) : 0;
    std::string bar;
    for (int i = 0; i < n; ++i) bar += p.value < 0 ? "\u2591" : "\u2588";
    out += "  " + p.name + std::string(label - p.name.size(), ' ') + (p.value < 0 ? "  " : "  +") +
           fixed(p.value, 4) + "  " + bar + "\n";
  }
  out += "  (\u2588 adds to the logit, \u2591 takes from it)";
  return out;
}

namespace {

std::vector<PositionLens> lens_positions(const Inspection& inspection, const LookOptions& o) {
  std::vector<PositionLens> out;
  const int T = inspection.length();
  for (int p = o.all_positions ? 0 : T - 1; p < T; ++p) {
    out.push_back({p, logit_lens(inspection, p, o.top_k, o.mid)});
  }
  return out;
}

std::vector<NamedActivation> selected(const Inspection& inspection, const LookOptions& o,
                                      const std::string& only_field) {
  std::vector<NamedActivation> all = trace(inspection);
  if (o.only.empty()) return all;
  std::erase_if(all, [&o](const NamedActivation& a) {
    return std::none_of(o.only.begin(), o.only.end(), [&a](const std::string& glob) {
      return fnmatch(glob.c_str(), a.name.c_str(), 0) == 0;
    });
  });
  if (all.empty()) {
    throw Error(ExitCode::kUsage,
                only_field + ": no activation of this model matches " + join(o.only));
  }
  return all;
}

}  // namespace

int attribution_word(const Model& model, const std::string& word, const std::string& field) {
  if (word.empty()) return -1;
  const int id = model.vocab.find(word);
  if (id < 0 || model.is_special(id)) {
    throw Error(ExitCode::kUsage, field + ": \"" + word + "\" is not a word of the vocabulary");
  }
  return id;
}

std::string look_record(const Model& m, Look look, const std::string& phrase, Encoded input,
                        const LookOptions& o, Format format, const std::string& only_field) {
  const Inspection inspection(m, std::move(input));
  switch (look) {
    case Look::kLens: return lens_record(phrase, inspection, lens_positions(inspection, o), format);
    case Look::kTrace:
      return trace_record(phrase, inspection, selected(inspection, o, only_field), format);
    case Look::kAttribute: break;
  }
  int target = o.word;
  if (target < 0) {
    std::vector<Candidate> best;
    top_candidates(m, inspection.final_logits().data(), 1, best);
    if (best.empty()) throw Error(ExitCode::kUsage, "the vocabulary has no word to attribute");
    target = best.front().id;
  }
  return attribution_record(phrase, inspection, attribute(inspection, target), format);
}

}  // namespace nextword::views
