// libFuzzer: any bytes as vocab.json give a vocabulary whose ids and words
// agree, or a model error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "model/file_bytes.h"
#include "model/model_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = nextword::FileBytes::from_bytes(
      "vocab.json", std::string(reinterpret_cast<const char*>(data), size));
  try {
    const nextword::Vocabulary vocab = nextword::read_vocabulary(*file);
    for (int id = 0; id < vocab.size(); ++id) {
      if (vocab.find(vocab.word(id)) != id) __builtin_trap();
    }
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel) __builtin_trap();
  }
  return 0;
}
