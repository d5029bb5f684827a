#include "model/gguf_bpe_vocabulary.h"

#include <cmath>
#include <string>

#include "base/error.h"
#include "format/gguf.h"
#include "model/config.h"

namespace nextword {

BpeVocabulary gguf_bpe_vocabulary(const GgufFile& g) {
  const std::string& path = g.path();
  const std::string model(g.string("tokenizer.ggml.model"));
  if (model != "gpt2") {
    throw model_error(path, "metadata.tokenizer.ggml.model",
                      "\"" + model + "\" is not byte-level BPE (gpt2)");
  }
  BpeVocabulary out;
  const std::vector<std::string_view> tokens = g.strings("tokenizer.ggml.tokens");
  if (tokens.empty() || tokens.size() > static_cast<uint64_t>(kMaxVocabulary)) {
    throw model_error(path, "metadata.tokenizer.ggml.tokens",
                      std::to_string(tokens.size()) + " tokens is out of range");
  }
  out.tokens.assign(tokens.begin(), tokens.end());
  if (g.has("tokenizer.ggml.token_type")) {
    const std::vector<double> types = g.numbers("tokenizer.ggml.token_type", tokens.size());
    out.types.reserve(types.size());
    for (size_t id = 0; id < types.size(); ++id) {
      const double type = types[id];
      if (!(type >= -2147483648.0 && type <= 2147483647.0) || type != std::floor(type)) {
        throw model_error(path, "metadata.tokenizer.ggml.token_type",
                          "the type of token " + std::to_string(id) + " is not a whole number");
      }
      out.types.push_back(static_cast<int32_t>(type));
    }
  }
  for (const std::string_view merge : g.strings("tokenizer.ggml.merges")) {
    out.merges.emplace_back(merge);
  }
  out.pre = std::string(g.string("tokenizer.ggml.pre", "default"));
  return out;
}

}  // namespace nextword
