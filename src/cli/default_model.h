// Where `nextword` finds its models: by name in its data directories, and
// the default one when no --model is given.
#pragma once

#include <string>
#include <vector>

namespace nextword::cli {

// The model used when no --model is given: the installed model of this name.
inline constexpr const char* kDefaultModel = "english";

// The data directories that hold the models, searched in order: the
// installed copy (<prefix>/share/nextword, for a binary in <prefix>/bin),
// then data/ of the source tree this binary was built from.
std::vector<std::string> data_directories();

// The directory a --model value means (a directory, or an installed model's
// name: model/installed_models.h); with no value, $NEXTWORD_MODEL if set
// (a name or a directory), else the default model. Throws Error(kModel)
// listing what it looked for when there is no such model.
std::string model_directory(const std::string& value);

}  // namespace nextword::cli
