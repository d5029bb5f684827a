#include "inspect/inspection.h"

#include <algorithm>

#include "math/layers.h"
#include "transformer/blocks.h"
#include "transformer/transformer.h"

namespace nextword {

Inspection::Inspection(const Model& model, Encoded input)
    : model_(model), input_(std::move(input)) {
  forward(model_, a_, input_.ids.data(), 1, length(), Dropout{});
}

std::span<const float> Inspection::residual(const Step& step) const {
  const auto l = static_cast<size_t>(step.layer);
  if (step.mid) return a_.layers[l - 1].X_mid;
  // After layer l is what enters layer l + 1, or the last layer's output.
  return l < a_.layers.size() ? a_.layers[l].X_in : a_.X_out;
}

std::vector<Step> Inspection::steps(bool with_mid) const {
  std::vector<Step> steps{{0, false}};
  for (int l = 1; l <= model_.config.n_layers; ++l) {
    if (with_mid) steps.push_back({l, true});
    steps.push_back({l, false});
  }
  return steps;
}

std::vector<float> Inspection::attention_out(int l) const {
  const Config& c = model_.config;
  const LayerWeights& w = model_.weights.layers[static_cast<size_t>(l)];
  std::vector<float> O(area(length(), c.d_model));
  matmul_forward(O.data(), a_.layers[static_cast<size_t>(l)].heads.data(), w.w_o, w.b_o, length(),
                 c.heads_width(), c.d_model);
  return O;
}

std::vector<float> Inspection::mlp_out(int l) const {
  const Config& c = model_.config;
  const LayerWeights& w = model_.weights.layers[static_cast<size_t>(l)];
  std::vector<float> F(area(length(), c.d_model));
  matmul_forward(F.data(), a_.layers[static_cast<size_t>(l)].H.data(), w.w_out, w.b_out, length(),
                 c.d_ff, c.d_model);
  return F;
}

std::vector<float> Inspection::position_embedding() const {
  const Config& c = model_.config;
  std::vector<float> P(area(length(), c.d_model), 0.0f);
  if (c.positional == Positional::kLearned) {
    position_forward(P.data(), model_.weights.position, length(), c.d_model);
  }
  if (c.positional == Positional::kSinusoidal) sinusoid_forward(P.data(), length(), c.d_model);
  return P;
}

std::vector<float> Inspection::logits_of(std::span<const float> row) const {
  std::vector<float> Z(row.begin(), row.end());
  std::vector<float> logits(static_cast<size_t>(model_.config.vocab_size));
  logits_forward(logits.data(), Z.data(), model_, 1);
  return logits;
}

std::vector<float> Inspection::final_logits() const {
  const auto d = static_cast<size_t>(model_.config.d_model);
  return logits_of(std::span<const float>(a_.X_out).subspan((a_.X_out.size() / d - 1) * d, d));
}

}  // namespace nextword
