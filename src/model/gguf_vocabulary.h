// The vocabulary and tokenizer a GGUF file's metadata describes
// (tokenizer.ggml.*), without its tensors: what a model of the file reads
// and writes, and all that `nextword tokenize` needs of a vocabulary-only
// file (data/FORMAT.md, "GGUF files").
#pragma once

#include <memory>
#include <vector>

#include "model/vocabulary.h"
#include "text/subword.h"

namespace nextword {

class GgufFile;

struct GgufVocabulary {
  Vocabulary vocab;           // the tokens as the file spells them, U+2581 read as a space
  std::vector<float> scores;  // by id
  std::shared_ptr<const PieceTokenizer> tokenizer;
  int unk = 0, bos = 1;
};

// tokenizer.ggml.model "llama" (SentencePiece with scores and byte
// fallback); any other is one line naming the key. Throws model_error
// naming the file and the key at fault (exit 3).
GgufVocabulary gguf_vocabulary(const GgufFile& g);

}  // namespace nextword
