#include "inspect/attribution.h"

#include <cmath>
#include <numeric>

#include "math/kernels.h"
#include "math/layers.h"
#include "transformer/adaptive_softmax.h"

namespace nextword {
namespace {

// A part's share of the logit: the part through the frozen final_norm, then
// the word's classifier row.
struct Readout {
  const Model& model;
  const float* C;    // the word's classifier row [d]
  double sigma = 1;  // final_norm's frozen scale (1 without a norm)

  double operator()(const std::vector<double>& p) const {
    const Config& c = model.config;
    const int d = c.d_model;
    // layernorm subtracts the row's mean; rmsnorm only divides by its scale.
    const bool layernorm = c.norm == Norm::kLayerNorm, norm = c.norm != Norm::kNone;
    const double mean = layernorm ? std::accumulate(p.begin(), p.end(), 0.0) / d : 0.0;
    double value = 0;
    for (int j = 0; j < d; ++j) {
      const double gain = norm ? model.weights.final_norm_weight[j] / sigma : 1.0;
      value += (p[static_cast<size_t>(j)] - mean) * gain * C[j];
    }
    return value;
  }
};

// z . direction + bias, z = final_norm(x) of the last position: the word's
// score before the adaptive softmax's log-normalizers are taken off it.
double score_of(const Inspection& inspection, const float* direction, double bias) {
  const Model& model = inspection.model();
  const Config& c = model.config;
  const int d = c.d_model;
  const float* x =
      inspection.residual({c.n_layers, false}).data() + area(inspection.length() - 1, d);
  std::vector<float> U(static_cast<size_t>(d));
  const float* z = norm_forward(U.data(), x, model.weights.final_norm_weight,
                                model.weights.final_norm_bias, c, 1);
  double score = bias;
  for (int j = 0; j < d; ++j) score += static_cast<double>(z[j]) * direction[j];
  return score;
}

std::vector<double> row_of(std::span<const float> matrix, int row, int d) {
  const auto begin = matrix.begin() + static_cast<std::ptrdiff_t>(area(row, d));
  return {begin, begin + d};
}

}  // namespace

Attribution attribute(const Inspection& inspection, int id) {
  const Model& model = inspection.model();
  const Config& c = model.config;
  const Weights& w = model.weights;
  const int d = c.d_model, last = inspection.length() - 1, L = c.n_layers;
  Attribution out;
  out.id = id;
  out.logit = inspection.final_logits()[static_cast<size_t>(id)];

  // The word's classifier row, or with an adaptive softmax its score's
  // direction, whose log-normalizers join the constant below.
  std::vector<float> direction;
  const double bias = c.adaptive()                   ? adaptive_word_readout(model, id, direction)
                      : w.classifier_bias != nullptr ? w.classifier_bias[id]
                                                     : 0.0;
  Readout readout{model, c.adaptive() ? direction.data() : w.classifier + area(id, d)};
  if (c.norm != Norm::kNone) {
    // sigma as final_norm computed it for this row.
    const float* x = inspection.residual({L, false}).data() + area(last, d);
    readout.sigma = c.norm == Norm::kLayerNorm ? 1.0 / row_statistics(x, d, c.norm_eps).rstd
                                               : 1.0 / rms_rstd(x, d, c.norm_eps);
  }
  if (w.final_norm_bias != nullptr) {
    for (int j = 0; j < d; ++j)
      out.constant += static_cast<double>(w.final_norm_bias[j]) * readout.C[j];
  }
  out.constant += bias;
  if (c.adaptive()) out.constant += out.logit - score_of(inspection, readout.C, bias);
  auto add = [&](std::string name, const std::vector<double>& p) {
    out.parts.push_back({std::move(name), readout(p)});
  };

  // Without residual connections only the last block's output reaches the end.
  const int first = c.residual || L == 0 ? 0 : L;
  if (first == 0) {
    w.embedding_rows(&inspection.input().ids.back(), 1);
    add("embed", row_of({static_cast<const float*>(w.embedding), area(c.vocab_size, d)},
                        inspection.input().ids.back(), d));
    if (c.adds_positions()) {
      add("pos_embed", row_of(inspection.position_embedding(), last, d));
    }
  }
  for (int l = std::max(first, 1); l <= L; ++l) {
    const LayerWeights& lw = w.layers[static_cast<size_t>(l) - 1];
    const std::string layer = std::to_string(l) + ".";
    const bool attention_reaches = c.residual || c.d_ff == 0;
    if (attention_reaches) {
      // Head i writes z_i [d_v] through rows i*d_v .. of W_o [h*d_v, d].
      const float* z = inspection.activations().layers[static_cast<size_t>(l) - 1].heads.data() +
                       area(last, c.heads_width());
      for (int i = 0; i < c.n_heads; ++i) {
        std::vector<double> p(static_cast<size_t>(d), 0.0);
        for (int k = 0; k < c.d_v; ++k) {
          const float* W_o_row = lw.w_o + area(i * c.d_v + k, d);
          const double z_k = z[i * c.d_v + k];
          for (int j = 0; j < d; ++j) p[static_cast<size_t>(j)] += z_k * W_o_row[j];
        }
        add(layer + "attn." + std::to_string(i + 1), p);
      }
      if (const float* b_o = lw.b_o; b_o != nullptr) add(layer + "attn.bias", {b_o, b_o + d});
    }
    if (c.d_ff > 0) add(layer + "mlp", row_of(inspection.mlp_out(l - 1), last, d));
  }
  return out;
}

}  // namespace nextword
