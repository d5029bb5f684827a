// The memory (model/memory_file.h, train/ngram_memory.h): modified
// Kneser-Ney worked by hand on a toy text, against a plain implementation
// of the same formulas over maps on random texts, its distributions summing
// to 1, and the file's errors.
#include "train/ngram_memory.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../fuzz/memory_input.h"
#include "base/error.h"
#include "base/half_float.h"
#include "binary_files.h"
#include "format/file_bytes.h"
#include "model/memory_file.h"

using namespace nextword;

namespace {

// x in [0, 1] cut to 8 significant bits, in double (not through a float,
// whose rounding to nearest could carry a share just below 1 up to 1).
uint16_t bf16_toward_zero(double x) {
  if (!(x > 0)) return 0;
  int e = 0;
  std::frexp(x, &e);  // x = f 2^e, f in [0.5, 1)
  return float_to_bf16(static_cast<float>(std::ldexp(std::floor(std::ldexp(x, 8 - e)), e - 8)));
}

Vocabulary vocabulary(int V) {
  std::vector<std::string> words{"<unk>", "<bos>"};
  while (static_cast<int>(words.size()) < V) {
    std::string word = std::to_string(words.size());
    words.push_back(word.insert(0, 1, 'w'));  // not "w" + ...: GCC 12's false -Wrestrict
  }
  return Vocabulary(words);
}

std::shared_ptr<const Memory> load(const MemoryTables& t, const Vocabulary& vocab) {
  return Memory::from_file(FileBytes::from_bytes("memory.bin", memory_bytes(t)), vocab);
}

double p(const Memory& m, std::vector<int> context, int word) {
  return m.probability(m.find(context), word);
}

// The same estimates from the formulas of train/ngram_memory.h, written
// plainly: every count in a map, p(w | h) by the recursion itself.
struct PlainKneserNey {
  int n, V;
  std::vector<uint32_t> cutoffs;                     // index k - 1
  std::map<std::vector<int>, double> raw, adjusted;  // every k-gram, k = 1..n
  std::map<int, std::array<double, 3>> discounts;    // by order

  PlainKneserNey(const std::vector<int>& s, int n_, int V_, std::vector<uint32_t> cuts)
      : n(n_), V(V_), cutoffs(std::move(cuts)) {
    std::map<std::vector<int>, std::map<int, int>> before;  // k-gram -> words seen before it
    for (size_t i = 0; i < s.size(); ++i) {
      for (int k = 1; k <= n && i + static_cast<size_t>(k) <= s.size(); ++k) {
        const std::vector<int> g(s.begin() + static_cast<long>(i),
                                 s.begin() + static_cast<long>(i) + k);
        raw[g] += 1;
        if (i > 0) before[g][s[i - 1]] += 1;
      }
    }
    for (const auto& [g, c] : raw) {
      adjusted[g] = static_cast<int>(g.size()) == n ? c : static_cast<double>(before[g].size());
    }
    for (int k = 1; k <= n; ++k) {
      double counts[5] = {0, 0, 0, 0, 0};
      for (const auto& [g, c] : adjusted) {
        if (static_cast<int>(g.size()) == k && c >= 1 && c <= 4) counts[static_cast<int>(c)] += 1;
      }
      const double Y = counts[1] / (counts[1] + 2 * counts[2]);
      std::array<double, 3> D = {1 - 2 * Y * counts[2] / counts[1],
                                 2 - 3 * Y * counts[3] / counts[2],
                                 3 - 4 * Y * counts[4] / counts[3]};
      for (int i = 0; i < 3; ++i)
        if (!(D[i] > 0 && D[i] <= i + 1.0)) D[i] = (i + 1) / 2.0;
      discounts[k] = D;
    }
  }
  double a(const std::vector<int>& g) const {  // the share of g, 0 when pruned
    const auto k = static_cast<int>(g.size());
    const auto it = adjusted.find(g);
    if (it == adjusted.end()) return 0;
    if (k >= 2 && raw.at(g) < cutoffs[static_cast<size_t>(k - 1)]) return 0;
    double total = 0;
    for (const auto& [h, c] : adjusted) {
      if (static_cast<int>(h.size()) == k && std::equal(g.begin(), g.end() - 1, h.begin()))
        total += c;
    }
    const double c = it->second;
    const double d = c == 0 ? 0 : discounts.at(k)[static_cast<size_t>(std::min(c, 3.0)) - 1];
    const double share = total > 0 ? (c - d) / total : 0;
    // memory.bin keeps the shares of orders >= 2 as bfloat16, rounded toward zero.
    return k == 1 ? share : bf16_to_float(bf16_toward_zero(share));
  }
  double prob(std::vector<int> h, int w) const {
    if (static_cast<int>(h.size()) > n - 1) h.erase(h.begin(), h.end() - (n - 1));
    if (h.empty()) {
      double kept = 0;
      for (int v = 0; v < V; ++v) kept += a({v});
      return a({w}) + (1 - kept) / V;
    }
    const std::vector<int> shorter(h.begin() + 1, h.end());
    if (!raw.count(h)) return prob(shorter, w);  // a context never seen: gamma 1
    double kept = 0;
    for (int v = 0; v < V; ++v) {
      std::vector<int> g = h;
      g.push_back(v);
      kept += a(g);
    }
    std::vector<int> g = h;
    g.push_back(w);
    return a(g) + (1 - kept) * prob(shorter, w);
  }
};

// The memory's p(. | context) against the plain formulas: each word's above
// 0, from probability() as from distribution(), summing to 1.
void check_context(const Memory& m, const PlainKneserNey& plain, const std::vector<int>& context) {
  std::vector<double> dist(static_cast<size_t>(plain.V));
  const MemoryContext c = m.find(context);
  m.distribution(c, dist);
  double sum = 0;
  for (int w = 0; w < plain.V; ++w) {
    INFO("word " << w);
    CHECK(dist[static_cast<size_t>(w)] == Approx(plain.prob(context, w)).epsilon(1e-6));
    CHECK(m.probability(c, w) == Approx(dist[static_cast<size_t>(w)]).epsilon(1e-12));
    CHECK(dist[static_cast<size_t>(w)] > 0);  // no word is impossible
    sum += dist[static_cast<size_t>(w)];
  }
  CHECK(std::abs(sum - 1) < 1e-9);
}

// An input fuzz_memory reads as a text to count (tests/fuzz/memory_input.h):
// its order-5 discount D2 is `tiny`, and every context of up to 4 of its
// ids answers as the plain formulas do.
void check_fuzz_text(const uint8_t* data, size_t size, double tiny) {
  constexpr int V = 12;  // fuzz_memory's vocabulary
  const MemoryFuzzText text = memory_fuzz_text(data, size, V);
  REQUIRE(text.options.order == 5);
  const MemoryTables tables = build_memory(text.ids, vocabulary(V), text.options);
  CHECK(tables.header.discounts[4][1] == tiny);
  const auto m = load(tables, vocabulary(V));
  std::vector<uint32_t> cutoffs(kMemoryMaxOrder, text.options.cutoffs[0]);
  cutoffs[0] = 1;
  const PlainKneserNey plain(text.ids, 5, V, cutoffs);
  for (size_t end = 0; end <= text.ids.size(); ++end) {
    const std::vector<int> context(text.ids.begin() + static_cast<long>(end >= 4 ? end - 4 : 0),
                                   text.ids.begin() + static_cast<long>(end));
    INFO("context ending at " << end);
    check_context(*m, plain, context);
  }
}

}  // namespace

TEST_CASE("Memory: modified Kneser-Ney worked by hand on a toy text", "[memory]") {
  // "<bos> a b a b a c", ids 1 2 3 2 3 2 4 in a vocabulary of 5 (<unk> 0).
  const Vocabulary vocab(std::vector<std::string>{"<unk>", "<bos>", "a", "b", "c"});
  const std::vector<int> text = {1, 2, 3, 2, 3, 2, 4};
  MemoryOptions options;
  options.order = 2;
  const MemoryTables t = build_memory(text, vocab, options);
  // Order 2, the text's counts: <bos> a 1, a b 2, b a 2, a c 1. n1 = 2,
  // n2 = 2, n3 = n4 = 0: Y = 2 / (2 + 4) = 1/3, D1 = 1 - 2 Y n2/n1 = 1/3,
  // D2 = 2 - 3 Y 0/2 = 2, D3+ = 3 - 4 Y 0/0: undefined, 1.5.
  CHECK(t.header.discounts[1][0] == Approx(1.0 / 3));
  CHECK(t.header.discounts[1][1] == Approx(2.0));
  CHECK(t.header.discounts[1][2] == Approx(1.5));
  // Order 1, continuation counts: a follows <bos> and b (2), b follows a
  // (1), c follows a (1); <unk> and <bos> 0. Total 4; n1 = 2, n2 = 1:
  // Y = 2 / 4 = 1/2, D1 = 1 - 2 Y 1/2 = 1/2, D2 = 2.
  CHECK(t.header.discounts[0][0] == Approx(0.5));
  CHECK(t.header.discounts[0][1] == Approx(2.0));
  // a(a) = (2 - 2)/4 = 0, a(b) = a(c) = (1 - 1/2)/4 = 1/8; gamma = 3/4,
  // shared over 5 words: 0.15 each.
  const auto m = load(t, vocab);
  const double u = 0.15;
  CHECK(p(*m, {}, 0) == Approx(u).epsilon(1e-6));
  CHECK(p(*m, {}, 2) == Approx(u).epsilon(1e-6));
  CHECK(p(*m, {}, 3) == Approx(0.125 + u).epsilon(1e-6));
  // Shares of orders >= 2 are stored as bfloat16 (8 significant bits, rounded
  // toward zero): bf().
  auto bf = [](double x) { return static_cast<double>(bf16_to_float(bf16_toward_zero(x))); };
  // After <bos>: a(<bos> a) = (1 - 1/3)/1 = 2/3, gamma 1 - 2/3.
  CHECK(p(*m, {1}, 2) == Approx(bf(2.0 / 3) + (1 - bf(2.0 / 3)) * u).epsilon(1e-6));
  CHECK(p(*m, {1}, 3) == Approx((1 - bf(2.0 / 3)) * (0.125 + u)).epsilon(1e-6));
  // After a: total 3; a(a b) = (2 - 2)/3 = 0, a(a c) = (1 - 1/3)/3 = 2/9, gamma 1 - 2/9.
  CHECK(p(*m, {1, 2}, 3) == Approx((1 - bf(2.0 / 9)) * (0.125 + u)).epsilon(1e-6));
  CHECK(p(*m, {2}, 4) == Approx(bf(2.0 / 9) + (1 - bf(2.0 / 9)) * (0.125 + u)).epsilon(1e-6));
  CHECK(p(*m, {2}, 2) == Approx((1 - bf(2.0 / 9)) * u).epsilon(1e-6));
  // After c (no successor) and after <unk> (never seen): order 1's.
  CHECK(p(*m, {4}, 3) == Approx(0.125 + u).epsilon(1e-6));
  CHECK(p(*m, {0}, 3) == Approx(0.125 + u).epsilon(1e-6));

  // Cutoff 2 at order 2 keeps a b and b a only: <bos> a and a c give their
  // shares back to the shorter context.
  options.cutoffs = {2};
  const MemoryTables pruned = build_memory(text, vocab, options);
  CHECK(pruned.header.entries[1] == 2);
  const auto mp = load(pruned, vocab);
  CHECK(p(*mp, {1}, 2) == Approx(u).epsilon(1.0 / 256));
  CHECK(p(*mp, {2}, 4) == Approx(0.125 + u).epsilon(1.0 / 256));
}

TEST_CASE("Memory: the trie against the formulas written plainly, on random texts", "[memory]") {
  std::mt19937_64 rng(7);
  for (const auto& [order, cutoffs] : std::vector<std::pair<int, std::vector<uint32_t>>>{
           {1, {}}, {2, {}}, {3, {}}, {4, {1, 2, 2}}, {5, {1, 1, 2, 3}}}) {
    const int V = 12;
    const Vocabulary vocab = vocabulary(V);
    // A skewed text, so that counts 1 to 4 all occur.
    std::vector<int> text;
    std::discrete_distribution<int> zipf({0.2, 1, 9, 7, 5, 4, 3, 2, 2, 1, 1, 0.5});
    for (int i = 0; i < 400; ++i) text.push_back(i % 50 == 0 ? 1 : zipf(rng));
    MemoryOptions options;
    options.order = order;
    options.cutoffs = cutoffs;
    const auto m = load(build_memory(text, vocab, options), vocab);
    // Each order's cutoff, index k - 1 (a loop, not a lambda: clang 14 cannot
    // capture the structured binding).
    std::vector<uint32_t> each{1};
    for (int k = 2; k <= kMemoryMaxOrder; ++k) {
      each.push_back(cutoffs.empty() ? 1 : cutoffs[std::min<size_t>(k - 2, cutoffs.size() - 1)]);
    }
    const PlainKneserNey plain(text, order, V, each);
    for (int trial = 0; trial < 30; ++trial) {
      // Contexts from the text (so that long ones are found) and at random.
      std::vector<int> context;
      const auto at = static_cast<size_t>(rng() % (text.size() - 6));
      for (size_t i = 0; i < 5; ++i)
        context.push_back(trial % 3 == 0 ? static_cast<int>(rng() % V) : text[at + i]);
      INFO("order " << order << " trial " << trial);
      check_context(*m, plain, context);
    }
  }
}

TEST_CASE("Memory: fuzz_memory's memory-crash-3a5174c3.bin, minimized: a share just below 1",
          "[memory]") {
  // The text the fuzzer found (libFuzzer -minimize_crash=1 made these 144
  // bytes of its 450): order 5, cutoff 2, and at order 5 a discount D2 of
  // 2.2e-16, so that a context of one successor seen twice has the share
  // (2 - D2) / 2 = 1 - 1.1e-16. Rounded to the nearest float, then toward
  // zero to bfloat16, it was stored as 1: gamma 0, and every other word p = 0.
  const uint8_t input[] = {
      0x00, 0x45, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x01, 0x03, 0x01, 0x06, 0x02, 0x02,
      0x03, 0x04, 0x05, 0xff, 0x02, 0x5b, 0x45, 0x01, 0x02, 0x03, 0x04, 0x05, 0xff, 0x02, 0x5b,
      0x45, 0x01, 0x02, 0x02, 0x02, 0x1c, 0x1c, 0xff, 0xff, 0x00, 0x05, 0x01, 0x00, 0x00, 0x00,
      0x00, 0x02, 0x03, 0x02, 0x03, 0x04, 0x05, 0x03, 0x00, 0x45, 0x01, 0x02, 0x02, 0x02, 0x03,
      0x04, 0x05, 0x05, 0x01, 0x03, 0x01, 0x06, 0x04, 0x00, 0x00, 0x00, 0x0b, 0x01, 0x02, 0x02,
      0x02, 0x1c, 0x1c, 0xff, 0xff, 0x00, 0x05, 0x01, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x02,
      0x03, 0x04, 0x05, 0x03, 0x00, 0x45, 0x01, 0x02, 0xff, 0x00, 0x05, 0x01, 0x00, 0x00, 0x00,
      0x00, 0x02, 0x03, 0x02, 0x03, 0x04, 0x05, 0x03, 0x00, 0x45, 0x01, 0x02, 0x02, 0x02, 0x03,
      0x04, 0x05, 0x05, 0x01, 0x03, 0x01, 0x06, 0x04, 0x00, 0x00, 0x00, 0x02, 0x03, 0x04, 0x05,
      0x05, 0x01, 0x03, 0x01, 0x06, 0x04, 0x00, 0x00, 0x00};
  check_fuzz_text(input, sizeof input, 2.2204460492503131e-16);
}

TEST_CASE("Memory: fuzz_memory's memory-crash-3a5174c3.bin as found", "[memory][shared]") {
  const std::string path = std::string(NEXTWORD_SHARED_DIR) + "/fuzz/memory-crash-3a5174c3.bin";
  const std::string bytes = testing::read_file(path);
  check_fuzz_text(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                  4.4408920985006262e-16);
}

TEST_CASE("Memory: a context whose shares leave nothing is read as one the text never had",
          "[memory]") {
  // No file nextword writes has one (it rounds toward zero); another file's
  // must still give every word p > 0, summing to 1.
  const int V = 12;
  const Vocabulary vocab = vocabulary(V);
  MemoryOptions options;
  options.order = 3;
  const std::vector<int> text = {1, 2, 3, 4, 2, 3, 5, 2, 6, 7, 8, 2, 3, 9};
  const MemoryTables tables = build_memory(text, vocab, options);
  const auto good = load(tables, vocab);
  const MemoryLayout l = memory_layout(tables.header);
  // Context {2} has the successors 3 and 6 at order 2 (entries sorted by parent, then word).
  const MemoryContext before = good->find(std::vector<int>{2});
  REQUIRE(before.node[1] == 2);
  REQUIRE(before.end[1] - before.begin[1] == 2);
  const uint64_t first = before.begin[1];
  auto words = [&](const std::string& bytes, uint64_t i) {
    uint16_t w = 0;
    std::memcpy(&w, bytes.data() + l.words[1] + 2 * i, 2);
    return w;
  };
  auto set_share = [&](std::string& bytes, uint64_t i, float s) {
    const auto b = static_cast<uint16_t>(std::bit_cast<uint32_t>(s) >> 16);
    std::memcpy(bytes.data() + l.shares[1] + 2 * i, &b, 2);
  };
  std::string bytes(good->bytes());
  REQUIRE(words(bytes, first) == 3);
  set_share(bytes, first, 0.75f);
  set_share(bytes, first + 1, 0.5f);  // 1.25 in all
  const auto mangled = Memory::from_file(FileBytes::from_bytes("m.bin", bytes), vocab);
  // After {2}: order 1's p, as after a word never seen; after {1, 2} the
  // order-3 context {1, 2} still counts, then order 1's.
  std::vector<double> dist(V), unigram(V);
  mangled->distribution(mangled->find(std::vector<int>{0}), unigram);
  const MemoryContext c = mangled->find(std::vector<int>{2});
  CHECK(c.node[1] == -1);
  mangled->distribution(c, dist);
  for (int w = 0; w < V; ++w) {
    CHECK(dist[static_cast<size_t>(w)] == unigram[static_cast<size_t>(w)]);
    CHECK(mangled->probability(c, w) == Approx(unigram[static_cast<size_t>(w)]).epsilon(1e-12));
  }
  for (const std::vector<int>& context : {std::vector<int>{1, 2}, std::vector<int>{4, 2}}) {
    MemoryContext walked = mangled->find(context, false);
    double sum = 0;
    std::fill(dist.begin(), dist.end(), 0.0);
    mangled->for_each_share(walked,
                            [&](int w, double weight) { dist[static_cast<size_t>(w)] += weight; });
    const double base = mangled->unigram_weight(walked);
    for (int w = 0; w < V; ++w) {
      const double pw = dist[static_cast<size_t>(w)] +
                        base * static_cast<double>(mangled->unigram()[static_cast<size_t>(w)]);
      CHECK(pw > 0);
      CHECK(pw == Approx(mangled->probability(mangled->find(context), w)).epsilon(1e-12));
      sum += pw;
    }
    CHECK(std::abs(sum - 1) < 1e-12);
  }
  // A successor outside the vocabulary (word 12 of 12) has share 0.
  bytes = std::string(good->bytes());
  const uint16_t outside = V;
  std::memcpy(bytes.data() + l.words[1] + 2 * (first + 1), &outside, 2);
  const auto outside_vocab = Memory::from_file(FileBytes::from_bytes("m.bin", bytes), vocab);
  const MemoryContext o = outside_vocab->find(std::vector<int>{2});
  outside_vocab->distribution(o, dist);
  double sum = 0;
  for (int w = 0; w < V; ++w) {
    CHECK(dist[static_cast<size_t>(w)] > 0);
    sum += dist[static_cast<size_t>(w)];
  }
  CHECK(std::abs(sum - 1) < 1e-12);
  uint16_t kept = 0;  // the share of word 3, the only one left
  std::memcpy(&kept, bytes.data() + l.shares[1] + 2 * first, 2);
  CHECK(o.gamma[1] == 1 - static_cast<double>(bf16_to_float(kept)));
}

TEST_CASE("Memory: the vocabulary's hash, worked by hand", "[memory]") {
  // "<unk>\nhello\n" in two little-endian words, the second zero-padded:
  // 0x65680a3e6b6e753c and 0x000000000a6f6c6c, each XORed into FNV-1a's
  // offset basis and multiplied by its prime, modulo 2^64.
  const uint64_t prime = 1099511628211ull;
  uint64_t h = 14695981039346656037ull;
  h = (h ^ 0x65680a3e6b6e753cull) * prime;
  h = (h ^ 0x000000000a6f6c6cull) * prime;
  CHECK(h == 0xc7a8bbc8ecf18715ull);  // the same, from Python's integers
  CHECK(memory_vocab_hash(Vocabulary(std::vector<std::string>{"<unk>", "hello"})) == h);
  CHECK(memory_vocab_hash(Vocabulary(std::vector<std::string>{"<unk>", "hellp"})) != h);
}

TEST_CASE("Memory: a bad or truncated file is one error naming the field", "[memory]") {
  const Vocabulary vocab = vocabulary(6);
  MemoryOptions options;
  options.order = 3;
  const std::vector<int> text = {1, 2, 3, 2, 3, 4, 5};
  const MemoryTables tables = build_memory(text, vocab, options);
  const std::string good = memory_bytes(tables);
  auto error_of = [&](std::string bytes, const Vocabulary& v) {
    try {
      Memory::from_file(FileBytes::from_bytes("m.bin", std::move(bytes)), v);
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::kModel);
      return e.message();
    }
    return std::string("no error");
  };
  CHECK(error_of(good, vocab) == "no error");
  CHECK(error_of(good.substr(0, good.size() - 4), vocab).find("m.bin: ") == 0);
  CHECK(error_of(good.substr(0, good.size() - 4), vocab).find("truncated") != std::string::npos);
  std::string bad = good;
  bad[7] = 'X';
  CHECK(error_of(bad, vocab).find("m.bin: magic:") == 0);
  CHECK(error_of(good, vocabulary(7)).find("m.bin: vocab_size:") == 0);
  std::vector<std::string> other = {"<unk>", "<bos>", "w2", "w3", "w4", "x"};
  CHECK(error_of(good, Vocabulary(other)).find("m.bin: vocab_hash:") == 0);
  bad = good;
  bad[12] = 9;  // order
  CHECK(error_of(bad, vocab).find("m.bin: order:") == 0);
  bad = good;
  const double lambda = 1.5;
  std::memcpy(bad.data() + kMemoryHeaderBytes + 8, &lambda, 8);
  CHECK(error_of(bad, vocab) == "m.bin: lambdas[1]: is not between 0 and 1");
  bad = good;
  const float nan = std::nanf("");
  std::memcpy(bad.data() + memory_layout(tables.header).unigram + 4, &nan, 4);
  CHECK(error_of(bad, vocab) == "m.bin: unigram[1]: is not a probability above 0");
}

TEST_CASE("Memory: a large context's weights from the per-thread cache are the summed ones",
          "[memory]") {
  // Word 2 is followed by hundreds of others (more than the 256 successors
  // from which find's sums are cached); two memories of the same vocabulary
  // looked up in turn must never see each other's sums.
  const int V = 900;
  const Vocabulary vocab = vocabulary(V);
  std::vector<std::shared_ptr<const Memory>> memories;
  for (const uint64_t seed : {1u, 2u}) {
    std::mt19937_64 rng(seed);
    std::vector<int> text;
    for (int i = 0; i < 40000; ++i) {
      text.push_back(i % 2 == 0 ? 2 : 3 + static_cast<int>(rng() % static_cast<uint64_t>(V - 3)));
    }
    MemoryOptions options;
    options.order = 3;
    memories.push_back(load(build_memory(text, vocab, options), vocab));
  }
  const std::vector<int> context = {5, 2};
  for (int round = 0; round < 3; ++round) {
    for (const auto& m : memories) {
      const MemoryContext cached = m->find(context);
      MemoryContext walked = m->find(context, false);
      m->for_each_share(walked, [](int, double) {});  // the sums walked, no cache
      REQUIRE(cached.end[1] - cached.begin[1] > 256);
      for (int j = 1; j < 3; ++j) {
        CHECK(cached.gamma[static_cast<size_t>(j)] == walked.gamma[static_cast<size_t>(j)]);
        CHECK(cached.most[static_cast<size_t>(j)] == walked.most[static_cast<size_t>(j)]);
      }
      CHECK(cached.scale[0] == walked.scale[0]);
      double sum = 0;
      for (int w = 0; w < V; ++w) sum += m->probability(cached, w);
      CHECK(std::abs(sum - 1) < 1e-9);
    }
  }
  // The two memories' contexts differ, so their weights do too.
  CHECK(memories[0]->find(context).gamma[1] != memories[1]->find(context).gamma[1]);
}
