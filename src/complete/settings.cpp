#include "complete/settings.h"

namespace nextword {

std::string complete_options_problem(const CompleteOptions& o, const std::string& dashes) {
  if (o.lambda + o.context_weight <= 1) return {};
  return dashes + "learn-weight and " + dashes + "learn-context-weight: their sum " +
         std::to_string(o.lambda + o.context_weight) +
         " is over 1, the model's share would be negative";
}

}  // namespace nextword
