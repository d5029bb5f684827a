// libFuzzer: any bytes as weights.json load or fail with a model error,
// never crash, hang, leak or trip a sanitizer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "model/weights_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = nextword::FileBytes::from_bytes(
      "weights.json", std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)nextword::read_weights_json(*file);
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel) __builtin_trap();
  }
  return 0;
}
