// Counting a training text into a memory (model/memory_file.h): every n-gram
// of its token stream up to order n, interpolated modified Kneser-Ney
// estimates (Chen & Goodman 1998) from those counts, then pruning by count,
// then the trie that memory.bin stores. `nextword memory` runs it.
//
// The counts: order n takes each n-gram's count in the stream; a lower order
// k takes its continuation count, the number of distinct words seen before
// the k-gram (Kneser-Ney's N1+(. x)). Each order's discounts D1, D2 and D3+
// come from the count-of-counts n1 .. n4 of those counts:
//   Y = n1 / (n1 + 2 n2),  D1 = 1 - 2Y n2/n1,  D2 = 2 - 3Y n3/n2,  D3+ = 3 - 4Y n4/n3
// (a D that comes out undefined, not positive or above its count c is 0.5,
// 1 or 1.5, so that every context leaves something to the words it never
// saw). An n-gram h w of order k >= 2 gets the share
//   a(h w) = (c(h w) - D(c(h w))) / sum_v c(h v),
// and a word w at order 1 gets p1(w) = a(w) + gamma / V, gamma = 1 - sum a:
// the interpolation with the uniform distribution. Pruning keeps an n-gram
// of order k >= 2 whose count in the stream reaches cutoffs[k]; since a
// prefix is at least as frequent as its n-gram and cutoffs may only grow
// with the order, every kept n-gram's context is kept.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "model/memory_file.h"
#include "model/vocabulary.h"

namespace nextword {

struct MemoryOptions {
  int order = 4;
  // cutoffs[k - 1]: the smallest count kept at order k (k >= 2; order 1 keeps
  // every word). Missing entries repeat the last one; 1 keeps everything.
  std::vector<uint32_t> cutoffs;
  double lambda = 0.5;  // every bucket's mixture weight, until fitted
};

// The trie, as memory.bin stores it.
struct MemoryTables {
  MemoryHeader header;
  std::vector<float> unigram;  // [V]
  // Index k - 1 for order k: words and shares (k >= 2), children (k < n).
  std::array<std::vector<uint32_t>, kMemoryMaxOrder> words, children;
  std::array<std::vector<float>, kMemoryMaxOrder> shares;
  // Distinct n-grams of each order before pruning (reported, not stored),
  // and of those, how many a cutoff of 1, 2, ... 8 would keep: at_least[k - 1][c - 1].
  std::array<uint64_t, kMemoryMaxOrder> distinct{};
  std::array<std::array<uint64_t, 8>, kMemoryMaxOrder> at_least{};
};

// Counts `stream` (token ids below vocab.size()) and estimates the tables.
// `progress(what)` hears of each phase. Throws std::invalid_argument for an
// order outside 1..8, cutoffs that fall with the order or are 0, or an id
// outside the vocabulary.
MemoryTables build_memory(std::span<const int> stream, const Vocabulary& vocab,
                          const MemoryOptions& options,
                          const std::function<void(const std::string&)>& progress = {});

// memory.bin's bytes (FORMAT.md, "The memory").
std::string memory_bytes(const MemoryTables& tables);

}  // namespace nextword
