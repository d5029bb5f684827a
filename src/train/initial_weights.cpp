#include "train/initial_weights.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/random.h"

namespace nextword {

bool TrainOptions::*optional_tensor_option(const std::string& name) {
  return name == "classifier_bias"                 ? &TrainOptions::classifier_bias
         : name.find(".ffn.") != std::string::npos ? &TrainOptions::ffn_bias
                                                   : &TrainOptions::attention_bias;
}

std::vector<TensorSpec> trained_tensors(const TrainOptions& o, const Config& c) {
  std::vector<TensorSpec> present;
  for (TensorSpec& spec : layout_for(c)) {
    if (!spec.optional || o.*optional_tensor_option(spec.name)) {
      present.push_back(std::move(spec));
    }
  }
  return present;
}

void initialize(Weights& w, const TrainOptions& o, const Config& c) {
  uint64_t counter = 0;
  for (size_t t = 0; t < w.tensors().size(); ++t) {
    const TensorSpec& spec = w.tensors()[t];
    float* data = w.mutable_data(t);
    const auto n = static_cast<size_t>(spec.size());
    double std = o.init_std;
    switch (spec.role) {
      case TensorRole::kGain: std::fill(data, data + n, 1.0f); continue;
      case TensorRole::kBias: std::fill(data, data + n, 0.0f); continue;
      case TensorRole::kResidualProjection:
        if (o.zero_init_projections) {
          std::fill(data, data + n, 0.0f);
          counter += n;  // the other tensors draw what they drew before
          continue;
        }
        std /= std::sqrt(2.0 * std::max(c.n_layers, 1));
        break;
      case TensorRole::kMatrix: break;
    }
    for (size_t i = 0; i < n; ++i, ++counter) {
      // Box-Muller on two independent uniforms.
      const double u1 = 1.0 - uniform01(random_bits(o.seed, RandomStream::kInit, counter, 0));
      const double u2 = uniform01(random_bits(o.seed, RandomStream::kInit, counter, 1));
      data[i] = static_cast<float>(std * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2));
    }
  }
}

Model init_model(const TrainOptions& o) {
  ModelPaths paths = ModelPaths::in_directory(o.init_from);
  paths.memory.clear();
  Model from = load_model(paths);
  if (from.config.unk_token != o.model.unk_token || from.config.bos_token != o.model.bos_token) {
    throw usage_error("train: --init-from " + o.init_from +
                      ": its unk and bos tokens are not the run's");
  }
  return from;
}

void take_model_shape(TrainOptions& o, const Model& from, const std::string& dir) {
  o.model = from.config;
  o.vocab_size = from.config.vocab_size;
  o.init_from = dir;
  o.attention_bias = o.ffn_bias = o.classifier_bias = false;
  for (const TensorSpec& spec : from.weights.tensors()) {
    if (spec.optional) o.*optional_tensor_option(spec.name) = true;
  }
}

void copy_weights(Weights& to, const Model& from, const std::string& init_from) {
  const std::string at = "train: --init-from " + init_from + ": ";
  const std::vector<TensorSpec>& want = to.tensors();
  const std::vector<TensorSpec>& have = from.weights.tensors();
  for (size_t t = 0; t < want.size(); ++t) {
    if (t >= have.size() || have[t].name != want[t].name || have[t].shape != want[t].shape) {
      throw usage_error(at + "tensor " + want[t].name + " " + shape_text(want[t].shape) +
                        " is not in it with that shape");
    }
    const float* data = from.weights.data(t);
    std::copy(data, data + want[t].size(), to.mutable_data(t));
  }
  if (have.size() != want.size()) {
    throw usage_error(at + "tensor " + have[want.size()].name + " is not one the run trains");
  }
}

}  // namespace nextword
