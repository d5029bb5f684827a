#include "model/gguf_vocabulary.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "format/gguf.h"
#include "model/config.h"
#include "text/utf8.h"

namespace nextword {
namespace {

// A SentencePiece token as a piece: U+2581 read as the space it stands for
// (as llama2.c's tokenizer.bin holds them).
std::string piece_of(std::string_view token) {
  std::string piece;
  for (size_t at = 0; at < token.size();) {
    if (token.compare(at, 3, "\xe2\x96\x81") == 0) {
      piece += ' ';
      at += 3;
    } else {
      piece += token[at++];
    }
  }
  return piece;
}

}  // namespace

GgufVocabulary gguf_vocabulary(const GgufFile& g) {
  const std::string& path = g.path();
  const std::string model(g.string("tokenizer.ggml.model"));
  if (model != "llama") {
    throw model_error(path, "metadata.tokenizer.ggml.model",
                      "\"" + model + "\" is not read (nextword reads llama, SentencePiece)");
  }
  const std::vector<std::string_view> tokens = g.strings("tokenizer.ggml.tokens");
  if (tokens.empty() || tokens.size() > static_cast<uint64_t>(kMaxVocabulary)) {
    throw model_error(path, "metadata.tokenizer.ggml.tokens",
                      std::to_string(tokens.size()) + " tokens is out of range");
  }
  GgufVocabulary out;
  const std::vector<double> scores = g.numbers("tokenizer.ggml.scores", tokens.size());
  SubwordPieces pieces;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto score = static_cast<float>(scores[i]);
    if (!std::isfinite(score)) {
      throw model_error(path, "metadata.tokenizer.ggml.scores",
                        "score " + std::to_string(i) + " is not finite");
    }
    if (!is_valid_utf8(tokens[i])) {
      throw model_error(path, "metadata.tokenizer.ggml.tokens",
                        "token " + std::to_string(i) + " is not valid UTF-8");
    }
    pieces.pieces.push_back(piece_of(tokens[i]));
    pieces.scores.push_back(score);
    pieces.max_piece_length =
        std::max(pieces.max_piece_length, static_cast<int>(pieces.pieces.back().size()));
  }
  const auto special = [&](const char* key, uint64_t fallback) {
    const uint64_t id = g.integer(key, fallback);
    if (id >= tokens.size()) {
      throw model_error(
          path, std::string("metadata.") + key,
          std::to_string(id) + " is not a token id (of " + std::to_string(tokens.size()) + ")");
    }
    return static_cast<int>(id);
  };
  out.unk = special("tokenizer.ggml.unknown_token_id", 0);
  out.bos = special("tokenizer.ggml.bos_token_id", 1);
  if (out.unk != SubwordTokenizer::kUnk || out.bos != SubwordTokenizer::kBos) {
    throw model_error(path, "metadata.tokenizer.ggml.bos_token_id",
                      "unknown " + std::to_string(out.unk) + " and bos " + std::to_string(out.bos) +
                          ": only ids 0 and 1 are read yet");
  }
  out.scores = pieces.scores;
  out.vocab = Vocabulary(pieces.pieces, path);
  out.tokenizer = std::make_shared<const SubwordTokenizer>(std::move(pieces), path);
  return out;
}

}  // namespace nextword
