#include "model/weights.h"

#include <map>

namespace nextword {

int64_t TensorSpec::size() const {
  int64_t n = 1;
  for (int64_t dim : shape) n *= dim;
  return n;
}

namespace {

// Which view of Weights a tensor binds to: a member of Weights, or a member of
// one layer's LayerWeights.
struct View {
  const float* Weights::*model = nullptr;
  int layer = -1;
  const float* LayerWeights::*of_layer = nullptr;
};

// The one list of format-v1 tensors: calls add(name, shape, optional, view)
// for every tensor a model of this config may hold, in file order.
template <typename Add>
void visit_layout(const Config& c, Add add) {
  const int64_t d = c.d_model, V = c.vocab_size;
  const int64_t qk = int64_t{c.n_heads} * c.d_k, v = int64_t{c.n_heads} * c.d_v;
  const bool layernorm = c.norm == Norm::kLayerNorm;
  add("embedding", {V, d}, false, View{&Weights::embedding});
  if (c.positional == Positional::kLearned) {
    add("position", {c.max_len, d}, false, View{&Weights::position});
  }
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    auto layer = [&](const char* name, std::vector<int64_t> shape,
                     const float* LayerWeights::*member, bool optional = false) {
      add(p + name, std::move(shape), optional, View{nullptr, l, member});
    };
    if (layernorm) {
      layer("norm1.weight", {d}, &LayerWeights::norm1_weight);
      layer("norm1.bias", {d}, &LayerWeights::norm1_bias);
    }
    layer("attn.w_q", {d, qk}, &LayerWeights::w_q);
    layer("attn.w_k", {d, qk}, &LayerWeights::w_k);
    layer("attn.w_v", {d, v}, &LayerWeights::w_v);
    layer("attn.w_o", {v, d}, &LayerWeights::w_o);
    layer("attn.b_q", {qk}, &LayerWeights::b_q, true);
    layer("attn.b_k", {qk}, &LayerWeights::b_k, true);
    layer("attn.b_v", {v}, &LayerWeights::b_v, true);
    layer("attn.b_o", {d}, &LayerWeights::b_o, true);
    if (c.d_ff > 0) {
      if (layernorm) {
        layer("norm2.weight", {d}, &LayerWeights::norm2_weight);
        layer("norm2.bias", {d}, &LayerWeights::norm2_bias);
      }
      layer("ffn.w_in", {d, c.d_ff}, &LayerWeights::w_in);
      layer("ffn.b_in", {c.d_ff}, &LayerWeights::b_in);
      layer("ffn.w_out", {c.d_ff, d}, &LayerWeights::w_out);
      layer("ffn.b_out", {d}, &LayerWeights::b_out);
    }
  }
  if (layernorm) {
    add("final_norm.weight", {d}, false, View{&Weights::final_norm_weight});
    add("final_norm.bias", {d}, false, View{&Weights::final_norm_bias});
  }
  if (!c.tied_classifier) add("classifier", {V, d}, false, View{&Weights::classifier});
  add("classifier_bias", {V}, true, View{&Weights::classifier_bias});
}

}  // namespace

std::vector<TensorSpec> layout_for(const Config& c) {
  std::vector<TensorSpec> specs;
  visit_layout(c, [&specs](std::string name, std::vector<int64_t> shape, bool optional, View) {
    specs.push_back({std::move(name), std::move(shape), optional});
  });
  return specs;
}

Weights::Weights(const Config& config, std::vector<TensorSpec> present)
    : tensors_(std::move(present)) {
  size_t total = 0;
  for (const TensorSpec& t : tensors_) {
    offsets_.push_back(total);
    total += static_cast<size_t>(t.size());
  }
  storage_.assign(total, 0.0f);
  bind_views(config);
}

void Weights::bind_views(const Config& config) {
  std::map<std::string, const float*> by_name;
  for (size_t i = 0; i < tensors_.size(); ++i) by_name[tensors_[i].name] = data(i);
  layers.assign(static_cast<size_t>(config.n_layers), LayerWeights{});
  visit_layout(config, [&](const std::string& name, const std::vector<int64_t>&, bool, View view) {
    auto it = by_name.find(name);
    const float* tensor = it == by_name.end() ? nullptr : it->second;  // absent optional
    if (view.layer >= 0) {
      layers[static_cast<size_t>(view.layer)].*view.of_layer = tensor;
    } else {
      this->*view.model = tensor;
    }
  });
  if (config.tied_classifier) classifier = embedding;
}

}  // namespace nextword
