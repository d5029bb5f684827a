#include "model/model_writer.h"

#include <nlohmann/json.hpp>

#include "base/file_output.h"
#include "model/weights_file.h"

namespace nextword {

void save_model(const Model& model, const ModelPaths& paths) {
  write_file_atomically(paths.vocab, nlohmann::json(model.vocab.words()).dump() + "\n");
  write_file_atomically(paths.weights,
                        encode_weights(model.config, model.weights, format_of_path(paths.weights)));
}

}  // namespace nextword
