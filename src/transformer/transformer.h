// The forward pass: token ids in, next-word logits (and attention) out.
//
// As in llama2.c, a model is config + weights (model/model_file.h) and the
// pass works in a RunState of reusable buffers; `forward` is the math of
// data/FORMAT.md ("Semantics") and nothing else. It runs B sequences at once:
// the projections and the feedforward block are one matrix product over the
// N tokens of all of them, attention runs per sequence. It keeps every
// activation, so that training (train/backward.h) can run the same pass
// backwards over B windows of T tokens; prediction runs phrases of any
// lengths without dropout.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model_file.h"

namespace nextword {

// One layer's activations, N rows (the tokens of all B sequences, back to
// back). Attention is [h, T_b, T_b] per sequence b, back to back; with B
// windows of one length T that is [B, h, T, T]. Buffers a config does not use
// stay empty.
struct LayerState {
  std::vector<float> X_in;       // [N, d]        the residual stream entering the layer
  std::vector<float> U1;         // [N, d]        norm1(X_in)          (layernorm only)
  std::vector<float> QKV;        // [N, 2*h*d_k + h*d_v]  [Q | K | V] = U1 [W_q | W_k | W_v] + b
  std::vector<float> A;          // per b [h, T_b, T_b]  softmax(Q K^T * scale + causal mask)
  std::vector<float> A_mask;     // as A       dropout on A               (training)
  std::vector<float> A_dropped;  // as A       A * A_mask                 (training)
  std::vector<float> heads;      // [N, h*d_v]    concat(head_0 .. head_{h-1})
  std::vector<float> O_mask;     // [N, d]        dropout on the attention branch (training)
  std::vector<float> X_mid;      // [N, d]        the residual stream after attention
  std::vector<float> U2;         // [N, d]        norm2(X_mid)         (layernorm, d_ff > 0)
  std::vector<float> H_pre;      // [N, d_ff]     U2 W_in + b_in
  std::vector<float> H;          // [N, d_ff]     act(H_pre)
  std::vector<float> F_mask;     // [N, d]        dropout on the feedforward branch (training)
};

struct RunState {
  int B = 0, T = 0;                // T: the windows' length, 0 when lengths differ
  std::vector<int> starts;         // [B + 1]  sequence b is rows starts[b] .. starts[b+1]-1
  std::vector<size_t> A_starts;    // [B + 1]  and its attention A[A_starts[b] ..]
  bool all_positions = false;      // logits for every position, or only each sequence's last
  std::vector<int> ids;            // [N]
  std::vector<LayerState> layers;  // [n_layers]
  std::vector<float> X_out;        // [N, d]   the residual stream after the last layer
  std::vector<float> Z;            // [R, d]   final_norm of the rows that get logits
  std::vector<float> logits;       // [R, V]   R = N with all_positions, else B

  int length(int b) const {
    return starts[static_cast<size_t>(b) + 1] - starts[static_cast<size_t>(b)];
  }
  std::vector<float> branch;  // [N, d]   scratch: a branch's output (or its gradient)
};

struct ForwardOptions {
  bool all_positions = false;  // logits for every position (training), else the last ones
  // Keep every layer's activations, for train/backward.h. Without it the
  // layers share one layer's worth of scratch (only each layer's attention A
  // is kept), so prediction needs a fraction of the memory.
  bool keep_activations = false;
  float dropout = 0.0f;  // probability; 0 when predicting
  uint64_t seed = 0;     // picks the dropout masks
};

// Runs ids [B, T], B windows of T tokens (1 <= T <= max_len), through the
// model. Afterwards state.logits holds the next-word logits of the positions
// asked for and state.layers[l].A every layer's attention.
void forward(const Model& model, RunState& state, const int* ids, int B, int T,
             const ForwardOptions& options = {});

// Floating-point operations of one pass over sequences of these lengths:
// every matrix product at 2 per multiply-add, attention in full T x T
// products (as computed), the classifier on each sequence's last position.
double forward_flops(const Config& config, std::span<const int> lengths);

// The same for sequences of different lengths (1 to max_len tokens each),
// back to back in `ids`.
void forward(const Model& model, RunState& state, const int* ids, std::span<const int> lengths,
             const ForwardOptions& options = {});

}  // namespace nextword
