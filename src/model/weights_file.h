// The weights file in its three forms (data/FORMAT.md): weights.json with
// tensors as lists of numbers or as base64 float32, and weights.safetensors.
// All three hold the same config and the same float32 values, so converting
// between them is lossless, except to a safetensors file of 16-bit floats
// (F16, BF16), which rounds each value once; those are widened back to
// float32 exactly when read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "format/file_bytes.h"
#include "model/config.h"
#include "model/weights.h"

namespace nextword {

struct WeightsFile {
  Config config;
  Weights weights;
  int64_t bytes = 0;  // the file's size
};

enum class WeightsFormat { kJsonNumbers, kJsonBase64, kSafetensors, kGguf };

// The element type of a safetensors tensor: float32, IEEE binary16, bfloat16.
enum class TensorDtype { kF32, kF16, kBF16 };
// "F32", "F16", "BF16", as the safetensors header spells them.
const char* dtype_name(TensorDtype dtype);

// weights.safetensors when the name ends in ".safetensors", else weights.json
// (the form a file to be written takes).
WeightsFormat format_of_path(const std::string& path);
// The form of an existing file, by its first bytes: "GGUF" (kGguf), an
// 8-byte length then "{" (kSafetensors), "{" after any whitespace (JSON);
// by its name when it is not a regular file (a pipe, whose bytes only its
// reader may take) or cannot be read (its reader then says why).
WeightsFormat weights_format(const std::string& path);

// The largest weights file read, in any form: 16 GiB (a float32 model of
// 4 billion parameters as safetensors; weights.json takes about 3 times the
// bytes of its numbers).
constexpr size_t kMaxWeightsBytes = size_t{16} << 30;

// What the first bytes of a safetensors file that is not mapped must be: a
// header length the format allows, then the header's "{".
void check_safetensors_start(const std::string& path, std::string_view first);

// What read_safetensors does with F16 tensors: keeps them for the products
// to read (kRead: half the bytes, nothing widened at load) or widens them
// all at load (kWiden: today's floats, for a command that reads every
// weight many times). The products' results are the same bits either way.
// The environment's NEXTWORD_HALVES=widen|read (for benchmarks) before a
// command's own choice (set_half_weights), before kRead.
enum class HalfWeights { kRead, kWiden };
HalfWeights half_weights();
void set_half_weights(HalfWeights mode);

// Reads either form; throws model_error naming the file and field at fault.
WeightsFile read_weights(const std::string& path);
// The same for a file whose form weights_format has already told.
WeightsFile read_weights(const std::string& path, WeightsFormat format);
WeightsFile read_weights_json(const FileBytes& file);
// The tensors stay in the mapped file (zero-copy) when they are all F32 and
// aligned; otherwise they are copied once into owned float32 storage, F16
// and BF16 tensors widened on the way.
WeightsFile read_safetensors(const std::shared_ptr<FileBytes>& file);

// The file's bytes in the given form. weights_safetensors writes every tensor
// in `dtype`, rounding to nearest even; a value beyond the dtype's range throws
// Error(kUsage) naming the tensor and element.
std::string weights_json(const Config& config, const Weights& weights, bool base64);
std::string weights_safetensors(const Config& config, const Weights& weights,
                                TensorDtype dtype = TensorDtype::kF32);
std::string encode_weights(const Config& config, const Weights& weights, WeightsFormat format);

}  // namespace nextword
