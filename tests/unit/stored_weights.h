// What the tests of weights read in place share: a kernel family in force
// for a scope, and floats stored as a file's elements (base/weight_elements.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/half_float.h"
#include "base/weight_elements.h"
#include "math/kernel_paths.h"

namespace nextword::testing {

// Restores the family in force when it leaves scope.
struct KernelPathScope {
  KernelPath saved = kernel_path();
  explicit KernelPathScope(KernelPath path) { set_kernel_path(path); }
  ~KernelPathScope() { set_kernel_path(saved); }
  KernelPathScope(const KernelPathScope&) = delete;
  KernelPathScope& operator=(const KernelPathScope&) = delete;
};

// x's rows in `type`, as a file's bytes (2-byte aligned, as the loader
// requires): F32 as they are, BF16 and F16 rounded to nearest, Q8_0 as
// ggml quantizes (d = max|x| / 127, q = round(x / d)).
inline std::vector<uint16_t> stored_as(WeightType type, const std::vector<float>& x) {
  std::vector<uint16_t> out((element_bytes(type, x.size()) + 1) / 2);
  if (type == WeightType::kF32) {
    std::memcpy(out.data(), x.data(), 4 * x.size());
  } else if (type != WeightType::kQ8_0) {
    for (size_t i = 0; i < x.size(); ++i) {
      out[i] = type == WeightType::kBF16 ? float_to_bf16(x[i]) : float_to_f16(x[i]);
    }
  } else {
    auto* blocks = reinterpret_cast<BlockQ8_0*>(out.data());
    for (size_t b = 0; b < x.size() / kQ8Block; ++b) {
      float amax = 0.0f;
      for (int i = 0; i < kQ8Block; ++i) amax = std::max(amax, std::fabs(x[b * kQ8Block + i]));
      const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      blocks[b].d = float_to_f16(d);
      for (int i = 0; i < kQ8Block; ++i) {
        blocks[b].q[i] = static_cast<int8_t>(std::lround(x[b * kQ8Block + i] * id));
      }
    }
  }
  return out;
}

// n values (whole blocks) of ggml's block `type` as random bytes whose F16
// scales (and minimums) are random finite halves, subnormal to the
// largest, of either sign: any such bytes are a valid block.
template <class Rng>
std::vector<uint16_t> random_blocks(WeightType type, size_t n, Rng& rng) {
  const BlockShape shape = block_shape(type);
  const size_t blocks = n / static_cast<size_t>(shape.values);
  std::vector<uint16_t> out((blocks * static_cast<size_t>(shape.bytes) + 1) / 2);
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  for (size_t i = 0; i < blocks * static_cast<size_t>(shape.bytes); ++i) {
    bytes[i] = static_cast<unsigned char>(rng() & 0xFF);
  }
  // The halves each layout holds (base/quant_blocks.h).
  const std::vector<int> halves =
      type == WeightType::kQ6_K ? std::vector<int>{208}
      : type == WeightType::kQ4_0 || type == WeightType::kQ5_0 || type == WeightType::kQ8_0
          ? std::vector<int>{0}
          : std::vector<int>{0, 2};
  for (size_t b = 0; b < blocks; ++b) {
    for (const int at : halves) {
      const auto h = static_cast<uint16_t>(rng() % 0x7c00 | (rng() % 2 == 0 ? 0 : 0x8000));
      std::memcpy(bytes + b * static_cast<size_t>(shape.bytes) + static_cast<size_t>(at), &h,
                  sizeof h);
    }
  }
  return out;
}

}  // namespace nextword::testing
