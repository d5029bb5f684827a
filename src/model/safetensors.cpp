// weights.safetensors: the standard safetensors layout (an 8-byte
// little-endian header length, a JSON header giving each tensor's dtype,
// shape and data_offsets, then the raw little-endian data), with the format-v1
// config as a JSON string under "__metadata__". F32 data is used where it
// lies in the mapped file. F16 tensors stay in the mapped file too, where
// the products read them (base/weight_view.h), their floats widened at
// first use by anything else; BF16 tensors, and F16 ones under
// HalfWeights::kWiden, are widened once into float32 storage the Weights
// own. Every size is checked against the file first.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "base/error.h"
#include "base/half_float.h"
#include "format/half_rows.h"
#include "format/json_scan.h"
#include "model/weights_file.h"

namespace nextword {
namespace {

using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; add a byte swap for this platform");

// The safetensors reference implementation refuses larger headers too.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct Entry {
  const TensorSpec* spec;
  TensorDtype dtype;
  uint64_t begin, end;  // data_offsets
};

uint64_t element_bytes(TensorDtype dtype) { return dtype == TensorDtype::kF32 ? 4 : 2; }

// The dtype the header names: F32, F16 or BF16, else an error.
TensorDtype read_dtype(const json& tensor, const std::string& file, const std::string& name) {
  auto dtype = tensor.find("dtype");
  for (TensorDtype d : {TensorDtype::kF32, TensorDtype::kF16, TensorDtype::kBF16}) {
    if (dtype != tensor.end() && *dtype == dtype_name(d)) return d;
  }
  throw model_error(file, name + ".dtype",
                    "must be \"F32\", \"F16\" or \"BF16\" (nextword computes in float32), got " +
                        (dtype == tensor.end() ? std::string("nothing") : dtype->dump()));
}

std::string metadata_string(const json& metadata, const std::string& key, const std::string& file) {
  auto it = metadata.find(key);
  if (it == metadata.end()) throw model_error(file, "__metadata__." + key, "missing");
  if (!it->is_string()) throw model_error(file, "__metadata__." + key, "must be a string");
  return it->get<std::string>();
}

Config read_metadata(const json& header, const std::string& file) {
  auto it = header.find("__metadata__");
  if (it == header.end()) {
    throw model_error(file, "__metadata__",
                      "missing (nextword keeps the format-v1 config there; see data/FORMAT.md)");
  }
  if (!it->is_object()) throw model_error(file, "__metadata__", "must be an object of strings");
  if (metadata_string(*it, "format", file) != "nextword") {
    throw model_error(file, "__metadata__.format", "must be \"nextword\"");
  }
  const std::string version = metadata_string(*it, "version", file);
  if (version != "1") {
    throw model_error(file, "__metadata__.version",
                      "unsupported version \"" + version + "\", this nextword reads version 1");
  }
  return parse_config(
      json_scan::parse_small(metadata_string(*it, "config", file), file, "__metadata__.config"),
      file);
}

uint64_t read_offset(const json& value, const std::string& file, const std::string& field) {
  if (!value.is_number_unsigned()) {
    throw model_error(file, field, "must be [begin, end], two non-negative integers");
  }
  return value.get<uint64_t>();
}

Entry read_entry(const json& tensor, const TensorSpec& spec, const std::string& file,
                 uint64_t data_bytes) {
  const std::string& name = spec.name;
  if (!tensor.is_object()) throw model_error(file, name, "must be an object");
  for (const auto& [key, value] : tensor.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      throw model_error(file, name + "." + key,
                        "unknown tensor field (expected dtype, shape, data_offsets)");
    }
  }
  const TensorDtype dtype = read_dtype(tensor, file, name);
  auto shape = tensor.find("shape");
  std::vector<int64_t> dims;
  bool valid = shape != tensor.end() && shape->is_array();
  for (const json& dim : valid ? *shape : json::array()) {
    valid = valid && dim.is_number_unsigned();
    if (valid) dims.push_back(dim.get<int64_t>());
  }
  if (!valid) throw model_error(file, name + ".shape", "must be an array of non-negative integers");
  if (dims != spec.shape) {
    throw model_error(file, name,
                      "shape " + shape_text(dims) + ", config needs " + shape_text(spec.shape));
  }
  auto offsets = tensor.find("data_offsets");
  const std::string field = name + ".data_offsets";
  if (offsets == tensor.end() || !offsets->is_array() || offsets->size() != 2) {
    throw model_error(file, field, "must be [begin, end], two non-negative integers");
  }
  const Entry entry{&spec, dtype, read_offset((*offsets)[0], file, field),
                    read_offset((*offsets)[1], file, field)};
  const auto bytes = static_cast<uint64_t>(spec.size()) * element_bytes(dtype);
  if (entry.begin > entry.end || entry.end > data_bytes) {
    throw model_error(file, field,
                      "[" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
                          "] is not within the " + std::to_string(data_bytes) + " data bytes");
  }
  if (entry.end - entry.begin != bytes) {
    throw model_error(file, field,
                      "holds " + std::to_string(entry.end - entry.begin) + " bytes, shape " +
                          shape_text(spec.shape) + " needs " + std::to_string(bytes));
  }
  return entry;
}

// Whether entry `e`'s rows can wait until used (format/half_rows.h): the
// embedding in halves of a model whose prediction reads only the head's
// rows of it and the context's words, an adaptive softmax with a tied
// classifier.
bool deferrable(const Config& config, const Entry& e) {
  return e.spec->name == "embedding" && e.dtype != TensorDtype::kF32 && config.adaptive() &&
         config.tied_classifier && e.spec->shape.size() == 2;
}

// The first n halves of entry `e` finite, else model_error naming the element.
void check_halves(const std::string& path, const Entry& e, size_t n, const char* data) {
  const size_t j = first_non_finite_half(data + e.begin, e.dtype == TensorDtype::kBF16, n);
  if (j < n) {
    throw model_error(path, e.spec->name, "element " + std::to_string(j) + " is not finite");
  }
}

std::optional<HalfWeights>& half_weights_set() {
  static std::optional<HalfWeights> set;
  return set;
}

}  // namespace

HalfWeights half_weights() {
  const char* chosen = std::getenv("NEXTWORD_HALVES");
  if (chosen != nullptr && std::string_view(chosen) == "widen") return HalfWeights::kWiden;
  if (chosen != nullptr && std::string_view(chosen) == "read") return HalfWeights::kRead;
  return half_weights_set().value_or(HalfWeights::kRead);
}

void set_half_weights(HalfWeights mode) { half_weights_set() = mode; }

void check_safetensors_start(const std::string& path, std::string_view first) {
  if (first.size() < 9) return;  // read_safetensors says what is wrong
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, first.data(), 8);
  if (header_bytes > kMaxHeaderBytes || first[8] != '{') {
    throw model_error(path, "",
                      "not safetensors: the first 8 bytes give a header of " +
                          std::to_string(header_bytes) + " bytes" +
                          (header_bytes > kMaxHeaderBytes ? " (at most 100,000,000)"
                                                          : ", which does not start with {"));
  }
}

WeightsFile read_safetensors(const std::shared_ptr<FileBytes>& file) {
  const std::string& path = file->path();
  const size_t size = file->size();
  if (size < 8) {
    throw model_error(path, "",
                      "too short for safetensors (" + std::to_string(size) +
                          " bytes; the header length alone takes 8)");
  }
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, file->data(), 8);
  if (header_bytes > size - 8 || header_bytes > kMaxHeaderBytes) {
    throw model_error(path, "",
                      "header length " + std::to_string(header_bytes) + " does not fit the file (" +
                          std::to_string(size) + " bytes)");
  }
  const json header = json_scan::parse_small(file->text().substr(8, header_bytes), path, "header");
  if (!header.is_object()) throw model_error(path, "", "header must be a JSON object");
  size_t offset = 0;
  const std::optional<json_scan::Node> skeleton =
      json_scan::scan(file->text().substr(8, header_bytes), &offset);
  if (skeleton) {
    if (std::optional<std::string> key = json_scan::first_duplicate(*skeleton)) {
      throw model_error(path, *key, "appears twice in its object (JSON names must be unique)");
    }
  }
  Config config = read_metadata(header, path);

  std::vector<std::string> names;
  for (const auto& [key, value] : header.items()) {
    if (key != "__metadata__") names.push_back(key);
  }
  std::vector<TensorSpec> present = present_tensors(config, names, path, "");
  const char* data = file->data() + 8 + header_bytes;
  const uint64_t data_bytes = size - 8 - header_bytes;
  std::vector<Entry> entries;
  for (const TensorSpec& spec : present) {
    entries.push_back(read_entry(header[spec.name], spec, path, data_bytes));
  }
  // The tensors tile the data exactly: no overlap, no gap, nothing after.
  std::vector<Entry> by_offset = entries;
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  uint64_t covered = 0;
  for (const Entry& e : by_offset) {
    if (e.begin != covered) {
      throw model_error(
          path, e.spec->name + ".data_offsets",
          e.begin < covered ? "overlaps another tensor" : "leaves a gap before it in the data");
    }
    covered = e.end;
  }
  if (covered != data_bytes) {
    throw model_error(path, "",
                      std::to_string(data_bytes - covered) + " bytes after the last tensor");
  }

  // Tensors whose values are known finite: widened halves (tested as they
  // are widened) and the embedding whose rows are deferred (tested as each is).
  std::vector<bool> finite(entries.size(), false);
  bool mappable = true;  // every tensor F32 and 4-byte aligned
  std::vector<const float*> views;
  for (const Entry& e : entries) {
    const char* at = data + e.begin;
    mappable = mappable && e.dtype == TensorDtype::kF32 &&
               reinterpret_cast<uintptr_t>(at) % alignof(float) == 0;
    views.push_back(reinterpret_cast<const float*>(at));
  }
  WeightsFile result{std::move(config), {}, static_cast<int64_t>(size)};
  if (mappable) {
    result.weights = Weights(result.config, std::move(present), views, file);
  } else {  // halves, or a writer that did not pad the header: float32 storage, filled once
    result.weights = Weights(result.config, std::move(present));
    // Every tensor's storage first: once rows are deferred, asking for
    // writable storage would widen them all.
    std::vector<float*> outs;
    for (size_t i = 0; i < entries.size(); ++i) outs.push_back(result.weights.mutable_data(i));
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      float* out = outs[i];
      const auto n = static_cast<size_t>(e.spec->size());
      const bool bf16 = e.dtype == TensorDtype::kBF16;
      // F16 the products can read in place (2-byte aligned): kept, not widened.
      const auto* halves = reinterpret_cast<const uint16_t*>(data + e.begin);
      const bool keep = half_weights() == HalfWeights::kRead && e.dtype == TensorDtype::kF16 &&
                        reinterpret_cast<uintptr_t>(halves) % alignof(uint16_t) == 0;
      if (deferrable(result.config, e)) {
        // Kept, the head's rows are read by the products and checked here;
        // else widened now, which checks them.
        const int64_t head = result.config.head_words();
        if (keep) check_halves(path, e, static_cast<size_t>(head * e.spec->shape[1]), data);
        result.weights.defer_rows(
            i,
            std::make_unique<HalfRows>(data + e.begin, bf16, e.spec->shape[0], e.spec->shape[1],
                                       out, keep ? 0 : head, file, path, e.spec->name),
            keep ? halves : nullptr);
        finite[i] = true;
      } else if (keep) {
        check_halves(path, e, n, data);
        result.weights.keep_halves(i, halves, file);
        finite[i] = true;
      } else if (e.dtype == TensorDtype::kF32) {
        std::memcpy(out, data + e.begin, e.end - e.begin);
      } else {
        finite[i] = halves_to_floats(data + e.begin, bf16, n, out);
      }
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (finite[i]) continue;
    const float* x = result.weights.data(i);
    const auto n = static_cast<size_t>(entries[i].spec->size());
    if (const size_t j = first_non_finite(x, n); j < n) {
      throw model_error(path, entries[i].spec->name,
                        "element " + std::to_string(j) + " is not finite");
    }
  }
  return result;
}

const char* dtype_name(TensorDtype dtype) {
  switch (dtype) {
    case TensorDtype::kF16: return "F16";
    case TensorDtype::kBF16: return "BF16";
    case TensorDtype::kF32: break;
  }
  return "F32";
}

std::string weights_safetensors(const Config& config, const Weights& weights, TensorDtype dtype) {
  nlohmann::ordered_json header;
  header["__metadata__"] = {
      {"format", "nextword"}, {"version", "1"}, {"config", config_to_json(config).dump()}};
  uint64_t offset = 0;
  for (const TensorSpec& spec : weights.tensors()) {
    const auto bytes = static_cast<uint64_t>(spec.size()) * element_bytes(dtype);
    header[spec.name] = {{"dtype", dtype_name(dtype)},
                         {"shape", spec.shape},
                         {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t length = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  out += text;
  out.reserve(out.size() + offset);
  for (size_t i = 0; i < weights.tensors().size(); ++i) {
    const TensorSpec& spec = weights.tensors()[i];
    const auto n = static_cast<size_t>(spec.size());
    if (dtype == TensorDtype::kF32) {
      out.append(reinterpret_cast<const char*>(weights.data(i)), n * sizeof(float));
      continue;
    }
    const size_t at = out.size();
    out.resize(at + 2 * n);
    const size_t beyond = dtype == TensorDtype::kF16
                              ? floats_to_f16(weights.data(i), n, out.data() + at)
                              : floats_to_bf16(weights.data(i), n, out.data() + at);
    if (beyond < n) {
      std::array<char, 32> value{};
      const float x = weights.data(i)[beyond];
      char* end = std::to_chars(value.data(), value.data() + value.size(), x).ptr;
      throw Error(ExitCode::kUsage,
                  spec.name + ": element " + std::to_string(beyond) + " is " +
                      std::string(value.data(), end) + ", beyond " + dtype_name(dtype) +
                      "'s range (largest " +
                      (dtype == TensorDtype::kF16 ? "65504" : "3.3895314e+38") + "); --dtype " +
                      (dtype == TensorDtype::kF16 ? "bf16 or f32" : "f32") + " holds it");
    }
  }
  return out;
}

}  // namespace nextword
