// The project's one random generator: splitmix64, counter-based, so that any
// number can be computed on its own, by any thread, in any order. A run that
// names its seed gets the same numbers on every machine and at every thread
// count (initial weights, training batches, dropout masks, sampled words).
#pragma once

#include <cstdint>

namespace nextword {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// What random numbers are for, so that two purposes never share a stream.
enum class RandomStream : uint64_t { kInit = 1, kWindows = 2, kDropout = 3 };

// 64 random bits for element (a, b) of `stream` under `seed`.
inline uint64_t random_bits(uint64_t seed, RandomStream stream, uint64_t a, uint64_t b) {
  return splitmix64(splitmix64(splitmix64(seed ^ (static_cast<uint64_t>(stream) << 56)) ^ a) ^ b);
}

// A uniform number in [0, 1) from 64 random bits (their top 53).
inline double uniform01(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

}  // namespace nextword
