#include "model/weights_file.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "base/error.h"

namespace nextword {

WeightsFormat format_of_path(const std::string& path) {
  return path.ends_with(".safetensors") ? WeightsFormat::kSafetensors : WeightsFormat::kJsonBase64;
}

WeightsFormat weights_format(const std::string& path) {
  // Only a regular file is looked into: a pipe's first bytes, once read,
  // would be gone for its reader.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return format_of_path(path);
  std::ifstream in(path, std::ios::binary);
  char first[16] = {};
  in.read(first, sizeof first);
  const auto n = static_cast<size_t>(in.gcount());
  const std::string_view start(first, n);
  if (start.starts_with("GGUF")) return WeightsFormat::kGguf;
  const size_t text = start.find_first_not_of(" \t\r\n");
  if (text != std::string_view::npos && start[text] == '{' && text < 8) {
    return WeightsFormat::kJsonBase64;
  }
  uint32_t high = 0;  // of safetensors' 8-byte header length: far below 2^32
  if (n > 8) std::memcpy(&high, first + 4, 4);
  if (n > 8 && high == 0 && first[8] == '{') return WeightsFormat::kSafetensors;
  return format_of_path(path);
}

WeightsFile read_weights(const std::string& path) {
  return read_weights(path, weights_format(path));
}

WeightsFile read_weights(const std::string& path, WeightsFormat format) {
  if (format == WeightsFormat::kGguf) {
    throw model_error(path, "", "a GGUF model is a model of its own file (--model FILE.gguf)");
  }
  if (format == WeightsFormat::kSafetensors) {
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
