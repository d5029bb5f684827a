// The backward pass: d loss / d every parameter, for a forward pass kept in a
// RunState (predict/transformer.h, run with all_positions).
//
// It is the forward pass read from the bottom up, one *_backward call (from
// math/layers.h) for each forward call, as in llm.c's train_gpt2.c.
#pragma once

#include <vector>

#include "model/model_file.h"
#include "transformer/transformer.h"

namespace nextword {

// Gradient buffers of the backward pass, reused from step to step.
struct GradState {
  std::vector<float> dX;      // [N, d]       d loss / d the residual stream
  std::vector<float> dU;      // [N, d]       through a norm
  std::vector<float> dQ;      // [N, h*d_k]
  std::vector<float> dK;      // [N, h*d_k]
  std::vector<float> dV;      // [N, h*d_v]
  std::vector<float> dheads;  // [N, h*d_v]
  std::vector<float> dH;      // [N, d_ff]
  std::vector<float> dS;      // [B, T, T]    per-window scratch of attention_backward
};

// Mean cross-entropy of state.logits against targets [N] (N = B*T). Leaves
// d loss / d logits in state.logits.
double loss_forward_backward(RunState& state, const int* targets, int vocab_size);

// Adds d loss / d parameter into `grads`, an arena laid out like
// model.weights.values(): a parameter's gradient is at the parameter's offset.
void backward(const Model& model, RunState& state, GradState& g, float* grads);

}  // namespace nextword
