#include "model/weights.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include "base/error.h"
#include "base/half_float.h"
#include "base/weight_elements.h"

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
  WeightView Weights::*model = nullptr;
  int layer = -1;
  WeightView LayerWeights::*of_layer = nullptr;
  int cluster = -1;
  WeightView ClusterWeights::*of_cluster = nullptr;
};

// The one list of format-v1 tensors: calls add(name, shape, optional, role,
// view) for every tensor a model of this config may hold, in file order.
template <typename Add>
void visit_layout(const Config& c, Add add) {
  using enum TensorRole;
  const int64_t d = c.d_model, V = c.vocab_size;
  const int64_t q = c.q_width(), k = c.k_width(), v = c.v_width(), heads = c.heads_width();
  const bool norm = c.norm != Norm::kNone, norm_bias = c.norm_has_bias();
  add("embedding", {V, d}, false, kMatrix, View{&Weights::embedding});
  if (c.subword()) add("piece_scores", {V}, false, kBias, View{&Weights::piece_scores});
  if (c.positional == Positional::kLearned) {
    add("position", {c.max_len, d}, false, kMatrix, View{&Weights::position});
  }
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    auto layer = [&](const char* name, std::vector<int64_t> shape, TensorRole role,
                     WeightView LayerWeights::*member, bool optional = false) {
      add(p + name, std::move(shape), optional, role, View{nullptr, l, member});
    };
    if (norm) layer("norm1.weight", {d}, kGain, &LayerWeights::norm1_weight);
    if (norm_bias) layer("norm1.bias", {d}, kBias, &LayerWeights::norm1_bias);
    layer("attn.w_q", {d, q}, kMatrix, &LayerWeights::w_q);
    layer("attn.w_k", {d, k}, kMatrix, &LayerWeights::w_k);
    layer("attn.w_v", {d, v}, kMatrix, &LayerWeights::w_v);
    layer("attn.w_o", {heads, d}, kResidualProjection, &LayerWeights::w_o);
    layer("attn.b_q", {q}, kBias, &LayerWeights::b_q, true);
    layer("attn.b_k", {k}, kBias, &LayerWeights::b_k, true);
    layer("attn.b_v", {v}, kBias, &LayerWeights::b_v, true);
    layer("attn.b_o", {d}, kBias, &LayerWeights::b_o, true);
    if (c.d_ff > 0) {
      if (norm) layer("norm2.weight", {d}, kGain, &LayerWeights::norm2_weight);
      if (norm_bias) layer("norm2.bias", {d}, kBias, &LayerWeights::norm2_bias);
      if (c.gated()) layer("ffn.w_gate", {d, c.d_ff}, kMatrix, &LayerWeights::w_gate);
      layer("ffn.w_in", {d, c.d_ff}, kMatrix, &LayerWeights::w_in);
      if (c.gated()) layer("ffn.b_gate", {c.d_ff}, kBias, &LayerWeights::b_gate, true);
      layer("ffn.b_in", {c.d_ff}, kBias, &LayerWeights::b_in, true);
      layer("ffn.w_out", {c.d_ff, d}, kResidualProjection, &LayerWeights::w_out);
      layer("ffn.b_out", {d}, kBias, &LayerWeights::b_out, true);
    }
  }
  if (norm) add("final_norm.weight", {d}, false, kGain, View{&Weights::final_norm_weight});
  if (norm_bias) add("final_norm.bias", {d}, false, kBias, View{&Weights::final_norm_bias});
  const int64_t head_words = c.head_words();
  if (!c.tied_classifier) {
    add("classifier", {head_words, d}, false, kMatrix, View{&Weights::classifier});
  }
  add("classifier_bias", {c.head_size()}, true, kBias, View{&Weights::classifier_bias});
  if (!c.adaptive()) return;
  add("clusters", {c.clusters(), d}, false, kMatrix, View{&Weights::clusters});
  for (int i = 0; i < c.clusters(); ++i) {
    const std::string p = "cluster." + std::to_string(i) + ".";
    const int64_t width = c.cluster_width(i);
    add(p + "proj", {width, d}, false, kMatrix,
        View{nullptr, -1, nullptr, i, &ClusterWeights::proj});
    add(p + "words", {c.cluster_words(i), width}, false, kMatrix,
        View{nullptr, -1, nullptr, i, &ClusterWeights::words});
  }
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(const std::string& name, const std::vector<TensorSpec>& layout) {
  const TensorSpec* best = nullptr;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const TensorSpec& spec : layout) {
    const size_t distance = edit_distance(name, spec.name);
    if (distance < best_distance) best = &spec, best_distance = distance;
  }
  if (best == nullptr || best_distance > std::max<size_t>(3, name.size() / 3)) return "";
  return " (did you mean \"" + best->name + "\"?)";
}

// A tensor's floats widened from its halves at the first use that asks.
class WholeTensor final : public Widening {
 public:
  WholeTensor(const uint16_t* halves, size_t n, float* out) : halves_(halves), n_(n), out_(out) {}
  const float* floats() const override {
    std::call_once(once_,
                   [this] { f16_to_floats(reinterpret_cast<const char*>(halves_), n_, out_); });
    return out_;
  }

 private:
  const uint16_t* halves_;
  size_t n_;
  float* out_;
  mutable std::once_flag once_;
};

// The first rows of a tensor whose rows are deferred (the classifier's head
// of a tied embedding), widened at the first use that asks.
class FirstRows final : public Widening {
 public:
  FirstRows(HalfRows* rows, int64_t n, const float* out) : rows_(rows), n_(n), out_(out) {}
  const float* floats() const override {
    std::call_once(once_, [this] { rows_->widen_first(n_); });
    return out_;
  }

 private:
  HalfRows* rows_;
  int64_t n_;
  const float* out_;
  mutable std::once_flag once_;
};

// A matrix stored as rows of outputs ([out, in], a GGUF file's), widened
// into the math's [in, out] floats at the first use that asks for floats;
// or as rows of words ([rows, in], the math's own layout), widened as they lie.
class FileRows final : public Widening {
 public:
  FileRows(const void* rows, WeightType type, int64_t in, int64_t out, bool words)
      : rows_(rows), type_(type), in_(in), out_(out), words_(words) {}
  const float* floats() const override {
    std::call_once(once_, [this] {
      const auto in = static_cast<size_t>(in_), out = static_cast<size_t>(out_);
      floats_ = FloatBuffer(in * out);
      const char* rows = static_cast<const char*>(rows_);
      if (words_) {
        widen_elements(type_, rows, in * out, floats_.data());
        return;
      }
      std::vector<float> row(in);
      for (size_t o = 0; o < out; ++o) {
        widen_elements(type_, rows + element_bytes(type_, o * in), in, row.data());
        for (size_t i = 0; i < in; ++i) floats_.data()[i * out + o] = row[i];
      }
    });
    return floats_.data();
  }

 private:
  const void* rows_;
  WeightType type_;
  int64_t in_, out_;
  bool words_;
  mutable FloatBuffer floats_;
  mutable std::once_flag once_;
};

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict) wrongly on "[" + string.
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

std::vector<TensorSpec> present_tensors(const Config& config, const std::vector<std::string>& names,
                                        const std::string& file, const std::string& prefix) {
  const std::vector<TensorSpec> layout = layout_for(config);
  std::set<std::string> known, held(names.begin(), names.end());
  for (const TensorSpec& spec : layout) known.insert(spec.name);
  for (const std::string& name : names) {
    if (known.count(name) == 0) {
      throw model_error(file, prefix + name,
                        "unknown tensor for this config" + did_you_mean(name, layout));
    }
  }
  std::vector<TensorSpec> present;
  for (const TensorSpec& spec : layout) {
    if (held.count(spec.name) != 0) {
      present.push_back(spec);
    } else if (!spec.optional) {
      throw model_error(file, prefix + spec.name,
                        "missing (config needs shape " + shape_text(spec.shape) + ")");
    }
  }
  return present;
}

std::vector<TensorSpec> layout_for(const Config& c) {
  std::vector<TensorSpec> specs;
  visit_layout(c, [&specs](std::string name, std::vector<int64_t> shape, bool optional,
                           TensorRole role, View) {
    specs.push_back({std::move(name), std::move(shape), optional, role});
  });
  return specs;
}

Weights::Weights(const Config& config, std::vector<TensorSpec> present)
    : config_(std::make_shared<const Config>(config)), tensors_(std::move(present)) {
  std::vector<size_t> offsets;
  for (const TensorSpec& t : tensors_) {
    offsets.push_back(static_cast<size_t>(parameters_));
    parameters_ += t.size();
  }
  storage_ = FloatBuffer(static_cast<size_t>(parameters_));
  for (size_t offset : offsets) data_.push_back(storage_.data() + offset);
  views_.assign(data_.begin(), data_.end());
  bind_views();
}

Weights::Weights(const Config& config, std::vector<TensorSpec> present,
                 std::vector<const float*> data, std::shared_ptr<const void> owner)
    : config_(std::make_shared<const Config>(config)),
      tensors_(std::move(present)),
      data_(std::move(data)),
      owner_(std::move(owner)) {
  for (const TensorSpec& t : tensors_) parameters_ += t.size();
  views_.assign(data_.begin(), data_.end());
  bind_views();
}

Weights::Weights(const Config& config, std::vector<TensorSpec> present,
                 std::vector<TensorSource> sources, std::shared_ptr<const void> owner)
    : config_(std::make_shared<const Config>(config)),
      tensors_(std::move(present)),
      owner_(std::move(owner)) {
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorSpec& t = tensors_[i];
    const TensorSource& source = sources[i];
    parameters_ += t.size();
    if (!source.output_rows && source.type == WeightType::kF32) {
      data_.push_back(static_cast<const float*>(source.data));
      views_.emplace_back(data_.back());
      continue;
    }
    data_.push_back(nullptr);
    if (!source.output_rows) {  // rows of words (a vector: one row), in place
      const int64_t in = t.shape.back(), rows = t.size() / in;
      output_rows_.push_back(std::make_unique<FileRows>(source.data, source.type, in, rows, true));
      views_.push_back(
          WeightView::rows_of_words(source.data, source.type, in, output_rows_.back().get()));
      continue;
    }
    // A matrix [in, out] held as out rows of in elements.
    const int64_t in = t.shape[0], out = t.shape[1];
    output_rows_.push_back(std::make_unique<FileRows>(source.data, source.type, in, out, false));
    views_.push_back(
        WeightView::rows_of_outputs(source.data, source.type, in, output_rows_.back().get()));
  }
  bind_views();
}

const float* Weights::data(size_t index) const {
  if (deferred_ != nullptr && index == deferred_index_) deferred_->widen_all();
  return views_[index];
}

void Weights::keep_halves(size_t index, const uint16_t* halves, std::shared_ptr<const void> file) {
  halves_file_ = std::move(file);
  widenings_.push_back(
      std::make_unique<WholeTensor>(halves, static_cast<size_t>(tensors_[index].size()),
                                    storage_.data() + (data_[index] - storage_.data())));
  views_[index] = WeightView(data_[index], halves, widenings_.back().get());
  bind_views();
}

void Weights::defer_rows(size_t index, std::unique_ptr<HalfRows> rows, const uint16_t* halves) {
  deferred_ = std::move(rows);
  deferred_index_ = index;
  if (halves == nullptr) return;
  views_[index] = WeightView(data_[index], halves, nullptr);  // rows: embedding_rows
  head_rows_ =
      std::make_unique<FirstRows>(deferred_.get(), config_->head_words(), data_[deferred_index_]);
  bind_views();
}

void Weights::embedding_rows(const int* ids, size_t n) const {
  if (deferred_ != nullptr) deferred_->widen(ids, n);
}

void Weights::drop_halves() {
  if (deferred_ != nullptr) deferred_->widen_all();
  head_rows_.reset();
  if (widenings_.empty() && embedding.halves() == nullptr) return;
  for (const auto& widening : widenings_) widening->floats();
  widenings_.clear();
  halves_file_.reset();
  views_.assign(data_.begin(), data_.end());
  bind_views();
}

float* Weights::mutable_data(size_t index) {
  if (!owns_storage()) throw std::logic_error("the weights are a read-only mapped file");
  drop_fused();
  drop_halves();
  return storage_.data() + (data_[index] - storage_.data());
}

float* Weights::values() {
  if (!owns_storage()) throw std::logic_error("the weights are a read-only mapped file");
  drop_fused();
  drop_halves();
  return storage_.data();
}

void Weights::drop_fused() {
  if (fused_.empty()) return;
  fused_.clear();
  for (LayerWeights& layer : layers) layer.w_qkv = layer.b_qkv = nullptr;
}

void Weights::fuse_qkv(const Config& c) {
  const auto d = static_cast<size_t>(c.d_model);
  const auto q = static_cast<size_t>(c.q_width()), k = static_cast<size_t>(c.k_width());
  const auto v = static_cast<size_t>(c.v_width());
  const size_t width = q + k + v;
  fused_.assign(layers.size() * (d + 1) * width, 0.0f);
  float* out = fused_.data();
  for (LayerWeights& layer : layers) {
    const float* parts[] = {layer.w_q, layer.w_k, layer.w_v};
    const float* biases[] = {layer.b_q, layer.b_k, layer.b_v};
    const size_t widths[] = {q, k, v};
    float* w = out;
    float* b = out + d * width;
    size_t column = 0;
    for (size_t part = 0; part < 3; ++part) {
      for (size_t row = 0; row < d; ++row) {
        std::copy_n(parts[part] + row * widths[part], widths[part], w + row * width + column);
      }
      if (biases[part] != nullptr) std::copy_n(biases[part], widths[part], b + column);
      column += widths[part];
    }
    const bool biased = layer.b_q != nullptr || layer.b_k != nullptr || layer.b_v != nullptr;
    layer.w_qkv = w;
    layer.b_qkv = biased ? b : nullptr;
    out += (d + 1) * width;
  }
}

const float* Weights::values() const {
  if (!owns_storage()) throw std::logic_error("the weights are a read-only mapped file");
  if (deferred_ != nullptr) deferred_->widen_all();
  for (const auto& widening : widenings_) widening->floats();
  return storage_.data();
}

void Weights::bind_views() {
  const Config& config = *config_;
  std::map<std::string, WeightView> by_name;
  for (size_t i = 0; i < tensors_.size(); ++i) by_name[tensors_[i].name] = views_[i];
  layers.assign(static_cast<size_t>(config.n_layers), LayerWeights{});
  cluster.assign(static_cast<size_t>(config.clusters()), ClusterWeights{});
  visit_layout(config, [&](const std::string& name, const std::vector<int64_t>&, bool, TensorRole,
                           View view) {
    auto it = by_name.find(name);
    const WeightView tensor = it == by_name.end() ? WeightView() : it->second;  // absent optional
    if (view.layer >= 0) {
      layers[static_cast<size_t>(view.layer)].*view.of_layer = tensor;
    } else if (view.cluster >= 0) {
      cluster[static_cast<size_t>(view.cluster)].*view.of_cluster = tensor;
    } else {
      this->*view.model = tensor;
    }
  });
  if (!config.tied_classifier) return;
  classifier = embedding;
  // A deferred embedding that the products read from its halves: a reader
  // of the classifier's floats gets the head's rows widened first.
  if (head_rows_ != nullptr) {
    classifier = WeightView(data_[deferred_index_], embedding.halves(), head_rows_.get());
  }
}

}  // namespace nextword
