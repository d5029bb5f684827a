#include "inspect/lens.h"

#include "math/layers.h"
#include "predict/ranking.h"

namespace nextword {

std::vector<LensStep> logit_lens(const Inspection& inspection, int position, int k, bool with_mid) {
  const Model& model = inspection.model();
  const int V = model.config.vocab_size;
  const auto d = static_cast<size_t>(model.config.d_model);
  std::vector<LensStep> lens;
  std::vector<std::vector<float>> logits;
  for (const Step& step : inspection.steps(with_mid)) {
    const auto row = inspection.residual(step).subspan(static_cast<size_t>(position) * d, d);
    logits.push_back(inspection.logits_of(row));
    LensStep entry{step, {}, 0, 0};
    top_candidates(model, logits.back().data(), k, entry.top);
    lens.push_back(std::move(entry));
  }
  // The word the last step predicts, followed back through the steps.
  std::vector<Candidate> best;
  top_candidates(model, logits.back().data(), 1, best);
  if (best.empty()) return lens;  // a vocabulary of special tokens only
  const int final_id = best.front().id;
  for (size_t i = 0; i < lens.size(); ++i) {
    const float* row = logits[i].data();
    lens[i].final_word_rank = 1 + rank_of(model, row, final_id, V);
    lens[i].final_word_probability = probability_of(row[final_id], log_sum_exp(row, V));
  }
  return lens;
}

}  // namespace nextword
