// A GGUF file (llama.cpp's container, versions 2 and 3, little-endian): its
// metadata and where each tensor's bytes lie, read from the mapped file and
// checked once, never copied. What the keys and tensors mean (an
// architecture's hyperparameters, a tokenizer) is for model/ and text/.
//
// The layout (data/FORMAT.md, "GGUF files"): "GGUF", uint32 version, uint64
// tensor count, uint64 key count; each key a string (uint64 length, bytes)
// with a uint32 value type and its value; each tensor's name, uint32
// dimension count, uint64 dimensions (the first the row, contiguous), uint32
// ggml type and uint64 offset into the data, which starts at the next
// multiple of general.alignment (default 32) after the tensor infos.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/ggml_types.h"

namespace nextword {

class FileBytes;

enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
const char* to_string(GgufValueType type);

// One metadata value: a scalar, a string, or an array of either (arrays of
// arrays are refused at load), pointing into the file.
struct GgufValue {
  GgufValueType type = GgufValueType::kUint8;
  GgufValueType element = GgufValueType::kUint8;  // an array's
  uint64_t count = 0;                             // an array's elements
  const char* at = nullptr;  // the scalar, the string's length, or the array's first element

  bool is_array() const { return type == GgufValueType::kArray; }
};

struct GgufTensor {
  std::string_view name;
  std::vector<uint64_t> dims;  // ggml's ne: dims[0] elements a row, rows = the product of the rest
  uint32_t type = 0;           // GgmlType
  uint64_t offset = 0;         // from the start of the data
  uint64_t elements = 0;
  uint64_t bytes = 0;
  const char* data = nullptr;  // inside the mapped file

  uint64_t row_length() const { return dims[0]; }
  uint64_t rows() const { return elements / dims[0]; }
};

class GgufFile {
 public:
  // Maps `path` and checks it whole: the header, every key and value,
  // every tensor's shape, type, alignment and bytes inside the file and
  // apart from the others. Throws model_error("FILE", "FIELD", ...) (exit 3).
  static std::shared_ptr<const GgufFile> open(const std::string& path);
  static std::shared_ptr<const GgufFile> from_file(std::shared_ptr<FileBytes> file);
  // Whether `first` (a file's first bytes) start a GGUF file.
  static bool is_gguf(std::string_view first);

  const std::string& path() const;
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  size_t file_size() const;
  const std::shared_ptr<FileBytes>& bytes() const { return file_; }

  // The keys in file order.
  const std::vector<std::pair<std::string_view, GgufValue>>& metadata() const { return keys_; }
  // The value of `key`, or null.
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // Typed reads: each throws model_error(FILE, KEY, ...) when the key is
  // missing (naming it) or holds another type.
  // An integer of any width, or a float that is a whole number (some
  // converters write counts as float32); refused when negative.
  uint64_t integer(std::string_view key) const;
  uint64_t integer(std::string_view key, uint64_t fallback) const;
  // A float or an integer.
  double number(std::string_view key) const;
  double number(std::string_view key, double fallback) const;
  std::string_view string(std::string_view key) const;
  std::string_view string(std::string_view key, std::string_view fallback) const;
  bool boolean(std::string_view key, bool fallback) const;
  // An array of strings (each a view into the file), or of numbers, with
  // `count` checked when it is not 0.
  std::vector<std::string_view> strings(std::string_view key, uint64_t count = 0) const;
  std::vector<double> numbers(std::string_view key, uint64_t count = 0) const;
  // A value as text ("llama", "2048", "[32000 strings]"), for `info`.
  std::string value_text(const GgufValue& value) const;

  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* tensor(std::string_view name) const;

 private:
  GgufFile() = default;
  void parse();

  std::shared_ptr<FileBytes> file_;
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  std::vector<std::pair<std::string_view, GgufValue>> keys_;
  std::vector<GgufTensor> tensors_;
};

}  // namespace nextword
