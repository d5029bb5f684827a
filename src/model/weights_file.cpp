#include "model/weights_file.h"

namespace nextword {

WeightsFormat format_of_path(const std::string& path) {
  return path.ends_with(".safetensors") ? WeightsFormat::kSafetensors : WeightsFormat::kJsonBase64;
}

WeightsFile read_weights(const std::string& path) {
  if (format_of_path(path) == WeightsFormat::kSafetensors) {
    return read_safetensors(FileBytes::open(
        path, FileLimits{kMaxWeightsBytes, "a safetensors file", check_safetensors_start}));
  }
  return read_weights_json(*FileBytes::open(
      path, FileLimits{kMaxWeightsBytes, "a weights.json", check_json_object_start}));
}

std::string encode_weights(const Config& config, const Weights& weights, WeightsFormat format) {
  if (format == WeightsFormat::kSafetensors) return weights_safetensors(config, weights);
  return weights_json(config, weights, format == WeightsFormat::kJsonBase64);
}

}  // namespace nextword
