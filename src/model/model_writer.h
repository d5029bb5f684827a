// Writing a model as vocab.json + weights (format v1), atomically.
//
// weights.json gets "b64" float32 tensors, which round-trip every value
// exactly and load fastest of the JSON forms; a path ending in .safetensors
// gets safetensors. Each file is written to a temporary file in the
// same directory, flushed to disk and renamed over the old one, so a reader
// (or a crash) never sees a half-written model.
#pragma once

#include <string>

#include "model/model_file.h"

namespace nextword {

// vocab.json's bytes: the words as a JSON array, ids in order.
std::string vocab_json(const Vocabulary& vocab);

// Throws Error(kIo) when a file cannot be written.
void save_model(const Model& model, const ModelPaths& paths);

}  // namespace nextword
