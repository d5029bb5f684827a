#include "model/gguf_vocabulary.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "format/gguf.h"
#include "model/config.h"
#include "model/gguf_bpe_vocabulary.h"
#include "text/subword.h"
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

// The special pieces from tokenizer.ggml.*_token_id and add_bos_token, each
// at llama.cpp's default for the tokenizer where the key is absent.
SpecialPieces special_pieces(const GgufFile& g, size_t tokens, SpecialPieces fallback) {
  const auto id = [&](const char* key, int missing) {
    if (missing < 0 && !g.has(key)) return -1;
    const uint64_t value = g.integer(key, static_cast<uint64_t>(missing));
    if (value >= tokens) {
      throw model_error(
          g.path(), std::string("metadata.") + key,
          std::to_string(value) + " is not a token id (of " + std::to_string(tokens) + ")");
    }
    return static_cast<int>(value);
  };
  SpecialPieces s;
  s.unk = id("tokenizer.ggml.unknown_token_id", fallback.unk);
  s.bos = id("tokenizer.ggml.bos_token_id", fallback.bos);
  s.eos = id("tokenizer.ggml.eos_token_id", fallback.eos);
  s.add_bos = g.boolean("tokenizer.ggml.add_bos_token", fallback.add_bos);
  return s;
}

void check_token_count(const GgufFile& g, size_t count) {
  if (count == 0 || count > static_cast<uint64_t>(kMaxVocabulary)) {
    throw model_error(g.path(), "metadata.tokenizer.ggml.tokens",
                      std::to_string(count) + " tokens is out of range");
  }
}

// tokenizer.ggml.model "llama": SentencePiece pieces with scores.
GgufVocabulary sentencepiece(const GgufFile& g) {
  const std::string& path = g.path();
  const std::vector<std::string_view> tokens = g.strings("tokenizer.ggml.tokens");
  check_token_count(g, tokens.size());
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
  // llama.cpp's defaults for SentencePiece: <unk> 0, <s> 1, </s> 2, a BOS first.
  const SpecialPieces special = special_pieces(g, tokens.size(), {0, 1, 2, true});
  out.scores = pieces.scores;
  out.vocab = Vocabulary(pieces.pieces, path);
  out.tokenizer = std::make_shared<const SubwordTokenizer>(std::move(pieces), path, special);
  return out;
}

// tokenizer.ggml.model "gpt2": byte-level BPE.
GgufVocabulary byte_level_bpe(const GgufFile& g) {
  BpeVocabulary bpe = gguf_bpe_vocabulary(g);
  check_token_count(g, bpe.tokens.size());
  // llama.cpp's defaults for byte-level BPE: no <unk>, BOS and EOS id 11,
  // a BOS first only with Llama 3's pre-tokenizer.
  const bool llama3 = bpe.pre == "llama-bpe" || bpe.pre == "llama3" || bpe.pre == "llama-v3";
  const SpecialPieces special = special_pieces(g, bpe.tokens.size(), {-1, 11, 11, llama3});
  GgufVocabulary out;
  out.scores.assign(bpe.tokens.size(), 0.0f);
  out.vocab = Vocabulary(bpe.tokens, g.path());
  out.tokenizer = std::make_shared<const ByteBpeTokenizer>(std::move(bpe), g.path(), special);
  return out;
}

}  // namespace

GgufVocabulary gguf_vocabulary(const GgufFile& g) {
  const std::string model(g.string("tokenizer.ggml.model"));
  if (model == "llama") return sentencepiece(g);
  if (model == "gpt2") return byte_level_bpe(g);
  throw model_error(g.path(), "metadata.tokenizer.ggml.model",
                    "\"" + model +
                        "\" is not read (nextword reads llama, SentencePiece, and gpt2, "
                        "byte-level BPE)");
}

}  // namespace nextword
