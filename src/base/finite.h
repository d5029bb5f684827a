// Finding values that are not finite (inf, NaN) in float arrays: every
// reader of weights checks each tensor it reads.
#pragma once

#include <cstddef>

namespace nextword {

// Whether n floats are all finite (no inf, no NaN). It tests the exponent
// bits of every value, with no early exit, so it runs as vector code: the
// readers check every tensor of a file at every start.
bool all_finite(const float* x, size_t n);
// The index of the first of n floats that is not finite, or n: what the
// readers name in their errors.
size_t first_non_finite(const float* x, size_t n);

}  // namespace nextword
