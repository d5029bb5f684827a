// How fuzz_memory reads bytes that start with 0 as a text to count: the
// second byte gives the order and the cutoff, each byte after it a token id
// (modulo the vocabulary's size). Shared with the unit test that replays the
// inputs the fuzzer found (tests/unit/ngram_memory_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "train/ngram_memory.h"

namespace nextword {

struct MemoryFuzzText {
  std::vector<int> ids;
  MemoryOptions options;
};

inline MemoryFuzzText memory_fuzz_text(const uint8_t* data, size_t size, int words) {
  MemoryFuzzText t;
  for (size_t i = 2; i < size; ++i) t.ids.push_back(data[i] % words);
  t.options.order = 1 + data[1] % 5;
  t.options.cutoffs = {1u + data[1] / 64u};
  return t;
}

}  // namespace nextword
