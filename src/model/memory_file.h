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

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/half_float.h"
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
// order, taken eight bytes at a time (little-endian, the last zero-padded):
// a memory counted with another vocabulary is refused.
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
  // The largest share among them (a bound for a caller that skips them).
  std::array<double, kMemoryMaxOrder> most{};
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

  // The nodes of the last n - 1 tokens of `context` (all of it when shorter),
  // and with `weigh` their gammas and scales (else for_each_share sets them:
  // the weights of every order come from one walk over their successors).
  MemoryContext find(std::span<const int> context, bool weigh = true) const;
  // p(w | context) for one word (a context found with its weights).
  double probability(const MemoryContext& context, int word) const;
  // p(. | context) for every word: out[V], which sums to 1.
  void distribution(MemoryContext context, std::span<double> out) const;
  // distribution() in two parts, for a caller that adds them in its own
  // precision: p(w | context) = unigram_weight x unigram()[w] + the sum of
  // weight over each (word, weight) that for_each_share gives for w.
  std::span<const float> unigram() const {
    return {reinterpret_cast<const float*>(bytes_ + layout_.unigram),
            static_cast<size_t>(header_.vocab_size)};
  }
  // The kTopUnigrams words of highest unigram(), best first (ties: lower
  // id first), for a caller that bounds the words it leaves unscored.
  static constexpr int kTopUnigrams = 16;
  std::span<const int> top_unigrams() const;
  double unigram_weight(const MemoryContext& context) const {
    return context.scale[0] / unigram_total_;
  }
  // Gives each stored share with the weight it has in p(w | context), the
  // longest context first: its shares are summed as they are given, and
  // the gamma they leave scales the shorter contexts' (context's gammas and
  // scales are set on the way, so unigram_weight holds after it). `add`
  // must accumulate: a context found to leave nothing (see weigh_orders) is
  // taken back by giving its shares again with their weights negated.
  template <class Add>  // add(int word, double weight)
  void for_each_share(MemoryContext& context, Add add) const {
    weigh_orders(context, [&](int j, double scale, double& most) {
      const auto J = static_cast<size_t>(j);
      const double kept = walk_shares(
          j + 1, context.begin[J], context.end[J], [&](int w, double s) { add(w, scale * s); },
          most);
      if (!(kept < 1)) {
        double unused = 0;
        walk_shares(
            j + 1, context.begin[J], context.end[J], [&](int w, double s) { add(w, -scale * s); },
            unused);
      }
      return kept;
    });
  }
  // The successors stored under the context's node of length j, as
  // visit(word, share): the shares as stored, not yet weighted.
  template <class Visit>
  void for_each_stored(const MemoryContext& context, int j, Visit visit) const {
    const auto J = static_cast<size_t>(j);
    if (j < 1 || j >= header_.order || context.node[J] < 0) return;
    for (uint64_t i = context.begin[J]; i < context.end[J]; ++i) {
      const int w = word_at(j + 1, i);
      if (w < header_.vocab_size) visit(w, share_at(j + 1, i));
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
  // The gammas and scales of a found context, the longest context first:
  // sum(j, scale, most) gives the shares stored under context j (their
  // largest in most) and the gamma they leave scales the shorter ones. A
  // context whose shares sum to 1 or more would leave the words it never saw
  // p = 0; no file nextword writes has one (it rounds shares toward zero),
  // and one in another file is read as a context the text never had, so
  // that every word keeps p > 0 and the words' p still sum to 1.
  template <class Sum>
  void weigh_orders(MemoryContext& context, Sum sum) const {
    double scale = 1;
    for (int j = header_.order - 1; j >= 1; --j) {
      const auto J = static_cast<size_t>(j);
      context.scale[J] = scale;
      if (context.node[J] < 0) continue;
      const double kept = sum(j, scale, context.most[J]);
      if (!(kept < 1)) {
        context.node[J] = -1;
        context.begin[J] = context.end[J] = 0;
        continue;
      }
      context.gamma[J] = 1 - kept;
      scale *= context.gamma[J];
    }
    context.scale[0] = scale;
  }
  // find's weights, each large context's sum from a small cache per thread
  // (a frequent context is looked up again and again; summing its tens of
  // thousands of successors each time would make a lookup far slower than
  // KenLM's).
  void weigh(MemoryContext& context) const;
  // Visits order k's entries [begin, end) of words in the vocabulary as
  // visit(word, share) and returns the sum of their shares (in eight running
  // sums added in a fixed order), their largest in `most`; a word outside the
  // vocabulary (in no file nextword writes) has share 0, so that the words'
  // p sum to 1. With nothing to visit, a loop that vectorizes: a frequent
  // word's successors are tens of thousands.
  template <class Visit>
  double walk_shares(int k, uint64_t begin, uint64_t end, Visit visit, double& most) const {
    constexpr int kLanes = 8;
    double lane[kLanes] = {}, top[kLanes] = {};
    auto share = [&](uint64_t at, int& w) {
      w = word_at(k, at);
      return w < header_.vocab_size ? share_at(k, at) : 0.0;
    };
    uint64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        int w = 0;
        const double s = share(i + static_cast<uint64_t>(l), w);
        lane[l] += s;
        top[l] = s > top[l] ? s : top[l];
        if (s > 0) visit(w, s);
      }
    }
    double total = 0;
    most = 0;
    for (; i < end; ++i) {
      int w = 0;
      const double s = share(i, w);
      total += s;
      most = s > most ? s : most;
      if (s > 0) visit(w, s);
    }
    for (int l = 0; l < kLanes; ++l) {
      total += lane[l];
      most = top[l] > most ? top[l] : most;
    }
    return total;
  }

  mutable std::once_flag top_unigrams_once_;
  mutable std::vector<int> top_unigrams_;
  std::shared_ptr<FileBytes> file_;
  std::string copy_;  // the bytes, when the file's were not 8-byte aligned
  const char* bytes_ = nullptr;
  MemoryHeader header_;
  MemoryLayout layout_;
  double unigram_total_ = 0;  // sum of the stored order-1 floats
  uint64_t serial_ = 0;       // tells this memory's cache entries (weigh) from another's
};

}  // namespace nextword
