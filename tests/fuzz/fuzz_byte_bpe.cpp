// libFuzzer: byte-level BPE (text/byte_bpe.h) on any bytes, the first byte
// choosing the pre-tokenizer: on a small vocabulary (every byte, a few
// merges, user-defined and control tokens), the ids write back the text
// with its bytes that are not UTF-8 as U+FFFD, never a control token, all
// inside the vocabulary; and the pre-tokenizer's pieces cover the text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/byte_bpe.h"
#include "text/utf8.h"

namespace {

using nextword::BpeVocabulary;
using nextword::ByteBpeTokenizer;

std::string spelled(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    const char32_t s = nextword::byte_character(static_cast<uint8_t>(c));
    if (s < 0x80) {
      out += static_cast<char>(s);
    } else {
      out += static_cast<char>(0xC0 | (s >> 6));
      out += static_cast<char>(0x80 | (s & 0x3F));
    }
  }
  return out;
}

std::vector<ByteBpeTokenizer> tokenizers() {
  std::vector<ByteBpeTokenizer> all;
  for (const std::string& pre : nextword::PreTokenizer::names()) {
    BpeVocabulary v;
    for (int b = 0; b < 256; ++b) {
      v.tokens.push_back(spelled(std::string(1, static_cast<char>(b))));
      v.types.push_back(nextword::kNormalToken);
    }
    for (const char* made : {"th", "the", " the", "in", " a", "  ", "\n\n", "12"}) {
      v.tokens.push_back(spelled(made));
      v.types.push_back(nextword::kNormalToken);
    }
    v.merges = {"t h",
                "th e",
                spelled(" ") + " the",
                "i n",
                spelled(" ") + " a",
                spelled(" ") + " " + spelled(" "),
                spelled("\n") + " " + spelled("\n"),
                "1 2"};
    v.tokens.insert(v.tokens.end(), {"<|end|>", "<u>", "<u>>", "\xE2\x82\xAC"});
    v.types.insert(v.types.end(), {nextword::kControlToken, nextword::kUserDefinedToken,
                                   nextword::kUserDefinedToken, nextword::kUserDefinedToken});
    v.pre = pre;
    all.emplace_back(std::move(v), "fuzz.gguf");
  }
  return all;
}

std::string replaced(std::string_view text) {
  std::string out;
  const char* end = text.data() + text.size();
  for (const char* p = text.data(); p < end;) {
    const size_t n = nextword::utf8_sequence_length(p, end);
    out += n == 0 ? std::string_view("\xEF\xBF\xBD") : std::string_view(p, n);
    p += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<ByteBpeTokenizer> all = tokenizers();
  if (size == 0) return 0;
  const ByteBpeTokenizer& t = all[data[0] % all.size()];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<int> ids = t.encode(text);
  for (const int id : ids) {
    if (id < 0 || id >= t.size() || t.type(id) == nextword::kControlToken) __builtin_trap();
  }
  const std::string valid = replaced(text);
  if (t.decode(ids) != valid) __builtin_trap();
  size_t covered = 0;
  for (const std::string_view piece : t.pre_tokenizer().split(valid)) {
    if (piece.empty() || piece.data() != valid.data() + covered) __builtin_trap();
    covered += piece.size();
  }
  if (covered != valid.size()) __builtin_trap();
  return 0;
}
