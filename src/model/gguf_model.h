// A GGUF file (format/gguf.h) as the Model every command runs: its
// architecture's hyperparameters as a Config, its tensors as the Weights
// that visit_layout names (read in place: matrices as rows of outputs,
// base/weight_view.h), its vocabulary and its tokenizer from the metadata.
//
// Architectures: llama, qwen2, gpt2 (model/gguf_architectures.h), each a
// table of tensor names onto format v1's (data/FORMAT.md, "GGUF files").
// Tensor types: F32, F16, BF16 and Q8_0 (ggml's blocks of 32 int8 and an
// F16 scale), every tensor read in place: the products and the embedding
// widen their elements as they read them, any other reader gets the tensor
// widened once. The tokenizer: tokenizer.ggml.model "llama" (SentencePiece
// with scores and byte fallback) or "gpt2" (byte-level BPE).
#pragma once

#include <string>

#include "model/model_file.h"

namespace nextword {

class GgufFile;

// Throws model_error naming the file and the key or tensor at fault (exit 3):
// an architecture, tokenizer or tensor type not read, a missing
// hyperparameter, a tensor missing or of a shape the hyperparameters do not
// give, a vocabulary that does not match the embedding.
Model gguf_model(const std::string& path);
Model gguf_model(std::shared_ptr<const GgufFile> file);

}  // namespace nextword
