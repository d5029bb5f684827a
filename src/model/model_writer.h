// Writing a model as vocab.json + weights.json (format v1), atomically.
//
// Tensors are written as "b64" float32, which round-trips every value
// exactly and loads fastest. Each file is written to a temporary file in the
// same directory, flushed to disk and renamed over the old one, so a reader
// (or a crash) never sees a half-written model.
#pragma once

#include <string>

#include "model/model_file.h"

namespace nextword {

// Throws Error(kIo) when a file cannot be written.
void save_model(const Model& model, const ModelPaths& paths);

// `content` replaces `path` all at once (temp file + fsync + rename).
void write_file_atomically(const std::string& path, const std::string& content);

// The weights.json text of a model (config + every present tensor as b64).
std::string weights_json(const Model& model);

}  // namespace nextword
