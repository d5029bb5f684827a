// A GGUF file's byte-level BPE vocabulary (tokenizer.ggml.model "gpt2"):
// the tokens, their types, the merges and the pre-tokenizer's name as
// text/byte_bpe.h takes them (data/FORMAT.md, "GGUF files").
#pragma once

#include "text/byte_bpe.h"

namespace nextword {

class GgufFile;

// tokenizer.ggml.tokens, tokenizer.ggml.token_type (absent: every token
// normal), tokenizer.ggml.merges and tokenizer.ggml.pre (absent: "default",
// as llama.cpp reads such a file). Throws model_error naming the file and
// the key: another tokenizer.ggml.model, a missing key, a key of another
// type, a count of types that is not the count of tokens, a type that is
// not a whole number. ByteBpeTokenizer checks the rest.
BpeVocabulary gguf_bpe_vocabulary(const GgufFile& g);

}  // namespace nextword
