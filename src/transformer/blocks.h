// The transformer's blocks, each a forward and a backward of the same name,
// as in llm.c's train_gpt2.c: forward() (transformer.h) calls the forwards
// top to bottom, backward() (backward.h) the backwards bottom to top. Each
// *_backward reads the activations its *_forward kept and adds into the
// parameter gradients `G` gives it (see backward.h).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_file.h"
#include "transformer/state.h"

namespace nextword {

// Parameter gradients: an arena laid out like Weights::values(), so that a
// parameter's gradient sits at the parameter's offset.
struct Gradients {
  const float* params;  // Weights::values()
  float* arena;
  // The gradient of parameter p; null for a null (absent) parameter.
  float* of(const float* p) const { return p == nullptr ? nullptr : arena + (p - params); }
};

// Gradient buffers of the backward pass, reused from step to step.
struct GradState {
  std::vector<float> dX;       // [N, d]       d loss / d the residual stream
  std::vector<float> dX_in;    // [N, d]       d loss / d a block's input
  std::vector<float> dO;       // [N, d]       d loss / d a block's output (before the residual)
  std::vector<float> dU;       // [N, d]       through a norm
  std::vector<float> dQ;       // [N, h*d_k]
  std::vector<float> dK;       // [N, kv*d_k]  (kv = Config::kv_heads())
  std::vector<float> dV;       // [N, kv*d_v]
  std::vector<float> dheads;   // [N, h*d_v]
  std::vector<float> dH;       // [N, d_ff]
  std::vector<float> dG;       // [N, d_ff]    through the gate (swiglu)
  std::vector<float> dS;       // [B, T, T]    per-window scratch of attention_backward
  std::vector<float> dhidden;  // [n_i, d_i]  an adaptive softmax cluster's projection
  std::vector<float> dZ_rows;  // [n_i, d]    and its rows of d loss / d Z
};

// X[N, d] = E[ids] (+ P or the sinusoids, counted from 0 in every sequence;
// rotary positions are not added here but turn Q and K in attention)
void embed_forward(float* X, const Model& model, const int* ids, const Sequences& sequences);
// dE, dP from dX [N, d]
void embed_backward(const Gradients& G, const Model& model, const float* dX, const int* ids,
                    const Sequences& sequences);

// a.X_mid = a.X_in + drop(concat(head_0 .. head_{h-1}) W_o + b_o), where
// head_i = A_i V_i, A_i = softmax(Q_i K_i^T * scale + M) per sequence, and
// [Q | K | V] = norm1(a.X_in) [W_q | W_k | W_v] + b, Q and K turned by rotary
// positions (counted from 0 in every sequence) with rope. A [per b h, T_b, T_b] is
// this layer's attention; O [N, d] is scratch for the branch. Layer l's masks
// are drawn from site 4l+1 (A) and 4l+2 (O) of `dropout`. Without a residual
// connection (Config::residual false), X_mid is the branch alone.
void attention_block_forward(const Config& c, const LayerWeights& w, int l,
                             const Sequences& sequences, LayerActivations& a, float* A, float* O,
                             const Dropout& dropout);
// dX: on entry d loss / d X_mid, on return d loss / d X_in. The sequences are
// B windows of one length T, as in training.
void attention_block_backward(const Config& c, const LayerWeights& w, const Gradients& G,
                              const Sequences& sequences, const LayerActivations& a, const float* A,
                              float dropout, GradState& g);

// X_out = a.X_mid + drop(act(norm2(a.X_mid) W_in + b_in) W_out + b_out), with
// swiglu silu(U W_gate + b_gate) * (U W_in + b_in) in place of act(U W_in + b_in); or
// X_out = a.X_mid without a feed-forward block (d_ff = 0). X_out may be
// a.X_in. F [N, d] is scratch for the branch; the mask is site 4l+3. As
// above, X_out is the branch alone without a residual connection.
void ffn_block_forward(const Config& c, const LayerWeights& w, int l, int N, LayerActivations& a,
                       float* F, float* X_out, const Dropout& dropout);
// dX: on entry d loss / d X_out, on return d loss / d X_mid.
void ffn_block_backward(const Config& c, const LayerWeights& w, const Gradients& G, int N,
                        const LayerActivations& a, float dropout, GradState& g);

// On entry Z [R, d] holds the rows of the residual stream that get logits:
// Z = final_norm(Z) in place, then logits[R, V] = Z C^T + c, or with an
// adaptive softmax every word's ln p (transformer/adaptive_softmax.h).
void logits_forward(float* logits, float* Z, const Model& model, int R);
// Adds into dX [N, d] (d loss / d X_out) and dZ [N, d] from a training pass's
// logits, which loss_forward_backward has turned into d loss / d logits
// (the head's and the clusters' with an adaptive softmax).
void logits_backward(float* dX, float* dZ, const Gradients& G, const Model& model,
                     const Activations& a, GradState& g);

// Rotary positions (rope), then QK-norm (qk_norm), on T rows of Q and K (rows
// ld floats apart, at positions first ..), each only when the config has it;
// rstd [T, h + kv] (may be null) keeps QK-norm's scales for the backward
// pass. The two commute: a rotation keeps a head's root mean square.
void position_qk(float* Q, float* K, int ld, float* rstd, int T, int first, const Config& c);

// [Q | K | V] [N, Config::qkv_width()] = U [W_q | W_k | W_v] + b: one product
// with the fused weights when they are there (Weights::fuse_qkv), else three
// into the same columns. Rotary positions are not applied here.
void qkv_forward(float* QKV, const float* U, const Config& c, const LayerWeights& w, int N);

// out[n] = X + O through the residual connection, or out = O without one
// (Config::residual). `out` may be X.
void residual_or_copy(float* out, const float* X, const float* O, size_t n, const Config& c);

// U = norm(X), or X itself when the model has no norm (U is then unused).
const float* norm_forward(float* U, const float* X, const float* weight, const float* bias,
                          const Config& c, int rows);

}  // namespace nextword
