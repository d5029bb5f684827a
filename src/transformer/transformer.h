// The forward pass: token ids in, next-word logits (and attention) out.
//
// As in llama2.c, a model is config + weights (model/model_file.h) and the
// pass works in buffers of its own (transformer/state.h); `forward` is the
// math of data/FORMAT.md ("Semantics") and nothing else: embed, then per
// layer the attention block and the feed-forward block (transformer/blocks.h),
// then the final norm and the classifier. It runs B sequences at once: the
// projections and the feed-forward block are one matrix product over the N
// tokens of all of them, attention runs per sequence.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model_file.h"
#include "transformer/state.h"

namespace nextword {

struct ForwardOptions {
  bool all_positions = false;  // logits for every position, else each sequence's last
  // With all_positions, logits for these positions only (indices into the N
  // positions of all sequences), row j of state.logits for rows[j]: a
  // strided score reads half of each window. Empty: every position.
  std::span<const int> rows;
};

// Prediction: runs ids [B, T], B windows of T tokens (1 <= T <= max_len),
// through the model without dropout. Afterwards state.logits holds the
// next-word logits of the positions asked for and state.A every layer's
// attention.
void forward(const Model& model, RunState& state, const int* ids, int B, int T,
             const ForwardOptions& options = {});

// The same for sequences of different lengths (1 to max_len tokens each),
// back to back in `ids`.
void forward(const Model& model, RunState& state, const int* ids, std::span<const int> lengths,
             const ForwardOptions& options = {});

// Training: B windows of T tokens, logits at every position, with dropout;
// every activation (and mask) is kept for backward() (transformer/backward.h).
void forward(const Model& model, Activations& activations, const int* ids, int B, int T,
             const Dropout& dropout);

// Sizes one layer's buffers for N tokens: `attention` floats of A's masks
// with_masks (a training pass with dropout); those the config does not use
// stay empty.
void reserve_layer(LayerActivations& a, const Config& c, int N, size_t attention, bool with_masks);

// Floating-point operations of one pass over sequences of these lengths:
// every matrix product at 2 per multiply-add, attention in full T x T
// products (as computed), the classifier on each sequence's last position.
double forward_flops(const Config& config, std::span<const int> lengths);

}  // namespace nextword
