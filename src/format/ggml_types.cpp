#include "format/ggml_types.h"

#include <iterator>

namespace nextword {

GgmlTypeInfo ggml_type_info(uint32_t type) {
  // ggml's types at the llama.cpp of the files we test against (ggml.c's
  // type_traits): name, elements a block, bytes a block.
  static const GgmlTypeInfo infos[] = {
      {"F32", 1, 4},        {"F16", 1, 2},       {"Q4_0", 32, 18},     {"Q4_1", 32, 20},
      {nullptr, 0, 0},      {nullptr, 0, 0},     {"Q5_0", 32, 22},     {"Q5_1", 32, 24},
      {"Q8_0", 32, 34},     {"Q8_1", 32, 36},    {"Q2_K", 256, 84},    {"Q3_K", 256, 110},
      {"Q4_K", 256, 144},   {"Q5_K", 256, 176},  {"Q6_K", 256, 210},   {"Q8_K", 256, 292},
      {"IQ2_XXS", 256, 66}, {"IQ2_XS", 256, 74}, {"IQ3_XXS", 256, 98}, {"IQ1_S", 256, 50},
      {"IQ4_NL", 32, 18},   {"IQ3_S", 256, 110}, {"IQ2_S", 256, 82},   {"IQ4_XS", 256, 136},
      {"I8", 1, 1},         {"I16", 1, 2},       {"I32", 1, 4},        {"I64", 1, 8},
      {"F64", 1, 8},        {"IQ1_M", 256, 56},  {"BF16", 1, 2},       {nullptr, 0, 0},
      {nullptr, 0, 0},      {nullptr, 0, 0},     {"TQ1_0", 256, 54},   {"TQ2_0", 256, 66},
  };
  return type < std::size(infos) ? infos[type] : GgmlTypeInfo{};
}

}  // namespace nextword
