#include "lsp/params.h"

#include <cstdint>

namespace nextword::lsp {

using nlohmann::json;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw ParamsError{path + ": " + what};
}

const json& member(const json& object, const std::string& path, const char* key) {
  if (!object.is_object()) bad(path, "not an object");
  const auto it = object.find(key);
  if (it == object.end()) bad(path + "." + key, "missing");
  return *it;
}

size_t whole(const json& value, const std::string& path) {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0)) {
    bad(path, "not a whole number");
  }
  return value.get<size_t>();
}

const std::string& text(const json& value, const std::string& path) {
  if (!value.is_string()) bad(path, "not a string");
  return value.get_ref<const std::string&>();
}

Position position_at(const json& object, const std::string& path) {
  return {whole(member(object, path, "line"), path + ".line"),
          whole(member(object, path, "character"), path + ".character")};
}

json position_json(Position p) { return {{"line", p.line}, {"character", p.character}}; }

const std::string& document_uri(const json& params) {
  return text(member(member(params, "params", "textDocument"), "params.textDocument", "uri"),
              "params.textDocument.uri");
}

}  // namespace nextword::lsp
