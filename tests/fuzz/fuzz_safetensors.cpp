// libFuzzer: any bytes as weights.safetensors load or fail with a model
// error; a file that loads has every tensor inside the file's bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "model/weights_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = nextword::FileBytes::from_bytes(
      "weights.safetensors", std::string(reinterpret_cast<const char*>(data), size));
  try {
    const nextword::WeightsFile w = nextword::read_safetensors(file);
    double sum = 0;  // reads every float: ASan checks each is inside the file
    for (size_t i = 0; i < w.weights.tensors().size(); ++i) {
      for (int64_t j = 0; j < w.weights.tensors()[i].size(); ++j) sum += w.weights.data(i)[j];
    }
    if (sum != sum) __builtin_trap();  // loaded weights are finite
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel) __builtin_trap();
  }
  return 0;
}
