// ggml's tensor types (the element types of a GGUF file's tensors): each
// type's number as GGUF stores it, its name as llama.cpp prints it, and its
// block: a row is whole blocks of `block` elements, each `bytes` bytes.
#pragma once

#include <cstdint>

namespace nextword {

// ggml's tensor types by number: a block of `block` elements takes `bytes`
// bytes (1 and the element's size for the plain types).
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kBF16 = 30,
};
struct GgmlTypeInfo {
  const char* name = nullptr;  // as llama.cpp prints it ("Q8_0"); null: no such type
  uint32_t block = 0;
  uint32_t bytes = 0;
};
// The type's name and block, or a null name for a number ggml has no type for.
GgmlTypeInfo ggml_type_info(uint32_t type);

}  // namespace nextword
