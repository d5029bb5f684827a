// The forward pass: token ids in, next-word logits (and attention) out.
//
// As in llama2.c, a model is config + weights (model/model_file.h) and the
// pass works in a RunState of reusable buffers; `forward` is the math of
// data/FORMAT.md ("Semantics") and nothing else.
#pragma once

#include <vector>

#include "model/model_file.h"

namespace nextword {

struct RunState {
  std::vector<float> X;       // [T, d]      the residual stream
  std::vector<float> U;       // [T, d]      norm1(X) / norm2(X)
  std::vector<float> Q;       // [T, h*d_k]
  std::vector<float> K;       // [T, h*d_k]
  std::vector<float> V;       // [T, h*d_v]
  std::vector<float> A;       // [L, h, T, T] attention weights (all layers when kept, else one)
  std::vector<float> heads;   // [T, h*d_v]  concat(head_0 .. head_{h-1})
  std::vector<float> O;       // [T, d]      heads W_o + b_o
  std::vector<float> H;       // [T, d_ff]   act(norm2(X) W_in + b_in)
  std::vector<float> z;       // [d]         final_norm(last row of X)
  std::vector<float> logits;  // [V]
};

// Runs ids[0..T) (1 <= T <= max_len) through the model. Afterwards
// state.logits holds the next-word logits for the last position and, when
// keep_attention, state.A holds every layer's attention, [L][h][T][T].
void forward(const Model& model, RunState& state, const int* ids, int T, bool keep_attention);

}  // namespace nextword
