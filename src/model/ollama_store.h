// The models ollama has pulled, read where ollama keeps them: `--model
// ollama:NAME[:TAG]` is the GGUF blob of NAME:TAG's model layer, which
// load_model then reads in place as any GGUF file (docs/usage.md, "Bring a
// GGUF model"). This file reads ollama's store and nothing else: its
// manifests (manifests/HOST/NAMESPACE/MODEL/TAG, JSON) and the names of its
// blobs (blobs/sha256-HEX); the GGUF container is format/gguf.h's.
//
// A blob's size is checked against its manifest, but not its sha256: ollama
// checks the digest when it pulls, and hashing a model of several GB on
// every start would take seconds where a prediction takes milliseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace nextword {

// The prefix of a --model value that names one of ollama's models.
inline constexpr const char* kOllamaPrefix = "ollama:";

// Does `value` start with kOllamaPrefix?
bool is_ollama_reference(const std::string& value);

// ollama's store: $OLLAMA_MODELS when set and not empty, else
// $HOME/.ollama/models ("" when neither is set), as ollama itself finds it.
std::string ollama_store();

struct OllamaModel {
  std::string name;      // "NAME:TAG" as ollama lists it: "llama3.2:latest", "user/m:q8_0"
  std::string manifest;  // its manifest file
  std::string blob;      // its model layer's blob: the GGUF file
  uint64_t bytes = 0;    // the blob's size, as the manifest gives it and the blob has
};

// The model `reference` names in `store`: NAME[:TAG] (kOllamaPrefix left
// off), TAG `latest` when none is given. NAME is MODEL (ollama's library:
// registry.ollama.ai/library/MODEL), NAMESPACE/MODEL (registry.ollama.ai/
// NAMESPACE/MODEL) or HOST/NAMESPACE/MODEL (hf.co/user/repo); each part and
// the TAG are letters, digits, '_', '.' and '-' (a HOST also ':'), not
// starting with '.' or '-', so a name never reaches outside the store.
// Throws Error(kModel), one line naming the file and the field: no store,
// no such manifest (with the tags the store has of NAME), a manifest that
// is not JSON or has no model layer, a digest that is not "sha256:" and 64
// hex digits, a blob missing, of another size or not a GGUF file.
OllamaModel find_ollama_model(const std::string& store, const std::string& reference);

// One manifest of the store, as `nextword models` lists it.
struct OllamaListed {
  std::string name;                  // NAME:TAG, as find_ollama_model takes it
  std::optional<OllamaModel> model;  // or, when it cannot be read:
  std::optional<Error> error;        // find_ollama_model's error
};

// Every manifest of the store with a model layer, in name order: read and
// checked as find_ollama_model reads it (a manifest that names no model
// layer, such as an ollama cloud model's, is not a model and is left out).
// Empty when the store does not exist.
std::vector<OllamaListed> ollama_models(const std::string& store);

}  // namespace nextword
