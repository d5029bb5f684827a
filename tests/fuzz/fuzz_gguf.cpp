// libFuzzer: any bytes as a GGUF file (format/gguf.h), read or refused with
// a model error naming the file; a file that reads has every tensor's bytes
// inside it, and every key's value reads as text. Then as a model
// (model/gguf_model.h): refused with a model error, or a model whose
// tokenizer encodes and decodes a text with every id inside the vocabulary.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "format/file_bytes.h"
#include "format/gguf.h"
#include "model/gguf_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = nextword::FileBytes::from_bytes(
      "m.gguf", std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto g = nextword::GgufFile::from_file(bytes);
    const char* begin = bytes->data();
    const char* end = begin + bytes->size();
    for (const nextword::GgufTensor& t : g->tensors()) {
      if (t.data < begin || t.data > end || t.bytes > static_cast<uint64_t>(end - t.data)) {
        __builtin_trap();
      }
    }
    for (const auto& [key, value] : g->metadata()) (void)g->value_text(value);
    const nextword::Model m = nextword::gguf_model(g);
    if (m.subword == nullptr || m.vocab.size() != m.config.vocab_size) __builtin_trap();
    int previous = m.bos_id;
    std::string decoded;
    for (const int id : m.subword->encode("Once upon a time, \xff\xfe caf\xc3\xa9 ok")) {
      if (id < 0 || id >= m.vocab.size()) __builtin_trap();
      decoded += m.subword->decode(previous, id);
      previous = id;
    }
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel || e.message().rfind("m.gguf: ", 0) != 0) {
      __builtin_trap();
    }
  }
  return 0;
}
