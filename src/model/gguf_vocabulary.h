// The vocabulary and tokenizer a GGUF file's metadata describes
// (tokenizer.ggml.*), without its tensors: what a model of the file reads
// and writes, and all that `nextword tokenize` needs of a vocabulary-only
// file (data/FORMAT.md, "GGUF files").
#pragma once

#include <memory>
#include <vector>

#include "model/vocabulary.h"
#include "text/piece_tokenizer.h"

namespace nextword {

class GgufFile;

struct GgufVocabulary {
  // The tokens as the file spells them (SentencePiece's U+2581 read as a
  // space; byte-level BPE's byte stand-ins kept, "Ġthe").
  Vocabulary vocab;
  std::vector<float> scores;  // by id (SentencePiece's; 0 for byte-level BPE)
  // Its special pieces from tokenizer.ggml.*_token_id and add_bos_token.
  std::shared_ptr<const PieceTokenizer> tokenizer;
};

// tokenizer.ggml.model "llama" (SentencePiece with scores and byte
// fallback, text/subword.h) or "gpt2" (byte-level BPE with the
// pre-tokenizer tokenizer.ggml.pre names, text/byte_bpe.h); any other is
// one line naming the key. Throws model_error naming the file and the key
// at fault (exit 3).
GgufVocabulary gguf_vocabulary(const GgufFile& g);

}  // namespace nextword
