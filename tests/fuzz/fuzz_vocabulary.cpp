// libFuzzer: any bytes as vocab.json give a vocabulary whose ids and words
// agree, and whose vocab.bin reads back the same, or a model error; any
// bytes as vocab.bin are refused with a model error naming it, or read into
// words whose search never answers another word's id.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/error.h"
#include "format/file_bytes.h"
#include "model/model_file.h"
#include "model/vocab_index.h"

namespace {

void as_vocab_json(const std::string& bytes) {
  const auto file = nextword::FileBytes::from_bytes("vocab.json", bytes);
  try {
    const nextword::Vocabulary vocab = nextword::read_vocabulary(*file);
    for (int id = 0; id < vocab.size(); ++id) {
      if (vocab.find(vocab.word(id)) != id) __builtin_trap();
    }
    const std::optional<nextword::Vocabulary> again = nextword::vocab_index_from_bytes(
        "vocab.bin", nextword::vocab_index_bytes(vocab, bytes.size()), bytes.size());
    if (!again || again->words() != vocab.words()) __builtin_trap();
    for (int id = 0; id < vocab.size(); ++id) {
      if (again->find(vocab.word(id)) != id) __builtin_trap();
    }
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel) __builtin_trap();
  }
}

void as_vocab_bin(const std::string& bytes) {
  uint64_t json_bytes = 0;  // what the header says, so that the rest is checked
  if (bytes.size() >= 24) std::memcpy(&json_bytes, bytes.data() + 16, 8);
  try {
    const std::optional<nextword::Vocabulary> vocab =
        nextword::vocab_index_from_bytes("vocab.bin", bytes, json_bytes);
    if (!vocab) __builtin_trap();
    for (int id = 0; id < vocab->size(); ++id) {
      const int found = vocab->find(vocab->word(id));
      if (found != -1 && vocab->word(found) != vocab->word(id)) __builtin_trap();
    }
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel || e.message().rfind("vocab.bin: ", 0) != 0) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  as_vocab_json(bytes);
  as_vocab_bin(bytes);
  return 0;
}
