// How `lens`, `trace` and `attribute` show what inspect/ computed: one
// record per phrase, as a JSON line or as text for a terminal. The JSON
// pieces are also what the HTML pages (attention_page.h) draw.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "inspect/attribution.h"
#include "inspect/inspection.h"
#include "inspect/lens.h"
#include "inspect/trace.h"
#include "views/records.h"

namespace nextword::views {

// The lens at each position asked for.
struct PositionLens {
  int position = 0;
  std::vector<LensStep> steps;
};

// "embed", "L.mid" or L (a number): a lens step as JSON names it.
nlohmann::ordered_json step_name(const Step& step);
// [{"position", "layer", "top", "final_word_rank", "final_word_probability"}]
nlohmann::ordered_json lens_json(const Model& model, const std::vector<PositionLens>& lens);
// {"word", "id", "logit", "parts", "constant"}
nlohmann::ordered_json attribution_json(const Model& model, const Attribution& attribution);

std::string lens_record(const std::string& phrase, const Inspection& inspection,
                        const std::vector<PositionLens>& lens, Format format);
std::string trace_record(const std::string& phrase, const Inspection& inspection,
                         const std::vector<NamedActivation>& activations, Format format);
std::string attribution_record(const std::string& phrase, const Inspection& inspection,
                               const Attribution& attribution, Format format);

// The id of `word` for attribute's --word (the API's "word"), -1 for "";
// throws Error(kUsage) naming `field` when the vocabulary does not have it
// (or it is a special token).
int attribution_word(const Model& model, const std::string& word, const std::string& field);

// One of the three looks at a phrase, with its options, as the command line
// and the server both ask for it.
enum class Look { kLens, kTrace, kAttribute };
struct LookOptions {
  int top_k = 5;                  // lens: words shown at each step
  bool mid = false;               // lens: also after each layer's attention block
  bool all_positions = false;     // lens: every position, not only the last
  std::vector<std::string> only;  // trace: shell globs of the activations kept (none: all)
  int word = -1;                  // attribute: the word's id (-1: the top prediction)
};
// Runs the inspection of `input` and returns the look's record. Throws
// Error(kUsage) when `only` matches no activation (naming `only_field`), or
// when the vocabulary has no word to attribute.
std::string look_record(const Model& model, Look look, const std::string& phrase, Encoded input,
                        const LookOptions& options, Format format,
                        const std::string& only_field = "--only");

}  // namespace nextword::views
