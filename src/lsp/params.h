// What the params of a message hold, read with one error shape: a field
// that is missing or of another type is a ParamsError "PATH: what", PATH as
// the message spells it (params.position.line), which a request answers
// with -32602 and a notification logs.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "lsp/document.h"

namespace nextword::lsp {

struct ParamsError {
  std::string message;
};

[[noreturn]] void bad(const std::string& path, const std::string& what);

// object[key], `object` being at `path`.
const nlohmann::json& member(const nlohmann::json& object, const std::string& path,
                             const char* key);
size_t whole(const nlohmann::json& value, const std::string& path);
const std::string& text(const nlohmann::json& value, const std::string& path);
// {"line", "character"} at `path`.
Position position_at(const nlohmann::json& object, const std::string& path);
nlohmann::json position_json(Position p);
// params.textDocument.uri.
const std::string& document_uri(const nlohmann::json& params);

}  // namespace nextword::lsp
