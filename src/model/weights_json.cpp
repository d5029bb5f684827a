// weights.json: reading without a DOM, writing either tensor encoding.
//
// Reading is two steps over the file's bytes. json_scan validates the whole
// text and returns its skeleton (objects split into members, everything else
// kept as text), then each tensor's numbers or base64 go straight into the
// float32 storage. Pages of the file already read are given back as the
// reader moves on, so memory stays close to the size of the floats. A tensor
// that breaks a rule is reported from where the reader stopped (the field,
// and the element's index), with nlohmann only for small values: the shape,
// a value the message shows, a string spelled with escapes.
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "base/error.h"
#include "format/base64.h"
#include "format/float_text.h"
#include "format/json_scan.h"
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
// its skeleton, each rule stated once: a tensor that breaks one throws the
// message naming its field, in the order a reader of the whole tensor meets
// them (its fields in name order, the shape, then the data).
class TensorReader {
 public:
  TensorReader(const std::string& file, const TensorSpec& spec, float* out,
               const json_scan::Progress& progress)
      : file_(file), field_("tensors." + spec.name), spec_(spec), out_(out), progress_(progress) {}

  void read(const Node& tensor) {
    if (!tensor.is_object()) throw error("", "must be an object with \"shape\" and \"data\"");
    const Node *shape = nullptr, *data = nullptr, *dtype = nullptr, *b64 = nullptr;
    const std::string* unknown = nullptr;
    for (const auto& [key, value] : tensor.members) {  // names are unique (first_duplicate)
      const Node** field = key == "shape"   ? &shape
                           : key == "data"  ? &data
                           : key == "dtype" ? &dtype
                           : key == "b64"   ? &b64
                                            : nullptr;
      if (field != nullptr) *field = &value;
      if (field == nullptr && (unknown == nullptr || key < *unknown)) unknown = &key;
    }
    if (unknown != nullptr) {
      throw error("." + *unknown, "unknown tensor field (expected shape, data or dtype + b64)");
    }
    check_shape(shape);
    if ((data == nullptr) == (b64 == nullptr)) {
      throw error("", "needs exactly one of \"data\" or \"b64\"");
    }
    if (data != nullptr) {
      read_data(*data);
    } else {
      read_b64(dtype, *b64);
    }
  }

 private:
  Error error(const std::string& sub, const std::string& what) const {
    return model_error(file_, field_ + sub, what);
  }

  // A value as nlohmann writes it: 1e39 is "1e+39".
  std::string dump(std::string_view text) const {
    return json_scan::parse_small(text, file_, field_).dump();
  }

  void check_shape(const Node* node) const {
    if (node == nullptr) throw error("", "missing \"shape\"");
    const json dims = small_value(*node, file_, field_ + ".shape");
    std::vector<int64_t> shape;
    bool valid = dims.is_array();
    for (const json& dim : valid ? dims : json::array()) {
      valid = valid && dim.is_number_integer() && dim.get<int64_t>() >= 0;
      if (valid) shape.push_back(dim.get<int64_t>());
    }
    if (!valid) {
      throw error(".shape", "must be an array of non-negative integers, got " + dims.dump());
    }
    if (shape != spec_.shape) {
      throw error("", "shape " + shape_text(shape) + ", config needs " + shape_text(spec_.shape));
    }
  }

  void read_data(const Node& data) const {
    using Why = float_text::Failure::Why;
    const std::optional<float_text::Failure> failure =
        float_text::read_floats(data.text, spec_.shape, out_, progress_);
    if (!failure) return;
    const std::string at = ".data" + failure->where;
    switch (failure->why) {
      case Why::kNotAnArray: throw error(at, "must be an array of numbers");
      case Why::kLength:
        throw error(at, "has " + std::to_string(failure->length) + " numbers, shape " +
                            shape_text(spec_.shape) + " needs " + std::to_string(spec_.size()));
      case Why::kShape:
        throw error(at, "must be an array of " + std::to_string(spec_.shape[failure->depth]) +
                            (failure->depth + 1 == spec_.shape.size() ? " numbers" : " arrays") +
                            " to match shape " + shape_text(spec_.shape));
      case Why::kNotNumber: throw error(at, "must be a number, got " + dump(failure->value));
      case Why::kNotFinite:
        throw error(at, "value " + dump(failure->value) + " is not a finite float32");
    }
  }

  // A string value's characters; an escaped spelling is decoded by nlohmann.
  std::optional<std::string> string_of(const Node& node) const {
    if (std::optional<std::string_view> plain = json_scan::plain_string(node.text)) {
      return std::string(*plain);
    }
    const json value = small_value(node, file_, field_);
    if (!value.is_string()) return std::nullopt;
    return value.get<std::string>();
  }

  void read_b64(const Node* dtype, const Node& b64) const {
    if (dtype == nullptr || string_of(*dtype) != "f32") {
      throw error(".dtype", "must be \"f32\" for b64 data");
    }
    // Base64 is read in place unless escapes spell it.
    std::optional<std::string> decoded;
    std::optional<std::string_view> text = json_scan::plain_string(b64.text);
    if (!text && (decoded = string_of(b64))) text = *decoded;
    if (!text) throw error(".b64", "must be a base64 string");
    const std::optional<size_t> size = base64_decoded_size(*text);
    const auto count = static_cast<size_t>(spec_.size());
    if (size && *size != count * sizeof(float)) {
      throw error(".b64", "decodes to " + std::to_string(*size) + " bytes, shape " +
                              shape_text(spec_.shape) + " needs " +
                              std::to_string(count * sizeof(float)));
    }
    if (!size || !base64_decode_into(*text, reinterpret_cast<char*>(out_))) {
      throw error(".b64", "is not valid base64");
    }
    if (const size_t i = first_non_finite(out_, count); i < count) {
      throw error(".b64", "element " + std::to_string(i) + " is not finite (" +
                              std::to_string(out_[i]) + ")");
    }
  }

  const std::string& file_;
  std::string field_;
  const TensorSpec& spec_;
  float* out_;
  const json_scan::Progress& progress_;
};

// Reads one tensor, or throws its fault. Faults come in the order a DOM
// reader would give them: a tensor too large to show where, then a
// number beyond double's range anywhere in it (nlohmann's message), then the
// first broken rule.
void read_tensor(const Node& tensor, const TensorSpec& spec, float* out,
                 const json_scan::Progress& progress, const std::string& file) {
  try {
    TensorReader(file, spec, out, progress).read(tensor);
  } catch (const Error&) {
    const std::string field = "tensors." + spec.name;
    if (tensor.text.size() > json_scan::kMaxSmallJson) {
      throw model_error(file, field,
                        "is not a valid tensor of shape " + shape_text(spec.shape) +
                            " (a wrong length or nesting, a value that is not a finite float32 "
                            "number, or a bad field; " +
                            std::to_string(tensor.text.size()) +
                            " bytes, too large to show where)");
    }
    json_scan::check_small(tensor.text, file, field);
    throw;
  }
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
  // The tensors are independent: the threads read them side by side. No
  // exception may leave the parallel loop: each tensor's fault is kept, and
  // the first in layout order is thrown.
  const json_scan::Progress release = [&file](const char* p) { file.release_before(p); };
  const auto count = static_cast<int>(weights.tensors().size());
  std::vector<const Node*> nodes;
  std::vector<float*> outputs;
  for (int i = 0; i < count; ++i) {
    nodes.push_back(by_name.at(weights.tensors()[static_cast<size_t>(i)].name));
    outputs.push_back(weights.mutable_data(static_cast<size_t>(i)));
  }
  std::vector<std::optional<Error>> faults(static_cast<size_t>(count));
#pragma omp parallel for schedule(dynamic)
  for (int i = 0; i < count; ++i) {
    const auto t = static_cast<size_t>(i);
    try {
      read_tensor(*nodes[t], weights.tensors()[t], outputs[t], release, path);
    } catch (const Error& e) {
      faults[t] = e;
    }
    release(nodes[t]->text.data() + nodes[t]->text.size());
  }
  for (const std::optional<Error>& fault : faults) {
    if (fault) throw *fault;
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
