// Loading a model from its two files: vocab.json, and weights.json or
// weights.safetensors (format v1).
//
// The format is the project's public contract and is specified in
// data/FORMAT.md; every check made here is described there.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "model/config.h"
#include "model/memory_file.h"
#include "model/vocabulary.h"
#include "model/weights.h"
#include "text/subword.h"

namespace nextword {

class FileBytes;
class GgufFile;

struct ModelPaths {
  std::string vocab;    // vocab.json; empty for a model of one file (GGUF)
  std::string weights;  // weights.json, weights.safetensors or a GGUF file (weights_format)
  std::string memory;   // memory.bin, or empty for none
  // DIR/vocab.json with DIR/weights.safetensors when it exists, else
  // DIR/weights.json; DIR/memory.bin when it exists. A file (a GGUF
  // model) is the weights alone.
  static ModelPaths in_directory(const std::string& dir);
};

struct Model {
  ModelPaths paths;
  int64_t vocab_file_bytes = 0;
  int64_t weights_file_bytes = 0;
  Config config;
  Vocabulary vocab;
  Weights weights;
  int unk_id = -1;
  int bos_id = -1;  // -1: the config names no bos_token
  // A subword model's tokenizer (Config::subword()): its pieces are the
  // vocabulary's words. Null otherwise.
  std::shared_ptr<const PieceTokenizer> subword;
  // The memory of its training text (predict/memory_mixture.h), or null.
  std::shared_ptr<const Memory> memory;
  // The GGUF file a model of one file was read from (its metadata and
  // tensor types, for `info`), or null.
  std::shared_ptr<const GgufFile> gguf;

  bool is_special(int id) const { return id == unk_id || id == bos_id; }
};

// Throws nextword::Error (ExitCode::kModel) naming the file and field at fault.
Model load_model(const ModelPaths& paths);

// The tokenizer of a subword model from its vocabulary and piece_scores;
// model_error naming `file` (vocab.json) when a piece it needs is missing.
std::shared_ptr<const SubwordTokenizer> subword_tokenizer(const Vocabulary& vocab,
                                                          const Weights& weights,
                                                          const std::string& file);

// vocab.json's words, from the file's bytes (same errors).
Vocabulary read_vocabulary(const FileBytes& file);

}  // namespace nextword
