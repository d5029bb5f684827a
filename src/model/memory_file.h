// A model's memory: a count-based n-gram model of its whole training text
// (interpolated modified Kneser-Ney, Chen & Goodman 1998), stored as a trie
// of token ids in `memory.bin` beside vocab.json and mapped, never parsed,
// at load (data/FORMAT.md, "The memory"). predict/memory_mixture.h mixes it
// with the transformer; train/ngram_memory.h counts a text and writes it.
//
// The file keeps, for each n-gram the trie holds, only its discounted share
//   a(h w) = (c'(h w) - D(c'(h w))) / sum_v c'(h v)
// and each context's weight for the shorter contexts is what its kept
// successors leave: gamma(h) = 1 - sum_w a(h w). So the probabilities
//   p(w | h) = a(h w) + gamma(h) p(w | h'),   h' = h without its first word
// sum to 1 over the vocabulary as stored, whatever was pruned (an n-gram
// left out gives its share to gamma), and the reader computes gamma from the
// same floats it adds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/half_float.h"
#include "model/vocabulary.h"

namespace nextword {

class FileBytes;

constexpr int kMemoryMaxOrder = 8;
constexpr int kMemoryBands = 16;  // bands of a context's successor count (mixture weights)

// The header (FORMAT.md gives every field's offset). All numbers little-endian.
struct MemoryHeader {
  int order = 0;            // n: contexts of up to n - 1 tokens
  int vocab_size = 0;       // V, the model's
  int word_bytes = 0;       // 2 when V <= 65536, else 4
  uint64_t vocab_hash = 0;  // memory_vocab_hash of the model's vocabulary
  uint64_t tokens = 0;      // the training tokens counted
  // Entries of each order (order 1: V); index k - 1.
  std::array<uint64_t, kMemoryMaxOrder> entries{};
  // The smallest count an n-gram of each order needed to be kept.
  std::array<uint32_t, kMemoryMaxOrder> cutoffs{};
  // Modified Kneser-Ney's discounts D1, D2, D3+ of each order.
  std::array<std::array<double, 3>, kMemoryMaxOrder> discounts{};
  // The mixture's weight lambda of each bucket: bucket (m, b) at m *
  // kMemoryBands + b, m the longest context found (0 .. n - 1), b its band.
  std::vector<double> lambdas;
};

// Where each array starts, in bytes from the file's start, and the size of
// the whole file: everything follows from the header.
struct MemoryLayout {
  size_t lambdas = 0;
  size_t unigram = 0;  // float32 [V]: the order-1 distribution (before normalization)
  // Order k (index k - 1): words [entries] (order >= 2), shares bfloat16
  // [entries] (order >= 2), children uint32 [entries + 1] (order < n).
  std::array<size_t, kMemoryMaxOrder> words{}, shares{}, children{};
  size_t size = 0;
};

constexpr size_t kMemoryHeaderBytes = 384;
MemoryLayout memory_layout(const MemoryHeader& header);

// FNV-1a (64 bits) over the vocabulary's words, each followed by '\n', in id
// order: a memory counted with another vocabulary is refused.
uint64_t memory_vocab_hash(const Vocabulary& vocab);

// The header's bytes, for the writer (train/ngram_memory.h).
std::string memory_header_bytes(const MemoryHeader& header);

class Memory;
// The bytes of `memory`'s file with other mixture weights (one a bucket).
std::string memory_with_lambdas(const Memory& memory, const std::vector<double>& lambdas);

// What a context matched: for each length j = 1 .. n - 1 of its last tokens,
// the trie node of that suffix (at order j), or -1 when the text never had it.
struct MemoryContext {
  int longest = 0;  // the longest j with a node (0: none, or no context)
  std::array<int64_t, kMemoryMaxOrder> node{};
  // For each j with a node: its successors' range at order j + 1, and the
  // weight gamma its successors leave to the shorter contexts.
  std::array<uint64_t, kMemoryMaxOrder> begin{}, end{};
  std::array<double, kMemoryMaxOrder> gamma{};
  // G_j = product of gamma_i over i > j (G_0: over every i), what a share
  // found under context j is multiplied by.
  std::array<double, kMemoryMaxOrder> scale{};
  int bucket = 0;  // the mixture weight's bucket
};

class Memory {
 public:
  // Maps `path`, checking the header against the model's vocabulary and the
  // file's size against the header. Throws model_error("FILE", "FIELD", ...).
  static std::shared_ptr<const Memory> open(const std::string& path, const Vocabulary& vocab);
  // The same on bytes already read (tests, fuzzers).
  static std::shared_ptr<const Memory> from_file(std::shared_ptr<FileBytes> file,
                                                 const Vocabulary& vocab);

  const MemoryHeader& header() const { return header_; }
  int order() const { return header_.order; }
  const std::string& path() const;
  size_t file_bytes() const;
  std::string_view bytes() const { return {bytes_, layout_.size}; }

  // The nodes of the last n - 1 tokens of `context` (all of it when shorter).
  MemoryContext find(std::span<const int> context) const;
  // p(w | context) for one word.
  double probability(const MemoryContext& context, int word) const;
  // p(. | context) for every word: out[V], which sums to 1.
  void distribution(const MemoryContext& context, std::span<double> out) const;
  // distribution() in two parts, for a caller that adds them in its own
  // precision: p(w | context) = unigram_weight x unigram()[w] + the sum of
  // weight over each (word, weight) that for_each_share gives for w.
  std::span<const float> unigram() const {
    return {reinterpret_cast<const float*>(bytes_ + layout_.unigram),
            static_cast<size_t>(header_.vocab_size)};
  }
  double unigram_weight(const MemoryContext& context) const {
    return context.scale[0] / unigram_total_;
  }
  template <class Add>  // add(int word, double weight)
  void for_each_share(const MemoryContext& context, Add add) const {
    for (int j = 1; j < header_.order; ++j) {
      const auto J = static_cast<size_t>(j);
      if (context.node[J] < 0) continue;
      for (uint64_t i = context.begin[J]; i < context.end[J]; ++i) {
        const int w = word_at(j + 1, i);
        if (w < header_.vocab_size) add(w, context.scale[J] * share_at(j + 1, i));
      }
    }
  }
  // The mixture's weight for a context.
  double lambda(const MemoryContext& context) const {
    return header_.lambdas[static_cast<size_t>(context.bucket)];
  }

 private:
  Memory() = default;
  // Successor w of the node's range at order k + 1 (index, or -1).
  int64_t child(int k, uint64_t begin, uint64_t end, int word) const;
  // Order k's word i, and its share (0 for a float that is no probability).
  int word_at(int k, uint64_t i) const {
    const char* words = bytes_ + layout_.words[static_cast<size_t>(k - 1)];
    if (header_.word_bytes == 2) return reinterpret_cast<const uint16_t*>(words)[i];
    return static_cast<int>(reinterpret_cast<const uint32_t*>(words)[i]);
  }
  double share_at(int k, uint64_t i) const {
    const uint16_t bits =
        reinterpret_cast<const uint16_t*>(bytes_ + layout_.shares[static_cast<size_t>(k - 1)])[i];
    const float s = bf16_to_float(bits);
    return s > 0 && s <= 1 ? static_cast<double>(s) : 0.0;
  }
  void children_of(int k, int64_t node, uint64_t& begin, uint64_t& end) const;

  std::shared_ptr<FileBytes> file_;
  std::string copy_;  // the bytes, when the file's were not 8-byte aligned
  const char* bytes_ = nullptr;
  MemoryHeader header_;
  MemoryLayout layout_;
  double unigram_total_ = 0;  // sum of the stored order-1 floats
};

}  // namespace nextword
