// libFuzzer: memory.bin (model/memory_file.h) from any bytes, two ways.
// Bytes starting with 0: a token stream (the rest, each byte an id mod V,
// the second byte the order) counted by build_memory, whose file must load
// and give distributions that sum to 1 and never give a word p = 0. Any
// other bytes: a memory.bin (its vocab_size and vocab_hash fields set to
// the fuzzer's vocabulary's, so that the mutations reach the trie), which
// loads or is a model error naming the file, and whose queries stay inside
// it and give finite probabilities.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "format/file_bytes.h"
#include "model/memory_file.h"
#include "train/ngram_memory.h"

namespace {

constexpr int kWords = 12;

const nextword::Vocabulary& vocabulary() {
  static const nextword::Vocabulary vocab(
      std::vector<std::string>{"<unk>", "<bos>", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"});
  return vocab;
}

// Queries every context of up to 4 ids from `ids`.
void query(const nextword::Memory& m, const std::vector<int>& ids, bool normalized) {
  std::vector<double> p(kWords);
  for (size_t end = 0; end <= ids.size() && end < 24; ++end) {
    const size_t from = end >= 4 ? end - 4 : 0;
    const std::vector<int> context(ids.begin() + static_cast<long>(from),
                                   ids.begin() + static_cast<long>(end));
    const nextword::MemoryContext c = m.find(context);
    m.distribution(c, p);
    double sum = 0;
    for (int w = 0; w < kWords; ++w) {
      const double one = m.probability(c, w);
      if (!(p[static_cast<size_t>(w)] >= 0) || !std::isfinite(p[static_cast<size_t>(w)])) {
        __builtin_trap();
      }
      if (!(one >= 0) || !std::isfinite(one)) __builtin_trap();
      // Agreement needs the successors sorted and each once, as nextword
      // memory writes them (a mangled file may break that).
      if (normalized && std::abs(one - p[static_cast<size_t>(w)]) > 1e-9 * (1 + one)) {
        __builtin_trap();
      }
      if (normalized && !(p[static_cast<size_t>(w)] > 0)) __builtin_trap();
      sum += p[static_cast<size_t>(w)];
    }
    if (normalized && std::abs(sum - 1) > 1e-9) __builtin_trap();
    const double lambda = m.lambda(c);
    if (!(lambda >= 0 && lambda <= 1)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nextword::Vocabulary& vocab = vocabulary();
  if (size >= 2 && data[0] == 0) {
    std::vector<int> ids;
    for (size_t i = 2; i < size; ++i) ids.push_back(data[i] % kWords);
    nextword::MemoryOptions options;
    options.order = 1 + data[1] % 5;
    options.cutoffs = {1u + data[1] / 64u};
    const auto m = nextword::Memory::from_file(
        nextword::FileBytes::from_bytes(
            "built", nextword::memory_bytes(nextword::build_memory(ids, vocab, options))),
        vocab);
    query(*m, ids, true);
    return 0;
  }
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() >= 32) {
    const uint32_t V = kWords;
    const uint64_t hash = nextword::memory_vocab_hash(vocab);
    std::memcpy(bytes.data() + 16, &V, 4);
    std::memcpy(bytes.data() + 24, &hash, 8);
  }
  try {
    const auto m = nextword::Memory::from_file(
        nextword::FileBytes::from_bytes("memory.bin", std::move(bytes)), vocab);
    std::vector<int> ids;
    for (size_t i = 0; i < size && i < 24; ++i) ids.push_back(data[size - 1 - i] % 14 - 1);
    query(*m, ids, false);
  } catch (const nextword::Error& e) {
    if (e.code() != nextword::ExitCode::kModel || e.message().rfind("memory.bin: ", 0) != 0) {
      __builtin_trap();
    }
  }
  return 0;
}
