// What the fuzzers that run the model share: every family of product kernels
// this CPU runs (math/kernel_paths.h) takes its turn, picked by the input's
// size, so that the inputs of the seed corpus keep their meaning.
#pragma once

#include <cstddef>
#include <vector>

#include "math/kernel_paths.h"

namespace nextword::fuzz {

inline void use_kernel_family_of(size_t input_size) {
  static const std::vector<KernelPath> paths = available_kernel_paths();
  set_kernel_path(paths[input_size % paths.size()]);
}

}  // namespace nextword::fuzz
