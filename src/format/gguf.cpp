#include "format/gguf.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "format/binary_fields.h"
#include "format/file_bytes.h"

namespace nextword {
namespace {

constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
constexpr size_t kHeaderBytes = 24;  // magic, version, tensor count, key count
constexpr uint32_t kMaxDims = 4;     // ggml's GGML_MAX_DIMS
// The largest file mapped: far above the largest model a CPU runs.
constexpr size_t kMaxGgufBytes = size_t{1} << 40;

// The bytes of one element of a scalar value type (0 for string and array).
size_t scalar_bytes(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool: return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16: return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32: return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64: return 8;
    case GgufValueType::kString:
    case GgufValueType::kArray: return 0;
  }
  return 0;
}

bool known_value_type(uint32_t type) {
  return type <= static_cast<uint32_t>(GgufValueType::kFloat64);
}

bool is_integer_type(GgufValueType t) {
  return t != GgufValueType::kFloat32 && t != GgufValueType::kFloat64 &&
         t != GgufValueType::kBool && scalar_bytes(t) > 0;
}

// A scalar of any number type at `p`, as double (integers of 64 bits past
// 2^53 rounded, which no hyperparameter reaches).
double scalar_number(GgufValueType type, const char* p) {
  switch (type) {
    case GgufValueType::kUint8: return read_field<uint8_t>(p);
    case GgufValueType::kInt8: return read_field<int8_t>(p);
    case GgufValueType::kUint16: return read_field<uint16_t>(p);
    case GgufValueType::kInt16: return read_field<int16_t>(p);
    case GgufValueType::kUint32: return read_field<uint32_t>(p);
    case GgufValueType::kInt32: return read_field<int32_t>(p);
    case GgufValueType::kFloat32: return read_field<float>(p);
    case GgufValueType::kUint64: return static_cast<double>(read_field<uint64_t>(p));
    case GgufValueType::kInt64: return static_cast<double>(read_field<int64_t>(p));
    case GgufValueType::kFloat64: return read_field<double>(p);
    case GgufValueType::kBool: return read_field<uint8_t>(p) != 0 ? 1 : 0;
    case GgufValueType::kString:
    case GgufValueType::kArray: break;
  }
  return std::nan("");
}

// Reads the file front to back, every length checked against what is left.
class Cursor {
 public:
  Cursor(const std::string& path, const char* data, size_t size)
      : path_(path), data_(data), size_(size) {}

  size_t at() const { return at_; }
  const char* here() const { return data_ + at_; }
  // Moves past `n` bytes of `field` (what they are, for the message).
  const char* take(uint64_t n, const std::string& field, const char* what) {
    if (n > size_ - at_) {
      throw model_error(path_, field,
                        std::string(what) + " of " + std::to_string(n) + " bytes at byte " +
                            std::to_string(at_) + " runs past the end of the file (" +
                            std::to_string(size_) + " bytes; truncated?)");
    }
    const char* p = data_ + at_;
    at_ += static_cast<size_t>(n);
    return p;
  }
  template <class T>
  T read(const std::string& field, const char* what) {
    return read_field<T>(take(sizeof(T), field, what));
  }
  std::string_view string(const std::string& field, const char* what) {
    const auto n = read<uint64_t>(field, what);
    return {take(n, field, what), static_cast<size_t>(n)};
  }

 private:
  const std::string& path_;
  const char* data_;
  size_t size_;
  size_t at_ = 0;
};

std::string printable(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, 80)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return name.size() > 80 ? out + "..." : out;
}

}  // namespace

const char* to_string(GgufValueType type) {
  static const char* const names[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                      "int32",  "float32", "bool",   "string", "array",
                                      "uint64", "int64",   "float64"};
  const auto i = static_cast<uint32_t>(type);
  return i < std::size(names) ? names[i] : "unknown";
}

bool GgufFile::is_gguf(std::string_view first) {
  return first.size() >= 4 && std::memcmp(first.data(), kMagic, 4) == 0;
}

std::shared_ptr<const GgufFile> GgufFile::open(const std::string& path) {
  return from_file(FileBytes::open(path, {kMaxGgufBytes, "a GGUF file", nullptr}));
}

std::shared_ptr<const GgufFile> GgufFile::from_file(std::shared_ptr<FileBytes> file) {
  std::shared_ptr<GgufFile> g(new GgufFile());
  g->file_ = std::move(file);
  g->parse();
  return g;
}

const std::string& GgufFile::path() const { return file_->path(); }
size_t GgufFile::file_size() const { return file_->size(); }

void GgufFile::parse() {
  const std::string& path = file_->path();
  const size_t size = file_->size();
  if (!is_gguf(file_->text())) {
    throw model_error(path, "magic", "not a GGUF file (its first 4 bytes are not GGUF)");
  }
  Cursor in(path, file_->data(), size);
  in.take(4, "magic", "the magic");
  version_ = in.read<uint32_t>("version", "the version");
  if (version_ == 1) {
    throw model_error(path, "version",
                      "1, GGUF's first version, which nextword does not read (it reads versions "
                      "2 and 3; llama.cpp's convert scripts write version 3)");
  }
  if (version_ != 2 && version_ != 3) {
    const uint32_t swapped_version = __builtin_bswap32(version_);
    const bool swapped = swapped_version == 2 || swapped_version == 3;
    throw model_error(path, "version",
                      swapped ? "a big-endian GGUF file (nextword reads little-endian ones)"
                              : std::to_string(version_) + " is not 2 or 3");
  }
  const auto tensor_count = in.read<uint64_t>("tensor_count", "the tensor count");
  const auto key_count = in.read<uint64_t>("metadata_kv_count", "the key count");
  // Each key takes at least 12 bytes and each tensor info 28: a count the
  // file cannot hold is refused before anything is reserved for it.
  if (key_count > (size - kHeaderBytes) / 12) {
    throw model_error(path, "metadata_kv_count",
                      std::to_string(key_count) + " keys cannot fit in a file of " +
                          std::to_string(size) + " bytes");
  }
  if (tensor_count > (size - kHeaderBytes) / 28) {
    throw model_error(path, "tensor_count",
                      std::to_string(tensor_count) + " tensors cannot fit in a file of " +
                          std::to_string(size) + " bytes");
  }
  keys_.reserve(static_cast<size_t>(key_count));
  for (uint64_t i = 0; i < key_count; ++i) {
    const std::string index = "metadata[" + std::to_string(i) + "]";
    const std::string_view key = in.string(index, "the key");
    const std::string field = "metadata." + printable(key);
    if (find(key) != nullptr) throw model_error(path, field, "the key is there twice");
    GgufValue v;
    const auto type = in.read<uint32_t>(field, "the value type");
    if (!known_value_type(type)) {
      throw model_error(path, field, "unknown value type " + std::to_string(type));
    }
    v.type = static_cast<GgufValueType>(type);
    v.count = 1;
    if (v.is_array()) {
      const auto element = in.read<uint32_t>(field, "the array's element type");
      if (!known_value_type(element)) {
        throw model_error(path, field, "unknown array element type " + std::to_string(element));
      }
      v.element = static_cast<GgufValueType>(element);
      if (v.element == GgufValueType::kArray) {
        throw model_error(path, field, "an array of arrays (not read)");
      }
      v.count = in.read<uint64_t>(field, "the array's length");
    } else {
      v.element = v.type;
    }
    v.at = in.here();
    const size_t each = scalar_bytes(v.element);
    if (each > 0) {
      if (v.count > (size - in.at()) / each) {
        throw model_error(path, field,
                          std::to_string(v.count) + " values of " + to_string(v.element) +
                              " run past the end of the file (" + std::to_string(size) +
                              " bytes; truncated?)");
      }
      in.take(v.count * each, field, "the value");
    } else {
      if (v.count > (size - in.at()) / 8) {
        throw model_error(path, field,
                          std::to_string(v.count) + " strings run past the end of the file (" +
                              std::to_string(size) + " bytes; truncated?)");
      }
      for (uint64_t s = 0; s < v.count; ++s) {
        in.string(v.is_array() ? field + "[" + std::to_string(s) + "]" : field, "a string");
      }
    }
    keys_.emplace_back(key, v);
  }

  if (const GgufValue* a = find("general.alignment")) {
    if (a->is_array() || !is_integer_type(a->type)) {
      throw model_error(path, "metadata.general.alignment",
                        std::string("is ") + to_string(a->type) + ", not an integer");
    }
    const double value = scalar_number(a->type, a->at);
    if (!(value >= 1 && value <= 65536) || std::popcount(static_cast<uint64_t>(value)) != 1) {
      throw model_error(path, "metadata.general.alignment",
                        "must be a power of 2 up to 65536, got " + value_text(*a));
    }
    alignment_ = static_cast<size_t>(value);
  }

  tensors_.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensor t;
    const std::string index = "tensors[" + std::to_string(i) + "]";
    t.name = in.string(index, "the name");
    const std::string field = "tensors." + printable(t.name);
    if (tensor(t.name) != nullptr) throw model_error(path, field, "the name is there twice");
    const auto n_dims = in.read<uint32_t>(field, "the dimension count");
    if (n_dims < 1 || n_dims > kMaxDims) {
      throw model_error(path, field,
                        std::to_string(n_dims) + " dimensions (GGUF tensors have 1 to 4)");
    }
    t.elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const auto n = in.read<uint64_t>(field, "a dimension");
      if (n == 0 || n > (uint64_t{1} << 40) || t.elements > (uint64_t{1} << 50) / n) {
        throw model_error(
            path, field,
            "dimension " + std::to_string(d) + " of " + std::to_string(n) + " is out of range");
      }
      t.dims.push_back(n);
      t.elements *= n;
    }
    t.type = in.read<uint32_t>(field, "the type");
    const GgmlTypeInfo info = ggml_type_info(t.type);
    if (info.name == nullptr) {
      throw model_error(path, field, "type " + std::to_string(t.type) + " is no ggml type");
    }
    if (t.dims[0] % info.block != 0) {
      throw model_error(path, field,
                        "rows of " + std::to_string(t.dims[0]) + " elements are not whole " +
                            info.name + " blocks of " + std::to_string(info.block));
    }
    t.bytes = t.elements / info.block * info.bytes;
    t.offset = in.read<uint64_t>(field, "the offset");
    if (t.offset % alignment_ != 0) {
      throw model_error(path, field,
                        "offset " + std::to_string(t.offset) + " is not a multiple of the " +
                            std::to_string(alignment_) + "-byte alignment");
    }
    tensors_.push_back(t);
  }

  const size_t data_start = (in.at() + alignment_ - 1) / alignment_ * alignment_;
  const size_t data_bytes = data_start <= size ? size - data_start : 0;
  // Sorted by offset, each tensor must end before the next begins.
  std::vector<const GgufTensor*> by_offset;
  for (GgufTensor& t : tensors_) {
    if (t.offset > data_bytes || t.bytes > data_bytes - t.offset) {
      throw model_error(path, "tensors." + printable(t.name),
                        "its " + std::to_string(t.bytes) + " bytes at offset " +
                            std::to_string(t.offset) + " lie outside the file's " +
                            std::to_string(data_bytes) + " bytes of data (truncated?)");
    }
    t.data = file_->data() + data_start + t.offset;
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensor& a = *by_offset[i - 1];
    const GgufTensor& b = *by_offset[i];
    if (a.offset + a.bytes > b.offset) {
      throw model_error(path, "tensors." + printable(b.name),
                        "its bytes overlap those of " + printable(a.name));
    }
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const auto& [k, v] : keys_) {
    if (k == key) return &v;
  }
  return nullptr;
}

const GgufTensor* GgufFile::tensor(std::string_view name) const {
  for (const GgufTensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

[[noreturn]] void wrong_type(const std::string& path, std::string_view key, const GgufValue& v,
                             const char* wanted) {
  const std::string is = v.is_array() ? std::string("an array of ") + to_string(v.element)
                                      : std::string(to_string(v.type));
  throw model_error(path, "metadata." + std::string(key), "is " + is + ", not " + wanted);
}

}  // namespace

uint64_t GgufFile::integer(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) throw model_error(path(), "metadata." + std::string(key), "missing");
  const double x = v->is_array() || v->type == GgufValueType::kBool ? std::nan("")
                                                                    : scalar_number(v->type, v->at);
  if (!(x >= 0) || x != std::floor(x) || x > 9.0e15) wrong_type(path(), key, *v, "a count");
  if (v->type == GgufValueType::kUint64) return read_field<uint64_t>(v->at);
  return static_cast<uint64_t>(x);
}

uint64_t GgufFile::integer(std::string_view key, uint64_t fallback) const {
  return has(key) ? integer(key) : fallback;
}

double GgufFile::number(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) throw model_error(path(), "metadata." + std::string(key), "missing");
  const double x = v->is_array() || v->type == GgufValueType::kBool ? std::nan("")
                                                                    : scalar_number(v->type, v->at);
  if (!std::isfinite(x)) wrong_type(path(), key, *v, "a finite number");
  return x;
}

double GgufFile::number(std::string_view key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

std::string_view GgufFile::string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) throw model_error(path(), "metadata." + std::string(key), "missing");
  if (v->type != GgufValueType::kString) wrong_type(path(), key, *v, "a string");
  return {v->at + 8, static_cast<size_t>(read_field<uint64_t>(v->at))};
}

std::string_view GgufFile::string(std::string_view key, std::string_view fallback) const {
  return has(key) ? string(key) : fallback;
}

bool GgufFile::boolean(std::string_view key, bool fallback) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return fallback;
  if (v->type != GgufValueType::kBool) wrong_type(path(), key, *v, "a bool");
  return read_field<uint8_t>(v->at) != 0;
}

std::vector<std::string_view> GgufFile::strings(std::string_view key, uint64_t count) const {
  const GgufValue* v = find(key);
  if (v == nullptr) throw model_error(path(), "metadata." + std::string(key), "missing");
  if (!v->is_array() || v->element != GgufValueType::kString) {
    wrong_type(path(), key, *v, "an array of strings");
  }
  if (count != 0 && v->count != count) {
    throw model_error(path(), "metadata." + std::string(key),
                      std::to_string(v->count) + " strings, not " + std::to_string(count));
  }
  std::vector<std::string_view> out;
  out.reserve(static_cast<size_t>(v->count));
  const char* p = v->at;  // every length was checked at load
  for (uint64_t i = 0; i < v->count; ++i) {
    const auto n = static_cast<size_t>(read_field<uint64_t>(p));
    out.emplace_back(p + 8, n);
    p += 8 + n;
  }
  return out;
}

std::vector<double> GgufFile::numbers(std::string_view key, uint64_t count) const {
  const GgufValue* v = find(key);
  if (v == nullptr) throw model_error(path(), "metadata." + std::string(key), "missing");
  if (!v->is_array() || scalar_bytes(v->element) == 0) {
    wrong_type(path(), key, *v, "an array of numbers");
  }
  if (count != 0 && v->count != count) {
    throw model_error(path(), "metadata." + std::string(key),
                      std::to_string(v->count) + " numbers, not " + std::to_string(count));
  }
  std::vector<double> out(static_cast<size_t>(v->count));
  const size_t each = scalar_bytes(v->element);
  for (size_t i = 0; i < out.size(); ++i) out[i] = scalar_number(v->element, v->at + i * each);
  return out;
}

std::string GgufFile::value_text(const GgufValue& v) const {
  if (v.is_array()) {
    std::string text(1, '[');  // not "[" + ...: GCC 12's false -Wrestrict
    text += std::to_string(v.count);
    text += ' ';
    text += to_string(v.element);
    return text + "]";
  }
  if (v.type == GgufValueType::kString) {
    return std::string(v.at + 8, static_cast<size_t>(read_field<uint64_t>(v.at)));
  }
  if (v.type == GgufValueType::kBool) return read_field<uint8_t>(v.at) != 0 ? "true" : "false";
  if (v.type == GgufValueType::kUint64) return std::to_string(read_field<uint64_t>(v.at));
  if (v.type == GgufValueType::kInt64) return std::to_string(read_field<int64_t>(v.at));
  const double x = scalar_number(v.type, v.at);
  if (is_integer_type(v.type)) return std::to_string(static_cast<int64_t>(x));
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

}  // namespace nextword
