// The model's parameters: every tensor of format v1 as a float32 view.
//
// As in llm.c, the parameters of a model read from JSON or being trained live
// in one contiguous buffer and the tensors are views into it. As in
// llama2.c, the views of a model read from safetensors point straight into
// the memory-mapped file, which nothing copies. `layout_for` is the single
// place that knows which tensor exists for a config, its shape, and whether
// it is optional.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/finite.h"
#include "base/float_buffer.h"
#include "base/weight_view.h"
#include "format/half_rows.h"
#include "model/config.h"

namespace nextword {

// What a tensor is to the model, which decides how training starts it and
// whether weight decay applies (train/trainer.cpp) and how the test models
// fill it.
enum class TensorRole {
  kMatrix,              // W_q, W_k, W_v, W_in, E, P, C: N(0, std), decayed
  kResidualProjection,  // W_o, W_out, which feed the residual stream: N(0, std / sqrt(2 L)),
                        // decayed
  kGain,                // a norm's weight (gain): 1, not decayed
  kBias,                // a norm's or a projection's bias: 0, not decayed
};

struct TensorSpec {
  std::string name;            // e.g. "layers.0.attn.w_q"
  std::vector<int64_t> shape;  // row-major
  bool optional = false;       // the biases of attention, the feed-forward block and the classifier
  TensorRole role = TensorRole::kMatrix;
  int64_t size() const;  // number of floats
};

// Every tensor a model of this config may hold, in a fixed order.
std::vector<TensorSpec> layout_for(const Config& config);

// The tensors of layout_for(config) that a file holding `names` provides, in
// layout order. Throws model_error for a name that is not in the layout (with
// the nearest one as a hint) or a required tensor that is missing; `prefix`
// leads the field in messages ("tensors." in weights.json).
std::vector<TensorSpec> present_tensors(const Config& config, const std::vector<std::string>& names,
                                        const std::string& file, const std::string& prefix);

// "[2,3]"
std::string shape_text(const std::vector<int64_t>& shape);

struct LayerWeights {
  WeightView norm1_weight;  // [d]     (layernorm and rmsnorm)
  WeightView norm1_bias;    // [d]     (layernorm only)
  WeightView w_q;           // [d, h*d_k]
  WeightView w_k;           // [d, kv*d_k]  (kv = Config::kv_heads())
  WeightView w_v;           // [d, kv*d_v]
  WeightView w_o;           // [h*d_v, d]
  WeightView b_q;           // [h*d_k]  optional
  WeightView b_k;           // [kv*d_k] optional
  WeightView b_v;           // [kv*d_v] optional
  WeightView b_o;           // [d]      optional
  WeightView norm2_weight;  // [d]     (a norm and d_ff > 0)
  WeightView norm2_bias;    // [d]     (layernorm and d_ff > 0)
  WeightView w_gate;        // [d, d_ff]  (swiglu only)
  WeightView w_in;          // [d, d_ff]  (swiglu: the "up" matrix)
  WeightView b_gate;        // [d_ff]  optional (swiglu only)
  WeightView b_in;          // [d_ff]  optional
  WeightView w_out;         // [d_ff, d]  (swiglu: the "down" matrix)
  WeightView b_out;         // [d]     optional
  // Derived, not in the file: [W_q | W_k | W_v] side by side, so that one
  // product gives Q, K and V (Weights::fuse_qkv); null when not fused.
  WeightView w_qkv;  // [d, Config::qkv_width()]
  WeightView b_qkv;  // [Config::qkv_width()]  null without attention biases
};

// One cluster of the adaptive softmax (Config::adaptive): its words' logits
// are (z proj^T) words^T, z the context vector the classifier reads.
struct ClusterWeights {
  WeightView proj;   // [d_i, d]  d_i = Config::cluster_width(i)
  WeightView words;  // [V_i, d_i]
};

// The tensors plus named views into them. Absent optional tensors are nullptr.
class Weights {
 public:
  Weights() = default;  // no tensors
  // Allocates zeroed storage for `present` (a subset of layout_for(config),
  // every required tensor included, in layout order).
  Weights(const Config& config, std::vector<TensorSpec> present);
  // Views of memory that `owner` keeps alive (a mapped file): tensor i of
  // `present` is at data[i], 4-byte aligned. The weights are read-only.
  Weights(const Config& config, std::vector<TensorSpec> present, std::vector<const float*> data,
          std::shared_ptr<const void> owner);
  // The same, each tensor as `sources` says: F32 in the math's layout, or
  // held as rows (base/weight_view.h) of outputs (a matrix) or of words
  // (any other type: the math's layout), read in place by the products and
  // the embedding and widened into owned floats for any other reader.
  struct TensorSource {
    const void* data = nullptr;
    bool output_rows = false;  // a matrix [in, out] held as out rows of in elements
    WeightType type = WeightType::kF32;
  };
  Weights(const Config& config, std::vector<TensorSpec> present, std::vector<TensorSource> sources,
          std::shared_ptr<const void> owner);

  const std::vector<TensorSpec>& tensors() const { return tensors_; }
  // The floats of tensor `index` of tensors(), all of them (deferred rows
  // widened first).
  const float* data(size_t index) const;
  // Writable, so that loaders and training can fill it; only for owned
  // storage. Handing out a writable pointer drops the fused copies (fuse_qkv),
  // which could go stale.
  float* mutable_data(size_t index);
  int64_t parameter_count() const { return parameters_; }
  // The whole arena: every tensor back to back, in tensors() order (owned
  // storage only). Training keeps its gradients and optimizer state in arenas
  // of the same layout, so a parameter's gradient sits at the parameter's
  // offset in values().
  float* values();
  const float* values() const;
  // False when the tensors are views of a mapped file.
  bool owns_storage() const { return owner_ == nullptr; }

  // Tensor `index` (owned storage, not yet filled) kept in the file's IEEE
  // halves `halves` (F16, all finite, aligned, in memory `file` keeps
  // alive): the products read them
  // (base/weight_view.h) and its floats are widened at their first other
  // use. Read before the first mutable_data or values(), which drop the
  // halves (writes to the floats would leave them stale).
  void keep_halves(size_t index, const uint16_t* halves, std::shared_ptr<const void> file);
  // Rows of tensor `index` (owned storage) left in the file's halves until
  // used (format/half_rows.h): safetensors.cpp defers the embedding's rows
  // past the head on an adaptive model with a tied classifier. With
  // `halves` (the same rows, F16), the products read the classifier's rows
  // from them; a reader of the classifier's floats widens the head's rows
  // first.
  void defer_rows(size_t index, std::unique_ptr<HalfRows> rows, const uint16_t* halves = nullptr);
  // Makes the embedding's rows `ids` ready to read through `embedding`;
  // every reader of rows of `embedding` calls it first (the forward pass,
  // the cache, trace, attribution). A no-op when nothing is deferred.
  void embedding_rows(const int* ids, size_t n) const;

  // Copies each layer's W_q, W_k, W_v (and biases) side by side into
  // LayerWeights::w_qkv (b_qkv), for one QKV product instead of three. Worth
  // it under Threading::kBlas only (training's teacher): under kRows each
  // product element is the same sum either way, and prediction would pay for
  // the copy in every process.
  void fuse_qkv(const Config& config);

  WeightView embedding;                 // E [V, d]
  WeightView piece_scores;              // [V] a subword model's merge scores (not a weight)
  WeightView position;                  // P [max_len, d] (learned only)
  std::vector<LayerWeights> layers;     // [n_layers]
  WeightView final_norm_weight;         // [d] (layernorm and rmsnorm)
  WeightView final_norm_bias;           // [d] (layernorm only)
  WeightView classifier;                // C [V, d]; the embedding when tied. With an adaptive
                                        // softmax only its first head_words() rows are used
  WeightView classifier_bias;           // c [head_size()] optional
  WeightView clusters;                  // [n, d] the head's cluster rows (adaptive only)
  std::vector<ClusterWeights> cluster;  // [n] (adaptive only)

  Weights(const Weights&) = delete;
  Weights& operator=(const Weights&) = delete;
  Weights(Weights&&) = default;
  Weights& operator=(Weights&&) = default;

 private:
  void bind_views();
  void drop_fused();
  void drop_halves();  // every tensor's floats widened, the views floats only

  std::shared_ptr<const Config> config_;  // what bind_views binds by
  std::vector<TensorSpec> tensors_;
  std::vector<const float*> data_;                      // per tensor
  std::vector<WeightView> views_;                       // per tensor: data_, and halves where kept
  std::vector<std::unique_ptr<Widening>> widenings_;    // of the halves kept
  std::vector<std::unique_ptr<Widening>> output_rows_;  // of the tensors held as rows
  std::unique_ptr<Widening> head_rows_;      // the classifier's rows of a deferred embedding
  std::shared_ptr<const void> halves_file_;  // keeps the halves kept alive
  int64_t parameters_ = 0;

  FloatBuffer storage_;                 // owned storage, or empty
  std::vector<float> fused_;            // the w_qkv and b_qkv of every layer
  std::shared_ptr<const void> owner_;   // keeps mapped tensors alive
  std::unique_ptr<HalfRows> deferred_;  // rows of tensor deferred_index_ not yet widened
  size_t deferred_index_ = 0;
};

}  // namespace nextword
