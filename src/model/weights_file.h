// The weights file in its three forms (data/FORMAT.md): weights.json with
// tensors as lists of numbers or as base64 float32, and weights.safetensors.
// All three hold the same config and the same float32 values, so converting
// between them is lossless.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "model/config.h"
#include "model/file_bytes.h"
#include "model/weights.h"

namespace nextword {

struct WeightsFile {
  Config config;
  Weights weights;
  int64_t bytes = 0;  // the file's size
};

enum class WeightsFormat { kJsonNumbers, kJsonBase64, kSafetensors };

// weights.safetensors when the name ends in ".safetensors", else weights.json.
WeightsFormat format_of_path(const std::string& path);

// Reads either form; throws model_error naming the file and field at fault.
WeightsFile read_weights(const std::string& path);
WeightsFile read_weights_json(const FileBytes& file);
// The tensors stay in the mapped file (zero-copy) unless they are misaligned.
WeightsFile read_safetensors(const std::shared_ptr<FileBytes>& file);

// The file's bytes in the given form.
std::string weights_json(const Config& config, const Weights& weights, bool base64);
std::string weights_safetensors(const Config& config, const Weights& weights);
std::string encode_weights(const Config& config, const Weights& weights, WeightsFormat format);

}  // namespace nextword
