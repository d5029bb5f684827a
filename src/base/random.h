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
enum class RandomStream : uint64_t { kInit = 1, kWindows = 2, kDropout = 3, kShuffle = 4 };

// 64 random bits for element (a, b) of `stream` under `seed`.
inline uint64_t random_bits(uint64_t seed, RandomStream stream, uint64_t a, uint64_t b) {
  return splitmix64(splitmix64(splitmix64(seed ^ (static_cast<uint64_t>(stream) << 56)) ^ a) ^ b);
}

// The place of i in a random order of 0..n-1 (i < n): a bijection of
// [0, n) chosen by `key`, so any place of a shuffle can be computed on its
// own. A 4-round Feistel network on the smallest even number of bits that
// holds n, walked again while the result falls outside [0, n) (fewer than 4
// times on average, as n fills more than a quarter of that range).
inline uint64_t permuted(uint64_t i, uint64_t n, uint64_t key) {
  int bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n) bits += 2;
  const int half = bits / 2;
  const uint64_t mask = (uint64_t{1} << half) - 1;
  uint64_t x = i;
  do {
    uint64_t left = x >> half, right = x & mask;
    for (uint64_t round = 0; round < 4; ++round) {
      const uint64_t next = left ^ (splitmix64(key ^ (round << 56) ^ right) & mask);
      left = right;
      right = next;
    }
    x = (left << half) | right;
  } while (x >= n);
  return x;
}

// A uniform number in [0, 1) from 64 random bits (their top 53).
inline double uniform01(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

}  // namespace nextword
