// Models by name: `--model english` and `--model stories` name a model
// directory of that name in a data directory (data/ of the source tree a
// binary was built from, or <prefix>/share/nextword of an installed one), as
// `--model DIR` names a directory.
#pragma once

#include <string>
#include <vector>

namespace nextword {

struct InstalledModel {
  std::string name;  // the directory's name, e.g. "english"
  std::string dir;   // its path
};

// The models of the data directories, each a directory holding vocab.json
// and weights.safetensors or weights.json, in name order; a name found in
// two data directories is the first one's.
std::vector<InstalledModel> installed_models(const std::vector<std::string>& data_dirs);

// Is `value` a model's name rather than a path: non-empty, no '/', not "."
// or "..", and no directory of that name here?
bool is_model_name(const std::string& value);

// The directory a --model value means: the value itself when it is a path,
// else the installed model of that name. Throws Error(kModel) naming the
// installed models when there is none of that name.
std::string resolve_model(const std::string& value, const std::vector<std::string>& data_dirs);

}  // namespace nextword
