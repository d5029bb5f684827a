// The buffers a forward pass works in, in two kinds with two purposes:
//
//   Activations  training: every layer's activations kept, with the dropout
//                masks they were made with, so that backward() can run the
//                pass in reverse over B windows of T tokens.
//   RunState     prediction: one layer's buffers that every layer uses in
//                turn, plus each layer's attention A (what predict --explain
//                and the attention page show), so memory does not grow with
//                the number of layers.
//
// Both keep their capacity between passes: a pass of no more tokens than the
// last allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nextword {

// Where the B sequences of a pass sit: rows of the [N, d] matrices (the tokens
// of all sequences back to back) and blocks of the attention A, which is
// [h, T_b, T_b] per sequence b (with B windows of one length T: [B, h, T, T]).
struct Sequences {
  int B = 0;
  int T = 0;                     // the sequences' common length, 0 when lengths differ
  std::vector<int> starts;       // [B + 1]  sequence b is rows starts[b] .. starts[b+1]-1
  std::vector<size_t> A_starts;  // [B + 1]  and its attention A[A_starts[b] ..]

  void lay_out(std::span<const int> lengths, int n_heads);
  int N() const { return starts.empty() ? 0 : starts.back(); }
  size_t attention_size() const { return A_starts.empty() ? 0 : A_starts.back(); }
  int length(int b) const {
    return starts[static_cast<size_t>(b) + 1] - starts[static_cast<size_t>(b)];
  }
};

// Dropout of a training pass. p = 0 draws no masks.
struct Dropout {
  float p = 0.0f;     // probability of dropping
  uint64_t seed = 0;  // picks the masks
};

// One layer's activations, N rows. Buffers a config does not use stay empty
// (U1 and U2 without a norm, G_pre without swiglu, the feed-forward ones with d_ff = 0, the
// masks without dropout); what runs is decided by the config and Dropout,
// never by which buffers are empty.
struct LayerActivations {
  std::vector<float> X_in;     // [N, d]        the residual stream entering the layer
  std::vector<float> U1;       // [N, d]        norm1(X_in)
  std::vector<float> QKV;      // [N, Config::qkv_width()]  [Q | K | V] =
                               //   U1 [W_q | W_k | W_v] + b,
                               //   Q and K then turned by rotary positions (rope only)
                               //   and divided by each head's root mean square (qk_norm)
  std::vector<float> qk_rstd;  // [N, h + kv]  qk_norm's 1 / root per head of Q, then of K
  std::vector<float> heads;    // [N, h*d_v]    concat(head_0 .. head_{h-1})
  std::vector<float> X_mid;    // [N, d]        the residual stream after attention
  std::vector<float> U2;       // [N, d]        norm2(X_mid)
  std::vector<float> H_pre;    // [N, d_ff]     U2 W_in + b_in
  std::vector<float> G_pre;    // [N, d_ff]     U2 W_gate + b_gate (swiglu only)
  std::vector<float> H;        // [N, d_ff]     act(H_pre), or silu(G_pre) * H_pre (swiglu)
  // Dropout masks (training with dropout only).
  std::vector<float> A_mask;     // as A          on the attention weights
  std::vector<float> A_dropped;  // as A          A * A_mask
  std::vector<float> O_mask;     // [N, d]        on the attention branch
  std::vector<float> F_mask;     // [N, d]        on the feed-forward branch
};

// One cluster of the adaptive softmax in a training pass: the positions whose
// target word is in it, and what its forward pass made of them.
struct ClusterActivations {
  std::vector<int> rows;      // [n_i]  positions (rows of Z) whose target is in the cluster
  std::vector<float> Z;       // [n_i, d]    their context vectors
  std::vector<float> hidden;  // [n_i, d_i]  Z proj^T
  std::vector<float> logits;  // [n_i, V_i]  hidden words^T, then d loss / d logits
};

// Training activations: B windows of T tokens, logits at every position.
struct Activations {
  Sequences sequences;
  float dropout = 0.0f;                  // the probability the masks were drawn with (0: no masks)
  std::vector<int> ids;                  // [N]
  std::vector<LayerActivations> layers;  // [n_layers]
  std::vector<std::vector<float>> A;     // [n_layers] [B, h, T, T]  softmax(Q K^T * scale + M)
  std::vector<float> X_out;              // [N, d]   the residual stream after the last layer
  std::vector<float> Z;                  // [N, d]   final_norm(X_out)
  std::vector<float> logits;             // [N, V]   or d loss / d logits, see below; with an
                                         //          adaptive softmax the head's [N, head_size]
  std::vector<ClusterActivations>
      clusters;               // the adaptive softmax's (transformer/adaptive_softmax.h)
  std::vector<float> branch;  // [N, d]   scratch: a block's output O or F before the residual
  // loss_forward_backward (transformer/backward.h) has turned the logits
  // into d loss / d logits; backward() needs it, forward() clears it.
  bool logits_are_gradients = false;
};

// Prediction scratch: sequences of any lengths, logits at each sequence's last
// position (or every position).
struct RunState {
  Sequences sequences;
  bool all_positions = false;         // logits for every position, or only each sequence's last
  LayerActivations scratch;           // every layer's buffers in turn (no masks)
  std::vector<std::vector<float>> A;  // [n_layers] per b [h, T_b, T_b]
  std::vector<float> X_out;           // [N, d]   the residual stream after the last layer
  std::vector<float> Z;               // [R, d]   final_norm of the rows that get logits
  std::vector<float> logits;          // [R, V]   R = N with all_positions, else B
  std::vector<float> branch;          // [N, d]   scratch: a block's output O or F
};

}  // namespace nextword
