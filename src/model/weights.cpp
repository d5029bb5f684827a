#include "model/weights.h"

#include <map>

namespace nextword {

int64_t TensorSpec::size() const {
  int64_t n = 1;
  for (int64_t dim : shape) n *= dim;
  return n;
}

std::vector<TensorSpec> layout_for(const Config& c) {
  const int64_t d = c.d_model, V = c.vocab_size;
  const int64_t qk = int64_t{c.n_heads} * c.d_k, v = int64_t{c.n_heads} * c.d_v;
  const bool layernorm = c.norm == Norm::kLayerNorm;
  std::vector<TensorSpec> specs;
  auto add = [&specs](std::string name, std::vector<int64_t> shape, bool optional = false) {
    specs.push_back({std::move(name), std::move(shape), optional});
  };
  add("embedding", {V, d});
  if (c.positional == Positional::kLearned) add("position", {c.max_len, d});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    if (layernorm) {
      add(p + "norm1.weight", {d});
      add(p + "norm1.bias", {d});
    }
    add(p + "attn.w_q", {d, qk});
    add(p + "attn.w_k", {d, qk});
    add(p + "attn.w_v", {d, v});
    add(p + "attn.w_o", {v, d});
    add(p + "attn.b_q", {qk}, true);
    add(p + "attn.b_k", {qk}, true);
    add(p + "attn.b_v", {v}, true);
    add(p + "attn.b_o", {d}, true);
    if (c.d_ff > 0) {
      if (layernorm) {
        add(p + "norm2.weight", {d});
        add(p + "norm2.bias", {d});
      }
      add(p + "ffn.w_in", {d, c.d_ff});
      add(p + "ffn.b_in", {c.d_ff});
      add(p + "ffn.w_out", {c.d_ff, d});
      add(p + "ffn.b_out", {d});
    }
  }
  if (layernorm) {
    add("final_norm.weight", {d});
    add("final_norm.bias", {d});
  }
  if (!c.tied_classifier) add("classifier", {V, d});
  add("classifier_bias", {V}, true);
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
  auto get = [&by_name](const std::string& name) {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  embedding = get("embedding");
  position = get("position");
  layers.assign(static_cast<size_t>(config.n_layers), LayerWeights{});
  for (int l = 0; l < config.n_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    LayerWeights& w = layers[static_cast<size_t>(l)];
    w.norm1_weight = get(p + "norm1.weight");
    w.norm1_bias = get(p + "norm1.bias");
    w.w_q = get(p + "attn.w_q");
    w.w_k = get(p + "attn.w_k");
    w.w_v = get(p + "attn.w_v");
    w.w_o = get(p + "attn.w_o");
    w.b_q = get(p + "attn.b_q");
    w.b_k = get(p + "attn.b_k");
    w.b_v = get(p + "attn.b_v");
    w.b_o = get(p + "attn.b_o");
    w.norm2_weight = get(p + "norm2.weight");
    w.norm2_bias = get(p + "norm2.bias");
    w.w_in = get(p + "ffn.w_in");
    w.b_in = get(p + "ffn.b_in");
    w.w_out = get(p + "ffn.w_out");
    w.b_out = get(p + "ffn.b_out");
  }
  final_norm_weight = get("final_norm.weight");
  final_norm_bias = get("final_norm.bias");
  classifier = config.tied_classifier ? embedding : get("classifier");
  classifier_bias = get("classifier_bias");
}

}  // namespace nextword
