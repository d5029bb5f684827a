// How `lens`, `trace` and `attribute` print what inspect/ computed: one
// record per phrase, as a JSON line or as text for a terminal. The JSON
// pieces are also what the HTML page (attention_page.h) draws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/output.h"
#include "inspect/attribution.h"
#include "inspect/inspection.h"
#include "inspect/lens.h"
#include "inspect/trace.h"

namespace nextword::cli {

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

}  // namespace nextword::cli
