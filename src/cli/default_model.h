// Where `nextword` finds its model when no --model is given.
#pragma once

#include <string>

namespace nextword::cli {

// The default model's directory: $NEXTWORD_MODEL if set, else the installed
// copy (<prefix>/share/nextword/default, found next to the executable), else
// data/default in the source tree this binary was built from. Throws
// Error(kModel) listing the places it looked when none has a model.
std::string default_model_dir();

}  // namespace nextword::cli
