// libFuzzer: any bytes as a llama2.c checkpoint (first byte even) or as a
// tokenizer.bin (first byte odd) read or fail with a model error; a
// checkpoint that reads has every value finite, and a tokenizer that reads
// encodes and decodes a text with every id inside its pieces.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "model/llama2c.h"
#include "text/subword.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) {
      const nextword::Llama2cCheckpoint c = nextword::read_llama2c(bytes, "model.bin");
      for (size_t i = 0; i < c.weights.tensors().size(); ++i) {
        const auto n = static_cast<size_t>(c.weights.tensors()[i].size());
        if (nextword::first_non_finite(c.weights.data(i), n) != n) __builtin_trap();
      }
    } else {
      // 259 pieces at least: <unk>, <s>, </s> and the 256 bytes llama2.c's have.
      const int vocab_size = 259 + data[0] / 2;
      nextword::SubwordTokenizer t(nextword::read_tokenizer_bin(bytes, vocab_size, "tok.bin"),
                                   "tok.bin");
      int previous = nextword::SubwordTokenizer::kBos;
      std::string decoded;
      for (const int id : t.encode("Once upon a time, \xff\xfe caf\xc3\xa9 \xe2\x80\x94 ok")) {
        if (id < 0 || id >= t.size()) __builtin_trap();
        decoded += t.decode(previous, id);
        previous = id;
      }
    }
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel) __builtin_trap();
  }
  return 0;
}
