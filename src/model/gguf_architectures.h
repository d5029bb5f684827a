// The architectures a GGUF file may hold (general.architecture), each as
// the Config its hyperparameters make ({arch}.* keys) and one table of its
// tensors' names, as llama.cpp writes them, onto format v1's
// (data/FORMAT.md, "GGUF files"): so a GGUF model is the same Config and
// Weights every command runs, with no forward pass of its own.
//   llama  RMSNorm, rotary positions on adjacent pairs (Llama 3's rope_freqs
//          factors where the file has them), SwiGLU, grouped-query attention;
//   qwen2  as llama, with biases on Q, K and V and rotary positions on the
//          two halves of each head (GPT-NeoX's pairing);
//   gpt2   LayerNorm with biases, GELU, learned positions, Q, K and V fused
//          in one attn_qkv tensor, biases on every projection.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "model/config.h"

namespace nextword {

class GgufFile;

// One tensor of an architecture.
struct GgufTensorName {
  const char* gguf;  // llama.cpp's name, "blk.N." leading each layer's
  const char* ours;  // format v1's, "layers.N." left out of each layer's
  // The file holds it as rows of outputs ([out, in], every projection)
  // rather than in the math's layout (vectors, and the embedding, positions
  // and classifier, whose rows are words or positions in both).
  bool output_rows;
  // Of a tensor fusing Q, K and V (rows or elements in that order): 0 for
  // Q's share, 1 for K's, 2 for V's; -1 for a tensor of its own.
  int part = -1;
};

struct GgufArchitecture {
  const char* name;
  std::span<const GgufTensorName> tensors;
  // The config of the file's hyperparameters, for a vocabulary of
  // vocab_size; model_error naming the key at fault.
  Config (*config)(const GgufFile& file, int vocab_size);
};

// The architecture general.architecture names, or null.
const GgufArchitecture* find_architecture(std::string_view name);
// Those read, for messages: "llama, qwen2, gpt2".
std::string architecture_names();

}  // namespace nextword
