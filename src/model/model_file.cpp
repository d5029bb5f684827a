#include "model/model_file.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/base64.h"
#include "model/error.h"

namespace nextword {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path, int64_t* bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw model_error(path, "", "is a directory, expected a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw model_error(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw model_error(path, "", std::string("cannot read: ") + std::strerror(errno));
  std::string content = std::move(text).str();
  *bytes = static_cast<int64_t>(content.size());
  return content;
}

json parse_json(const std::string& text, const std::string& file) {
  if (text.empty()) throw model_error(file, "", "the file is empty");
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    std::string what = e.what();
    if (const size_t end = what.find("] "); end != std::string::npos) what.erase(0, end + 2);
    throw model_error(file, "",
                      "not valid JSON: " + what + " (byte " + std::to_string(e.byte) + ")");
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(const std::string& name, const std::vector<TensorSpec>& layout) {
  const TensorSpec* best = nullptr;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const TensorSpec& spec : layout) {
    const size_t distance = edit_distance(name, spec.name);
    if (distance < best_distance) best = &spec, best_distance = distance;
  }
  if (best == nullptr || best_distance > std::max<size_t>(3, name.size() / 3)) return "";
  return " (did you mean \"" + best->name + "\"?)";
}

// Reads one {"shape": [...], "data": [...]} or {"shape", "dtype": "f32", "b64"} tensor.
class TensorReader {
 public:
  TensorReader(const std::string& file, const TensorSpec& spec, float* out)
      : file_(file), field_("tensors." + spec.name), spec_(spec), out_(out) {}

  void read(const json& tensor) {
    if (!tensor.is_object()) throw error("", "must be an object with \"shape\" and \"data\"");
    for (const auto& [key, value] : tensor.items()) {
      if (key != "shape" && key != "data" && key != "dtype" && key != "b64") {
        throw error("." + key, "unknown tensor field (expected shape, data or dtype + b64)");
      }
    }
    check_shape(tensor);
    const bool has_data = tensor.contains("data"), has_b64 = tensor.contains("b64");
    if (has_data == has_b64) throw error("", "needs exactly one of \"data\" or \"b64\"");
    if (has_data) {
      read_data(tensor["data"]);
    } else {
      read_b64(tensor);
    }
  }

 private:
  Error error(const std::string& sub, const std::string& what) const {
    return model_error(file_, field_ + sub, what);
  }

  void check_shape(const json& tensor) const {
    auto it = tensor.find("shape");
    if (it == tensor.end()) throw error("", "missing \"shape\"");
    std::vector<int64_t> shape;
    bool valid = it->is_array();
    for (const json& dim : valid ? *it : json::array()) {
      valid = valid && dim.is_number_integer() && dim.get<int64_t>() >= 0;
      if (valid) shape.push_back(dim.get<int64_t>());
    }
    if (!valid)
      throw error(".shape", "must be an array of non-negative integers, got " + it->dump());
    if (shape != spec_.shape) {
      throw error("", "shape " + shape_text(shape) + ", config needs " + shape_text(spec_.shape));
    }
  }

  void read_data(const json& data) {
    const int64_t count = spec_.size();
    if (!data.is_array()) throw error(".data", "must be an array of numbers");
    // Either flat, or nested exactly as the shape says.
    const bool flat = spec_.shape.size() <= 1 || (data.size() > 0 && !data[0].is_array());
    if (flat) {
      if (static_cast<int64_t>(data.size()) != count) {
        throw error(".data", "has " + std::to_string(data.size()) + " numbers, shape " +
                                 shape_text(spec_.shape) + " needs " + std::to_string(count));
      }
      for (size_t i = 0; i < data.size(); ++i) store(data[i], "", i);
    } else {
      read_nested(data, 0, "");
    }
  }

  void read_nested(const json& data, size_t depth, const std::string& where) {
    const auto expected = static_cast<size_t>(spec_.shape[depth]);
    if (!data.is_array() || data.size() != expected) {
      throw error(".data" + where, "must be an array of " + std::to_string(expected) +
                                       (depth + 1 == spec_.shape.size() ? " numbers" : " arrays") +
                                       " to match shape " + shape_text(spec_.shape));
    }
    for (size_t i = 0; i < data.size(); ++i) {
      if (depth + 1 == spec_.shape.size()) {
        store(data[i], where, i);
      } else {
        read_nested(data[i], depth + 1, where + index_text(i));
      }
    }
  }

  static std::string index_text(size_t i) {
    std::string text = "[";
    text += std::to_string(i);
    text += ']';
    return text;
  }

  // Stores element `i` of the innermost array at `where`; the location text
  // is only built for an error.
  void store(const json& value, const std::string& where, size_t i) {
    if (!value.is_number()) {
      throw error(".data" + where + index_text(i), "must be a number, got " + value.dump());
    }
    const auto f = static_cast<float>(value.get<double>());
    if (!std::isfinite(f)) {
      throw error(".data" + where + index_text(i),
                  "value " + value.dump() + " is not a finite float32");
    }
    out_[written_++] = f;
  }

  void read_b64(const json& tensor) {
    auto dtype = tensor.find("dtype");
    if (dtype == tensor.end() || *dtype != "f32") {
      throw error(".dtype", "must be \"f32\" for b64 data");
    }
    const json& b64 = tensor["b64"];
    if (!b64.is_string()) throw error(".b64", "must be a base64 string");
    std::optional<std::string> bytes = base64_decode(b64.get_ref<const std::string&>());
    if (!bytes) throw error(".b64", "is not valid base64");
    const auto count = static_cast<size_t>(spec_.size());
    if (bytes->size() != count * sizeof(float)) {
      throw error(".b64", "decodes to " + std::to_string(bytes->size()) + " bytes, shape " +
                              shape_text(spec_.shape) + " needs " +
                              std::to_string(count * sizeof(float)));
    }
    static_assert(std::endian::native == std::endian::little,
                  "b64 tensors are little-endian float32; add a byte swap for this platform");
    std::memcpy(out_, bytes->data(), bytes->size());
    for (size_t i = 0; i < count; ++i) {
      if (!std::isfinite(out_[i])) {
        throw error(".b64", "element " + std::to_string(i) + " is not finite (" +
                                std::to_string(out_[i]) + ")");
      }
    }
  }

  const std::string& file_;
  std::string field_;
  const TensorSpec& spec_;
  float* out_;
  size_t written_ = 0;
};

Weights read_tensors(const json& tensors, const Config& config, const std::string& file,
                     int64_t file_bytes) {
  if (!tensors.is_object()) throw model_error(file, "tensors", "must be an object");
  const std::vector<TensorSpec> layout = layout_for(config);
  std::map<std::string, const TensorSpec*> by_name;
  for (const TensorSpec& spec : layout) by_name[spec.name] = &spec;
  for (const auto& [name, value] : tensors.items()) {
    if (by_name.count(name) == 0) {
      throw model_error(file, "tensors." + name,
                        "unknown tensor for this config" + did_you_mean(name, layout));
    }
  }
  std::vector<TensorSpec> present;
  for (const TensorSpec& spec : layout) {
    if (tensors.contains(spec.name)) {
      present.push_back(spec);
    } else if (!spec.optional) {
      throw model_error(file, "tensors." + spec.name,
                        "missing (config needs shape " + shape_text(spec.shape) + ")");
    }
  }
  // Every float takes at least two bytes of JSON ("0,"), so a config that
  // needs more than that is refused before anything is allocated for it.
  int64_t parameters = 0;
  for (const TensorSpec& spec : present) parameters += spec.size();
  if (parameters > file_bytes / 2) {
    throw model_error(file, "config",
                      "needs " + std::to_string(parameters) + " parameters, more than a " +
                          std::to_string(file_bytes) + "-byte file can hold");
  }
  Weights weights(config, present);
  for (size_t i = 0; i < weights.tensors().size(); ++i) {
    const TensorSpec& spec = weights.tensors()[i];
    TensorReader(file, spec, weights.data(i)).read(tensors[spec.name]);
  }
  return weights;
}

int special_id(const Vocabulary& vocab, const std::string& token, const std::string& vocab_file,
               const std::string& weights_file, const std::string& field) {
  const int id = vocab.find(token);
  if (id < 0) {
    throw model_error(vocab_file, "",
                      "has no entry for " + field + " \"" + token + "\" named in " + weights_file);
  }
  return id;
}

}  // namespace

ModelPaths ModelPaths::in_directory(const std::string& dir) {
  const std::filesystem::path base(dir);
  return {(base / "vocab.json").string(), (base / "weights.json").string()};
}

Model load_model(const ModelPaths& paths) {
  int64_t weights_bytes = 0, vocab_bytes = 0;
  const json root = parse_json(read_file(paths.weights, &weights_bytes), paths.weights);
  const std::string& wf = paths.weights;
  if (!root.is_object()) throw model_error(wf, "", "must be a JSON object");
  for (const auto& [key, value] : root.items()) {
    if (key != "format" && key != "version" && key != "config" && key != "tensors") {
      throw model_error(wf, key, "unknown top-level field");
    }
  }
  if (!root.contains("format") || root["format"] != "nextword") {
    throw model_error(wf, "format", "must be \"nextword\"");
  }
  if (!root.contains("version") || root["version"] != 1) {
    throw model_error(wf, "version",
                      "unsupported version " +
                          (root.contains("version") ? root["version"].dump() : "(missing)") +
                          ", this nextword reads version 1");
  }
  if (!root.contains("config")) throw model_error(wf, "config", "missing");
  if (!root.contains("tensors")) throw model_error(wf, "tensors", "missing");
  Config config = parse_config(root["config"], wf);
  Weights weights = read_tensors(root["tensors"], config, wf, weights_bytes);

  const json vocab_json = parse_json(read_file(paths.vocab, &vocab_bytes), paths.vocab);
  Vocabulary vocab = Vocabulary::from_json(vocab_json, paths.vocab);
  if (vocab.size() != config.vocab_size) {
    throw model_error(paths.vocab, "",
                      "has " + std::to_string(vocab.size()) + " words, " + wf +
                          " config.vocab_size is " + std::to_string(config.vocab_size));
  }
  const int unk = special_id(vocab, config.unk_token, paths.vocab, wf, "unk_token");
  const int bos =
      config.has_bos() ? special_id(vocab, config.bos_token, paths.vocab, wf, "bos_token") : -1;
  return Model{
      paths, vocab_bytes, weights_bytes, std::move(config), std::move(vocab), std::move(weights),
      unk,   bos};
}

}  // namespace nextword
