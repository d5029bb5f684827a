// One phrase's forward pass with every intermediate kept: what the logit lens
// (inspect/lens.h), the trace (inspect/trace.h) and the logit attribution
// (inspect/attribution.h) read.
//
// It is the training pass's bookkeeping (transformer/state.h, Activations)
// without dropout, so each layer's X_in, norm1, [Q | K | V], A, heads, X_mid,
// norm2, H_pre and H stay; the same products run as in `predict`, so the
// last position's logits here are predict's, bit for bit.
#pragma once

#include <span>
#include <vector>

#include "model/model_file.h"
#include "predict/predictor.h"
#include "transformer/state.h"

namespace nextword {

// Where in the pass the residual stream is read.
struct Step {
  int layer = 0;     // 0: after the embedding; l: after layer l (1-based)
  bool mid = false;  // within layer `layer`: after its attention block (X_mid)
};

class Inspection {
 public:
  // Runs the pass over input.ids (1 to max_len tokens).
  Inspection(const Model& model, Encoded input);

  const Model& model() const { return model_; }
  const Encoded& input() const { return input_; }
  const Activations& activations() const { return a_; }
  int length() const { return static_cast<int>(input_.ids.size()); }

  // The residual stream at `step`, [T, d].
  std::span<const float> residual(const Step& step) const;
  // The steps in order: embed, (l.mid,) l for l = 1..L; mids only when asked.
  std::vector<Step> steps(bool with_mid) const;
  // Layer l's (0-based) attention branch O = concat(heads) W_o + b_o, [T, d].
  std::vector<float> attention_out(int l) const;
  // Layer l's feed-forward branch F = H W_out + b_out, [T, d] (d_ff > 0).
  std::vector<float> mlp_out(int l) const;
  // The position part of the embedding, [T, d] (zeros without positions).
  std::vector<float> position_embedding() const;

  // final_norm and the classifier on one row of the residual stream: the
  // row's next-word logits [V], computed as predict computes its last row.
  std::vector<float> logits_of(std::span<const float> row) const;
  // The logits at the last position after the last layer (predict's).
  std::vector<float> final_logits() const;

 private:
  const Model& model_;
  Encoded input_;
  Activations a_;
};

}  // namespace nextword
