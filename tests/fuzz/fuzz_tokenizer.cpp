// libFuzzer: the tokenizer on any bytes, with every option: no empty token,
// no token with whitespace in it, and lowercase means no ASCII capitals.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const bool lowercase : {false, true}) {
    for (const bool split : {false, true}) {
      const nextword::TokenizerOptions options{lowercase, split};
      for (const std::string& token : nextword::tokenize(text, options)) {
        if (token.empty()) __builtin_trap();
        for (const char c : token) {
          if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            __builtin_trap();
          }
          if (lowercase && c >= 'A' && c <= 'Z') __builtin_trap();
        }
      }
    }
  }
  return 0;
}
