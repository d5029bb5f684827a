// Where `nextword` finds its models: by name along a search path, and the
// default one when no --model is given.
#pragma once

#include <string>
#include <vector>

namespace nextword::cli {

// The model used when no --model is given: the installed model of this name.
inline constexpr const char* kDefaultModel = "english";

// The directories searched for a model's name, in order (docs/usage.md,
// "Models by name"): each directory of $NEXTWORD_MODELS (colon-separated), then
// $XDG_DATA_HOME/nextword/models (~/.local/share/nextword/models when
// XDG_DATA_HOME is unset), then the installed models <prefix>/share/nextword/
// models for a binary in <prefix>/bin, else data/ of the source tree this
// binary was built from.
std::vector<std::string> model_search_path();

// The person's own models: $XDG_DATA_HOME/nextword/models, else
// ~/.local/share/nextword/models ("" with neither set), where `adapt --name`
// writes and the search path's second place.
std::string user_models_directory();

// The model a command given no --model loads: $NEXTWORD_MODEL if set (a
// name, a directory or ollama:NAME[:TAG]), else kDefaultModel.
std::string default_model();

// The directory a --model value means (a directory, or a model's name on
// the search path: model/installed_models.h), or the GGUF file of
// ollama:NAME[:TAG] (model/ollama_store.h); with no value, $NEXTWORD_MODEL
// if set, else the default model. Throws Error(kModel) naming where it
// looked when there is no such model.
std::string model_directory(const std::string& value);

}  // namespace nextword::cli
