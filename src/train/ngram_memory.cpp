#include "train/ngram_memory.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "base/half_float.h"

namespace nextword {
namespace {

// The n-grams of one order as found in the sorted stream, before pruning.
struct OrderNodes {
  std::vector<uint32_t> parent;    // node of the (k-1)-prefix at order k - 1
  std::vector<uint32_t> word;      // the last word
  std::vector<uint32_t> count;     // occurrences in the stream
  std::vector<uint32_t> first;     // a position where it starts
  std::vector<uint32_t> adjusted;  // Kneser-Ney's count (see the header)
  std::vector<double> share;
};

// Every position of the stream, sorted by the n tokens from it (a token past
// the end reads as V, after every word): a least-significant-digit radix
// sort, one stable counting pass per token.
std::vector<uint32_t> sorted_positions(std::span<const int> stream, int n, int V) {
  const size_t N = stream.size();
  std::vector<uint32_t> order(N), next(N);
  for (size_t i = 0; i < N; ++i) order[i] = static_cast<uint32_t>(i);
  std::vector<size_t> starts(static_cast<size_t>(V) + 2);
  for (int d = n - 1; d >= 0; --d) {
    auto key = [&](uint32_t p) {
      const size_t at = p + static_cast<size_t>(d);
      return at < N ? static_cast<size_t>(stream[at]) : static_cast<size_t>(V);
    };
    std::fill(starts.begin(), starts.end(), 0);
    for (const uint32_t p : order) ++starts[key(p) + 1];
    for (size_t b = 1; b < starts.size(); ++b) starts[b] += starts[b - 1];
    for (const uint32_t p : order) next[starts[key(p)]++] = p;
    order.swap(next);
  }
  return order;
}

// Modified Kneser-Ney's discounts from the counts of one order.
std::array<double, 3> discounts_of(const std::vector<uint32_t>& counts) {
  std::array<double, 5> n{};
  for (const uint32_t c : counts) {
    if (c >= 1 && c <= 4) ++n[c];
  }
  const double Y = n[1] / (n[1] + 2 * n[2]);
  std::array<double, 3> D = {1 - 2 * Y * n[2] / n[1], 2 - 3 * Y * n[3] / n[2],
                             3 - 4 * Y * n[4] / n[3]};
  // A discount that is undefined, not positive or above its count (a small
  // or odd text) is KenLM's fallback: 0.5, 1, 1.5. It must stay positive,
  // or a context would leave nothing to the words it never saw.
  for (size_t i = 0; i < 3; ++i) {
    const double count = static_cast<double>(i + 1);
    if (!(D[i] > 0 && D[i] <= count)) D[i] = count / 2;
  }
  return D;
}

double discount(const std::array<double, 3>& D, uint32_t count) {
  return count == 0 ? 0 : D[std::min<size_t>(count, 3) - 1];
}

// The largest float not above x >= 0. A share is stored rounded toward zero
// (memory_bytes keeps a float's upper half); rounded to the nearest float
// first, a share just below 1 (a context of one successor under a tiny
// discount) would become 1 and leave the context's other words nothing.
float float_toward_zero(double x) {
  const auto f = static_cast<float>(x);
  return static_cast<double>(f) > x ? std::nextafter(f, 0.0f) : f;
}

}  // namespace

MemoryTables build_memory(std::span<const int> stream, const Vocabulary& vocab,
                          const MemoryOptions& options,
                          const std::function<void(const std::string&)>& progress) {
  const int n = options.order, V = vocab.size();
  if (n < 1 || n > kMemoryMaxOrder) throw std::invalid_argument("order outside 1..8");
  if (stream.size() >= UINT32_MAX) throw std::invalid_argument("more than 2^32 - 1 tokens");
  std::array<uint32_t, kMemoryMaxOrder> cutoffs{};
  for (size_t k = 1; k < kMemoryMaxOrder; ++k) {
    const uint32_t c = options.cutoffs.empty()          ? 1
                       : k - 1 < options.cutoffs.size() ? options.cutoffs[k - 1]
                                                        : options.cutoffs.back();
    if (c < 1) throw std::invalid_argument("a cutoff below 1");
    if (k >= 2 && c < cutoffs[k - 1]) throw std::invalid_argument("cutoffs fall with the order");
    cutoffs[k] = c;
  }
  cutoffs[0] = 1;
  for (const int id : stream) {
    if (id < 0 || id >= V) throw std::invalid_argument("a token id outside the vocabulary");
  }
  auto say = [&](const std::string& what) {
    if (progress) progress(what);
  };
  const size_t N = stream.size();
  say("sorting " + std::to_string(N) + " positions");
  const std::vector<uint32_t> sorted = sorted_positions(stream, n, V);

  // Orders 2..n from one pass over the sorted positions: a new node of
  // order k wherever the first k tokens differ from the position before.
  // node_at[k][p]: the node of the k-gram at position p (orders 2..n-1,
  // for the continuation counts).
  say("counting");
  std::vector<OrderNodes> nodes(static_cast<size_t>(n) + 1);
  std::vector<std::vector<uint32_t>> node_at(static_cast<size_t>(n));
  for (int k = 2; k < n; ++k) node_at[static_cast<size_t>(k)].assign(N, UINT32_MAX);
  std::vector<uint32_t> unigram_count(static_cast<size_t>(V));
  std::array<uint32_t, kMemoryMaxOrder + 1> current{};
  uint32_t previous = 0;
  for (size_t r = 0; r < N; ++r) {
    const uint32_t p = sorted[r];
    ++unigram_count[static_cast<size_t>(stream[p])];
    current[1] = static_cast<uint32_t>(stream[p]);
    int same = 0;  // tokens shared with the position before (never past the end)
    if (r > 0) {
      while (same < n && p + static_cast<size_t>(same) < N &&
             previous + static_cast<size_t>(same) < N &&
             stream[p + static_cast<size_t>(same)] == stream[previous + static_cast<size_t>(same)])
        ++same;
    }
    for (int k = 2; k <= n && p + static_cast<size_t>(k) <= N; ++k) {
      OrderNodes& o = nodes[static_cast<size_t>(k)];
      if (k > same) {
        current[static_cast<size_t>(k)] = static_cast<uint32_t>(o.word.size());
        o.parent.push_back(current[static_cast<size_t>(k) - 1]);
        o.word.push_back(static_cast<uint32_t>(stream[p + static_cast<size_t>(k) - 1]));
        o.count.push_back(0);
        o.first.push_back(p);
      }
      ++o.count[current[static_cast<size_t>(k)]];
      if (k < n) node_at[static_cast<size_t>(k)][p] = current[static_cast<size_t>(k)];
    }
    previous = p;
  }

  // Kneser-Ney's counts: continuation counts below order n.
  say("estimating");
  std::vector<uint32_t> unigram_adjusted = unigram_count;
  if (n >= 2) {
    std::fill(unigram_adjusted.begin(), unigram_adjusted.end(), 0);
    for (const uint32_t p : nodes[2].first) ++unigram_adjusted[static_cast<size_t>(stream[p + 1])];
  }
  for (int k = 2; k <= n; ++k) {
    OrderNodes& o = nodes[static_cast<size_t>(k)];
    if (k == n) {
      o.adjusted = o.count;
      continue;
    }
    o.adjusted.assign(o.word.size(), 0);
    for (const uint32_t p : nodes[static_cast<size_t>(k) + 1].first) {
      ++o.adjusted[node_at[static_cast<size_t>(k)][p + 1]];
    }
    std::vector<uint32_t>().swap(node_at[static_cast<size_t>(k)]);
  }

  MemoryTables t;
  MemoryHeader& h = t.header;
  h.order = n;
  h.vocab_size = V;
  h.word_bytes = V <= 65536 ? 2 : 4;
  h.vocab_hash = memory_vocab_hash(vocab);
  h.tokens = N;
  h.cutoffs = cutoffs;
  h.lambdas.assign(static_cast<size_t>(n) * kMemoryBands, options.lambda);

  // Order 1: shares of the continuation counts, interpolated with uniform.
  {
    const auto D = h.discounts[0] = discounts_of(unigram_adjusted);
    double total = 0, kept = 0;
    for (const uint32_t c : unigram_adjusted) total += c;
    t.unigram.resize(static_cast<size_t>(V));
    std::vector<double> a(static_cast<size_t>(V));
    for (size_t w = 0; w < a.size(); ++w) {
      const uint32_t c = unigram_adjusted[w];
      a[w] = total > 0 ? (c - discount(D, c)) / total : 0;
      kept += a[w];
    }
    for (size_t w = 0; w < a.size(); ++w) {
      t.unigram[w] = static_cast<float>(a[w] + (1 - kept) / V);
    }
    t.distinct[0] = static_cast<uint64_t>(std::count_if(unigram_count.begin(), unigram_count.end(),
                                                        [](uint32_t c) { return c > 0; }));
  }
  // Orders 2..n: each node's share of its parent's summed counts.
  for (int k = 2; k <= n; ++k) {
    OrderNodes& o = nodes[static_cast<size_t>(k)];
    const auto D = h.discounts[static_cast<size_t>(k) - 1] = discounts_of(o.adjusted);
    const size_t parents =
        k == 2 ? static_cast<size_t>(V) : nodes[static_cast<size_t>(k) - 1].word.size();
    std::vector<double> total(parents);
    for (size_t i = 0; i < o.word.size(); ++i) total[o.parent[i]] += o.adjusted[i];
    o.share.resize(o.word.size());
    for (size_t i = 0; i < o.word.size(); ++i) {
      const double sum = total[o.parent[i]];
      o.share[i] = sum > 0 ? (o.adjusted[i] - discount(D, o.adjusted[i])) / sum : 0;
    }
    t.distinct[static_cast<size_t>(k) - 1] = o.word.size();
    std::array<uint64_t, 8>& at_least = t.at_least[static_cast<size_t>(k) - 1];
    for (const uint32_t c : o.count) {
      for (uint32_t cut = 1; cut <= std::min<uint32_t>(c, 8); ++cut) ++at_least[cut - 1];
    }
  }

  // Pruning, then the trie: kept nodes renumbered in order, each parent's
  // children counted into offsets.
  say("pruning");
  std::vector<uint32_t> renumber_parent;  // old index at order k - 1 -> new
  for (int k = 2; k <= n; ++k) {
    const auto K = static_cast<size_t>(k) - 1;
    OrderNodes& o = nodes[static_cast<size_t>(k)];
    const size_t parents = k == 2 ? static_cast<size_t>(V) : t.words[K - 1].size();
    std::vector<uint32_t> renumber(o.word.size(), UINT32_MAX);
    std::vector<uint32_t>& children = t.children[K - 1];
    children.assign(parents + 1, 0);
    for (size_t i = 0; i < o.word.size(); ++i) {
      if (o.count[i] < cutoffs[K]) continue;
      const uint32_t parent = k == 2 ? o.parent[i] : renumber_parent[o.parent[i]];
      renumber[i] = static_cast<uint32_t>(t.words[K].size());
      t.words[K].push_back(o.word[i]);
      t.shares[K].push_back(float_toward_zero(o.share[i]));
      ++children[parent + 1];
    }
    for (size_t i = 1; i < children.size(); ++i) children[i] += children[i - 1];
    renumber_parent.swap(renumber);
    o = OrderNodes();  // its memory back
  }
  h.entries[0] = static_cast<uint64_t>(V);
  for (int k = 2; k <= n; ++k)
    h.entries[static_cast<size_t>(k) - 1] = t.words[static_cast<size_t>(k) - 1].size();
  return t;
}

std::string memory_bytes(const MemoryTables& t) {
  const MemoryHeader& h = t.header;
  const MemoryLayout l = memory_layout(h);
  std::string bytes = memory_header_bytes(h);
  bytes.resize(l.size, '\0');
  auto put = [&bytes](size_t at, const void* data, size_t size) {
    if (size > 0) std::memcpy(bytes.data() + at, data, size);
  };
  put(l.unigram, t.unigram.data(), t.unigram.size() * sizeof(float));
  for (size_t K = 0; K < static_cast<size_t>(h.order); ++K) {
    if (K >= 1) {
      const std::vector<uint32_t>& words = t.words[K];
      if (h.word_bytes == 2) {
        std::vector<uint16_t> narrow(words.begin(), words.end());
        put(l.words[K], narrow.data(), narrow.size() * 2);
      } else {
        put(l.words[K], words.data(), words.size() * 4);
      }
      // Rounded toward zero, so that a context's stored shares never sum
      // to more than its true ones: gamma stays at least its true value,
      // above 0, and no word gets p = 0.
      std::vector<uint16_t> shares(t.shares[K].size());
      for (size_t i = 0; i < shares.size(); ++i) {
        shares[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(t.shares[K][i]) >> 16);
      }
      put(l.shares[K], shares.data(), shares.size() * 2);
    }
    if (K + 1 < static_cast<size_t>(h.order)) {
      put(l.children[K], t.children[K].data(), t.children[K].size() * sizeof(uint32_t));
    }
  }
  return bytes;
}

}  // namespace nextword
