#include "model/model_writer.h"

#include <nlohmann/json.hpp>

#include "base/file_output.h"
#include "model/weights_file.h"

namespace nextword {

std::string vocab_json(const Vocabulary& vocab) {
  return nlohmann::json(vocab.words()).dump() + "\n";
}

void save_model(const Model& model, const ModelPaths& paths) {
  write_file_atomically(paths.vocab, vocab_json(model.vocab));
  write_file_atomically(paths.weights,
                        encode_weights(model.config, model.weights, format_of_path(paths.weights)));
}

}  // namespace nextword
