// weights.json: reading without a DOM, writing either tensor encoding.
//
// Reading is two steps over the file's bytes. json_scan validates the whole
// text and returns its skeleton (objects split into members, everything else
// kept as text), then each tensor's numbers or base64 go straight into the
// float32 storage. Pages of the file already read are given back as the
// reader moves on, so memory stays close to the size of the floats. Any
// tensor the fast path does not take (an error, or a legal but unusual
// spelling such as escapes in base64) is read again with nlohmann's DOM,
// which names the field at fault.
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "base/error.h"
#include "model/base64.h"
#include "model/json_scan.h"
#include "model/weights_file.h"

namespace nextword {
namespace {

using json_scan::Node;
using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "weights are little-endian float32; add a byte swap for this platform");

// The message for text that is not JSON: nlohmann's, which names the byte
// and what it expected, when it agrees; else the scanner's offset.
Error syntax_error(std::string_view text, const std::string& file, size_t offset) {
  try {
    (void)json_scan::parse_small(text, file, "");
  } catch (const Error& e) {
    return e;
  }
  return model_error(file, "", "not valid JSON (byte " + std::to_string(offset + 1) + ")");
}

// A small value, from its (already validated) text. nlohmann refuses numbers
// beyond double's range, which are valid JSON syntax; that is the only way
// this can fail.
json small_value(const Node& node, const std::string& file, const std::string& field) {
  return json_scan::parse_small(node.text, file, field);
}

// Reads one {"shape", "data"} or {"shape", "dtype": "f32", "b64"} tensor from
// its DOM, with a message naming the field for everything that is wrong.
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
    std::string text = "[";  // not "[" + ...: GCC 12 warns (-Wrestrict) wrongly
    text += std::to_string(i);
    text += ']';
    return text;
  }

  // Stores element `i` of the innermost array at `where`.
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
    const std::string& text = b64.get_ref<const std::string&>();
    const std::optional<size_t> size = base64_decoded_size(text);
    const auto count = static_cast<size_t>(spec_.size());
    if (size && *size != count * sizeof(float)) {
      throw error(".b64", "decodes to " + std::to_string(*size) + " bytes, shape " +
                              shape_text(spec_.shape) + " needs " +
                              std::to_string(count * sizeof(float)));
    }
    if (!size || !base64_decode_into(text, reinterpret_cast<char*>(out_))) {
      throw error(".b64", "is not valid base64");
    }
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

bool all_finite(const float* x, size_t n) {
  bool finite = true;
  for (size_t i = 0; i < n; ++i) finite &= std::isfinite(x[i]);
  return finite;
}

// The fast path for a well-formed tensor; false sends it to TensorReader.
bool read_tensor_fast(const Node& tensor, const TensorSpec& spec, float* out,
                      const json_scan::Progress& progress, const std::string& file) {
  if (!tensor.is_object()) return false;
  const Node *shape = nullptr, *data = nullptr, *dtype = nullptr, *b64 = nullptr;
  for (const auto& [key, value] : tensor.members) {
    const Node** field = key == "shape"   ? &shape
                         : key == "data"  ? &data
                         : key == "dtype" ? &dtype
                         : key == "b64"   ? &b64
                                          : nullptr;
    if (field == nullptr || *field != nullptr) return false;
    *field = &value;
  }
  if (shape == nullptr || (data == nullptr) == (b64 == nullptr)) return false;
  json dims;
  try {  // no exception may leave the parallel loop; the DOM reader reports it
    dims = small_value(*shape, file, "tensors." + spec.name + ".shape");
  } catch (const Error&) {
    return false;
  }
  if (!dims.is_array() || dims.size() != spec.shape.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dims[i].is_number_integer() || dims[i].get<int64_t>() != spec.shape[i]) return false;
  }
  if (data != nullptr) return json_scan::read_floats(data->text, spec.shape, out, progress);
  if (dtype == nullptr || dtype->text != "\"f32\"") return false;
  const std::optional<std::string_view> chars = json_scan::plain_string(b64->text);
  const auto count = static_cast<size_t>(spec.size());
  if (!chars || base64_decoded_size(*chars) != count * sizeof(float)) return false;
  return base64_decode_into(*chars, reinterpret_cast<char*>(out)) && all_finite(out, count);
}

Weights read_tensors(const Node& tensors, const Config& config, const FileBytes& file) {
  const std::string& path = file.path();
  if (!tensors.is_object()) throw model_error(path, "tensors", "must be an object");
  // Names are unique (first_duplicate ran on the whole file): one lookup
  // table instead of a search per tensor, which a model of a thousand layers
  // would pay quadratically.
  std::unordered_map<std::string_view, const Node*> by_name;
  std::vector<std::string> names;
  for (const auto& member : tensors.members) {
    names.push_back(member.first);
    by_name.emplace(member.first, &member.second);
  }
  std::vector<TensorSpec> present = present_tensors(config, names, path, "tensors.");
  // Every float takes at least two bytes of JSON ("0,"), so a config that
  // needs more than that is refused before anything is allocated for it.
  int64_t parameters = 0;
  for (const TensorSpec& spec : present) parameters += spec.size();
  const auto bytes = static_cast<int64_t>(file.size());
  if (parameters > bytes / 2) {
    throw model_error(path, "config",
                      "needs " + std::to_string(parameters) + " parameters, more than a " +
                          std::to_string(bytes) + "-byte file can hold");
  }
  Weights weights(config, std::move(present));
  // The tensors are independent: the threads read them side by side. A
  // tensor the fast path does not take is read again, in layout order, by the
  // DOM reader, which throws the message naming its field.
  const json_scan::Progress release = [&file](const char* p) { file.release_before(p); };
  const auto count = static_cast<int>(weights.tensors().size());
  std::vector<const Node*> nodes;
  std::vector<float*> outputs;
  for (int i = 0; i < count; ++i) {
    nodes.push_back(by_name.at(weights.tensors()[static_cast<size_t>(i)].name));
    outputs.push_back(weights.mutable_data(static_cast<size_t>(i)));
  }
  std::vector<char> fast(static_cast<size_t>(count), 0);
#pragma omp parallel for schedule(dynamic)
  for (int i = 0; i < count; ++i) {
    const auto t = static_cast<size_t>(i);
    fast[t] = read_tensor_fast(*nodes[t], weights.tensors()[t], outputs[t], release, path);
    release(nodes[t]->text.data() + nodes[t]->text.size());
  }
  for (size_t t = 0; t < fast.size(); ++t) {
    if (!fast[t]) {
      const TensorSpec& spec = weights.tensors()[t];
      const std::string field = "tensors." + spec.name;
      if (nodes[t]->text.size() > json_scan::kMaxSmallJson) {
        // Too large for the DOM that would pinpoint the fault.
        throw model_error(path, field,
                          "is not a valid tensor of shape " + shape_text(spec.shape) +
                              " (a wrong length or nesting, a value that is not a finite float32 "
                              "number, or a bad field; " +
                              std::to_string(nodes[t]->text.size()) +
                              " bytes, too large to show where)");
      }
      TensorReader(path, spec, outputs[t]).read(small_value(*nodes[t], path, field));
    }
  }
  return weights;
}

void append_float(std::string& out, float value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest round trip
  out.append(buffer, result.ptr);
}

}  // namespace

WeightsFile read_weights_json(const FileBytes& file) {
  const std::string& wf = file.path();
  const std::string_view text = file.text();
  if (text.empty()) throw model_error(wf, "", "the file is empty");
  size_t error_offset = 0;
  const std::optional<Node> root =
      json_scan::scan(text, &error_offset, [&file](const char* p) { file.release_before(p); });
  if (!root) throw syntax_error(text, wf, error_offset);
  if (!root->is_object()) throw model_error(wf, "", "must be a JSON object");
  if (std::optional<std::string> key = json_scan::first_duplicate(*root)) {
    throw model_error(wf, *key, "appears twice in its object (JSON names must be unique)");
  }
  for (const auto& [key, value] : root->members) {
    if (key != "format" && key != "version" && key != "config" && key != "tensors") {
      throw model_error(wf, key, "unknown top-level field");
    }
  }
  const Node* format = root->find("format");
  if (format == nullptr || small_value(*format, wf, "format") != "nextword") {
    throw model_error(wf, "format", "must be \"nextword\"");
  }
  const Node* version = root->find("version");
  if (version == nullptr || small_value(*version, wf, "version") != 1) {
    throw model_error(
        wf, "version",
        "unsupported version " +
            (version != nullptr ? small_value(*version, wf, "version").dump() : "(missing)") +
            ", this nextword reads version 1");
  }
  const Node* config = root->find("config");
  if (config == nullptr) throw model_error(wf, "config", "missing");
  const Node* tensors = root->find("tensors");
  if (tensors == nullptr) throw model_error(wf, "tensors", "missing");
  WeightsFile result{
      parse_config(small_value(*config, wf, "config"), wf), {}, static_cast<int64_t>(file.size())};
  result.weights = read_tensors(*tensors, result.config, file);
  return result;
}

std::string weights_json(const Config& config, const Weights& weights, bool base64) {
  std::string out = R"({"format":"nextword","version":1,"config":)";
  out += config_to_json(config).dump();
  out += R"(,"tensors":{)";
  for (size_t i = 0; i < weights.tensors().size(); ++i) {
    const TensorSpec& spec = weights.tensors()[i];
    const auto count = static_cast<size_t>(spec.size());
    if (i > 0) out += ',';
    out += json(spec.name).dump();
    out += R"(:{"shape":)";
    out += json(spec.shape).dump();
    if (base64) {
      out += R"(,"dtype":"f32","b64":")";
      out += base64_encode({reinterpret_cast<const char*>(weights.data(i)), count * sizeof(float)});
      out += "\"}";
    } else {
      out += R"(,"data":[)";
      for (size_t j = 0; j < count; ++j) {
        if (j > 0) out += ',';
        append_float(out, weights.data(i)[j]);
      }
      out += "]}";
    }
  }
  out += "}}\n";
  return out;
}

}  // namespace nextword
