// The forward pass: token ids in, next-word logits (and attention) out.
//
// As in llama2.c, a model is config + weights (model/model_file.h) and the
// pass works in a RunState of reusable buffers; `forward` is the math of
// data/FORMAT.md ("Semantics") and nothing else. It runs B windows of T tokens
// at once (the projections and the feedforward block are one matrix product
// over all B*T rows) and keeps every activation, so that training
// (train/backward.h) can run the same pass backwards. Prediction is the case
// B = 1 without dropout.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_file.h"

namespace nextword {

// One layer's activations, N = B*T rows. Buffers a config does not use stay empty.
struct LayerState {
  std::vector<float> X_in;       // [N, d]        the residual stream entering the layer
  std::vector<float> U1;         // [N, d]        norm1(X_in)          (layernorm only)
  std::vector<float> Q;          // [N, h*d_k]    U1 W_q + b_q
  std::vector<float> K;          // [N, h*d_k]    U1 W_k + b_k
  std::vector<float> V;          // [N, h*d_v]    U1 W_v + b_v
  std::vector<float> A;          // [B, h, T, T]  softmax(Q K^T * scale + causal mask)
  std::vector<float> A_mask;     // [B, h, T, T]  dropout on A               (training)
  std::vector<float> A_dropped;  // [B, h, T, T]  A * A_mask                 (training)
  std::vector<float> heads;      // [N, h*d_v]    concat(head_0 .. head_{h-1})
  std::vector<float> O_mask;     // [N, d]        dropout on the attention branch (training)
  std::vector<float> X_mid;      // [N, d]        the residual stream after attention
  std::vector<float> U2;         // [N, d]        norm2(X_mid)         (layernorm, d_ff > 0)
  std::vector<float> H_pre;      // [N, d_ff]     U2 W_in + b_in
  std::vector<float> H;          // [N, d_ff]     act(H_pre)
  std::vector<float> F_mask;     // [N, d]        dropout on the feedforward branch (training)
};

struct RunState {
  int B = 0, T = 0;
  bool all_positions = false;      // logits for every position, or only each window's last
  std::vector<int> ids;            // [B, T]
  std::vector<LayerState> layers;  // [n_layers]
  std::vector<float> X_out;        // [N, d]   the residual stream after the last layer
  std::vector<float> Z;            // [R, d]   final_norm of the rows that get logits
  std::vector<float> logits;       // [R, V]   R = N with all_positions, else B
  std::vector<float> branch;       // [N, d]   scratch: a branch's output (or its gradient)
};

struct ForwardOptions {
  bool all_positions = false;  // logits for every position (training), else the last ones
  float dropout = 0.0f;        // probability; 0 when predicting
  uint64_t seed = 0;           // picks the dropout masks
};

// Runs ids [B, T] (1 <= T <= max_len) through the model. Afterwards
// state.logits holds the next-word logits of the positions asked for and
// state.layers[l].A every layer's attention.
void forward(const Model& model, RunState& state, const int* ids, int B, int T,
             const ForwardOptions& options = {});

}  // namespace nextword
