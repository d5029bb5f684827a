// The model's parameters: every tensor of format v1 in one float32 arena.
//
// As in llm.c, the parameters live in one contiguous buffer and the tensors
// are views into it; `layout_for` is the single place that knows which tensor
// exists for a config, its shape, and whether it is optional.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"

namespace nextword {

struct TensorSpec {
  std::string name;            // e.g. "layers.0.attn.w_q"
  std::vector<int64_t> shape;  // row-major
  bool optional = false;       // biases of the attention block and the classifier
  int64_t size() const;        // number of floats
};

// Every tensor a model of this config may hold, in a fixed order.
std::vector<TensorSpec> layout_for(const Config& config);

struct LayerWeights {
  const float* norm1_weight = nullptr;  // [d]     (layernorm only)
  const float* norm1_bias = nullptr;    // [d]
  const float* w_q = nullptr;           // [d, h*d_k]
  const float* w_k = nullptr;           // [d, h*d_k]
  const float* w_v = nullptr;           // [d, h*d_v]
  const float* w_o = nullptr;           // [h*d_v, d]
  const float* b_q = nullptr;           // [h*d_k]  optional
  const float* b_k = nullptr;           // [h*d_k]  optional
  const float* b_v = nullptr;           // [h*d_v]  optional
  const float* b_o = nullptr;           // [d]      optional
  const float* norm2_weight = nullptr;  // [d]     (layernorm and d_ff > 0)
  const float* norm2_bias = nullptr;    // [d]
  const float* w_in = nullptr;          // [d, d_ff]
  const float* b_in = nullptr;          // [d_ff]
  const float* w_out = nullptr;         // [d_ff, d]
  const float* b_out = nullptr;         // [d]
};

// The arena plus named views into it. Absent optional tensors are nullptr.
class Weights {
 public:
  Weights() = default;  // no tensors
  // Allocates zeroed storage for `present` (a subset of layout_for(config),
  // every required tensor included, in layout order).
  Weights(const Config& config, std::vector<TensorSpec> present);

  const std::vector<TensorSpec>& tensors() const { return tensors_; }
  // The storage of tensor `index` of tensors(); writable so loaders can fill it.
  float* data(size_t index) { return storage_.data() + offsets_[index]; }
  const float* data(size_t index) const { return storage_.data() + offsets_[index]; }
  int64_t parameter_count() const { return static_cast<int64_t>(storage_.size()); }
  // The whole arena: every tensor back to back, in tensors() order. Training
  // keeps its gradients and optimizer state in arenas of the same layout, so
  // a parameter's gradient sits at the parameter's offset in values().
  float* values() { return storage_.data(); }
  const float* values() const { return storage_.data(); }

  const float* embedding = nullptr;          // E [V, d]
  const float* position = nullptr;           // P [max_len, d] (learned only)
  std::vector<LayerWeights> layers;          // [n_layers]
  const float* final_norm_weight = nullptr;  // [d] (layernorm only)
  const float* final_norm_bias = nullptr;    // [d]
  const float* classifier = nullptr;         // C [V, d]; the embedding when tied
  const float* classifier_bias = nullptr;    // c [V] optional

  Weights(const Weights&) = delete;
  Weights& operator=(const Weights&) = delete;
  Weights(Weights&&) = default;
  Weights& operator=(Weights&&) = default;

 private:
  void bind_views(const Config& config);

  std::vector<TensorSpec> tensors_;
  std::vector<size_t> offsets_;
  std::vector<float> storage_;
};

}  // namespace nextword
