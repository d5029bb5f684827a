// The floats of a model's tensors as bits, for tests that compare weights
// exactly (-0 and 0 differ, NaN equals itself).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "model/weights.h"

namespace nextword::testing {

// One float's bits.
inline uint32_t bits_of(float x) { return std::bit_cast<uint32_t>(x); }

// The floats of every tensor, bit for bit.
inline std::vector<uint32_t> bits(const Weights& w) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    for (int64_t j = 0; j < w.tensors()[i].size(); ++j) {
      uint32_t b = 0;
      std::memcpy(&b, w.data(i) + j, 4);
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace nextword::testing
