// libFuzzer: memory.bin (model/memory_file.h) from any bytes, two ways.
// Bytes starting with 0: a token stream (the rest, each byte an id mod V,
// the second byte the order) counted by build_memory, whose file must load
// and give distributions that sum to 1 and never give a word p = 0. Any
// other bytes: a memory.bin (its vocab_size and vocab_hash fields set to
// the fuzzer's vocabulary's, so that the mutations reach the trie), which
// loads or is a model error naming the file, and whose queries stay inside
// it and give every word a probability above 0, summing to 1.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "format/file_bytes.h"
#include "memory_input.h"
#include "model/memory_file.h"
#include "train/ngram_memory.h"

namespace {

constexpr int kWords = 12;

const nextword::Vocabulary& vocabulary() {
  static const nextword::Vocabulary vocab(
      std::vector<std::string>{"<unk>", "<bos>", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"});
  return vocab;
}

// Queries every context of up to 4 ids from `ids`: every word's p above 0,
// the words' p summing to 1, for any file that loads.
void query(const nextword::Memory& m, const std::vector<int>& ids, bool written) {
  std::vector<double> p(kWords);
  for (size_t end = 0; end <= ids.size() && end < 24; ++end) {
    const size_t from = end >= 4 ? end - 4 : 0;
    const std::vector<int> context(ids.begin() + static_cast<long>(from),
                                   ids.begin() + static_cast<long>(end));
    const nextword::MemoryContext c = m.find(context);
    m.distribution(c, p);
    double sum = 0;
    for (int w = 0; w < kWords; ++w) {
      const double all = p[static_cast<size_t>(w)], one = m.probability(c, w);
      if (!(all > 0) || !std::isfinite(all) || !(one > 0) || !std::isfinite(one)) {
        __builtin_trap();
      }
      // Agreement needs the successors sorted and each once, as nextword
      // memory writes them (a mangled file may break that).
      if (written && std::abs(one - all) > 1e-9 * (1 + one)) __builtin_trap();
      sum += all;
    }
    if (std::abs(sum - 1) > 1e-9) __builtin_trap();
    const double lambda = m.lambda(c);
    if (!(lambda >= 0 && lambda <= 1)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nextword::Vocabulary& vocab = vocabulary();
  if (size >= 2 && data[0] == 0) {
    const nextword::MemoryFuzzText text = nextword::memory_fuzz_text(data, size, kWords);
    const auto m = nextword::Memory::from_file(
        nextword::FileBytes::from_bytes(
            "built", nextword::memory_bytes(nextword::build_memory(text.ids, vocab, text.options))),
        vocab);
    query(*m, text.ids, true);
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
