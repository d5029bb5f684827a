// Models by name: `--model english` names the model directory of that name
// in the first directory of a search path that has one (cli/default_model.h
// gives nextword's path), as `--model DIR` names a directory.
#pragma once

#include <string>
#include <vector>

namespace nextword {

struct InstalledModel {
  std::string name;  // the directory's name, e.g. "english", or a GGUF file's without ".gguf"
  std::string dir;   // its path (the directory, or the GGUF file)
};

// The models along the search path, in name order: each directory holding
// vocab.json, weights.safetensors or weights.json, and each file NAME.gguf
// (whether they load is load_model's to say); a name is the first
// directory or GGUF file of that name on the path, so a later model of the
// same name is hidden.
std::vector<InstalledModel> installed_models(const std::vector<std::string>& search_path);

// Is `value` a model's name rather than a path: non-empty, no '/', not "."
// or "..", and no directory or file of that name here?
bool is_model_name(const std::string& value);

// The directory a --model value means: the value itself when it is a path,
// else the model of that name on the search path. Throws Error(kModel)
// naming the directory of that name that holds no model, or else the models
// found and every directory searched.
std::string resolve_model(const std::string& value, const std::vector<std::string>& search_path);

}  // namespace nextword
