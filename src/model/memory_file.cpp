#include "model/memory_file.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "format/binary_fields.h"
#include "format/file_bytes.h"

namespace nextword {
namespace {

constexpr char kMagic[8] = {'N', 'W', 'M', 'E', 'M', 'O', 'R', 'Y'};
constexpr uint32_t kVersion = 1;
// Offsets of the header's fields (FORMAT.md, "The memory").
constexpr size_t kVersionAt = 8, kOrderAt = 12, kVocabAt = 16, kWordBytesAt = 20, kHashAt = 24,
                 kTokensAt = 32, kBandsAt = 40, kEntriesAt = 48, kCutoffsAt = 112,
                 kDiscountsAt = 144;
// The largest file read: far above the 40 MB a shipped memory may take.
constexpr size_t kMaxMemoryBytes = size_t{16} << 30;

template <typename T>
T read_at(const char* bytes, size_t at) {
  return read_field<T>(bytes + at);
}

template <typename T>
void write_at(std::string& bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

size_t aligned(size_t at) { return (at + 7) / 8 * 8; }

}  // namespace

MemoryLayout memory_layout(const MemoryHeader& h) {
  MemoryLayout l;
  const auto n = static_cast<size_t>(h.order);
  size_t at = kMemoryHeaderBytes;
  l.lambdas = at;
  at += n * kMemoryBands * sizeof(double);
  l.unigram = at;
  at = aligned(at + static_cast<size_t>(h.vocab_size) * sizeof(float));
  for (size_t k = 1; k <= n; ++k) {
    const size_t entries = h.entries[k - 1];
    if (k >= 2) {
      l.words[k - 1] = at;
      at = aligned(at + entries * static_cast<size_t>(h.word_bytes));
      l.shares[k - 1] = at;
      at = aligned(at + entries * sizeof(uint16_t));
    }
    if (k < n) {
      l.children[k - 1] = at;
      at = aligned(at + (entries + 1) * sizeof(uint32_t));
    }
  }
  l.size = at;
  return l;
}

uint64_t memory_vocab_hash(const Vocabulary& vocab) {
  // The words and their newlines as one text, hashed eight bytes a step (a
  // multiply a byte is slow enough to show at every start) through a buffer
  // of at most 64 KiB (the whole text, grown, would add page faults to every
  // phrase).
  uint64_t hash = 14695981039346656037ull;
  std::string text;
  const auto hash_whole_steps = [&] {
    const size_t whole = text.size() / 8 * 8;
    for (size_t at = 0; at < whole; at += 8) {
      uint64_t word = 0;
      std::memcpy(&word, text.data() + at, 8);  // little-endian, as the machines we build for
      hash = (hash ^ word) * 1099511628211ull;
    }
    text.erase(0, whole);
  };
  text.reserve(size_t{1} << 16);
  for (int id = 0; id < vocab.size(); ++id) {
    text += vocab.word(id);
    text += '\n';
    if (text.size() >= (size_t{1} << 16) - 1024) hash_whole_steps();
  }
  text.resize((text.size() + 7) / 8 * 8, '\0');
  hash_whole_steps();
  return hash;
}

std::string memory_header_bytes(const MemoryHeader& h) {
  std::string bytes(kMemoryHeaderBytes, '\0');
  std::memcpy(bytes.data(), kMagic, sizeof kMagic);
  write_at<uint32_t>(bytes, kVersionAt, kVersion);
  write_at<uint32_t>(bytes, kOrderAt, static_cast<uint32_t>(h.order));
  write_at<uint32_t>(bytes, kVocabAt, static_cast<uint32_t>(h.vocab_size));
  write_at<uint32_t>(bytes, kWordBytesAt, static_cast<uint32_t>(h.word_bytes));
  write_at<uint64_t>(bytes, kHashAt, h.vocab_hash);
  write_at<uint64_t>(bytes, kTokensAt, h.tokens);
  write_at<uint32_t>(bytes, kBandsAt, kMemoryBands);
  for (size_t k = 0; k < kMemoryMaxOrder; ++k) {
    write_at<uint64_t>(bytes, kEntriesAt + 8 * k, h.entries[k]);
    write_at<uint32_t>(bytes, kCutoffsAt + 4 * k, h.cutoffs[k]);
    for (size_t i = 0; i < 3; ++i) {
      write_at<double>(bytes, kDiscountsAt + 8 * (3 * k + i), h.discounts[k][i]);
    }
  }
  for (const double lambda : h.lambdas) {
    bytes.append(reinterpret_cast<const char*>(&lambda), sizeof lambda);
  }
  return bytes;
}

std::string memory_with_lambdas(const Memory& memory, const std::vector<double>& lambdas) {
  std::string bytes(memory.bytes());
  const size_t at = memory_layout(memory.header()).lambdas;
  const size_t n = std::min(lambdas.size(), memory.header().lambdas.size());
  std::memcpy(bytes.data() + at, lambdas.data(), n * sizeof(double));
  return bytes;
}

std::shared_ptr<const Memory> Memory::open(const std::string& path, const Vocabulary& vocab) {
  return from_file(FileBytes::open(path, {kMaxMemoryBytes, "a memory.bin", nullptr}), vocab);
}

std::shared_ptr<const Memory> Memory::from_file(std::shared_ptr<FileBytes> file,
                                                const Vocabulary& vocab) {
  const std::string& path = file->path();
  static std::atomic<uint64_t> serials{0};
  std::shared_ptr<Memory> m(new Memory());
  m->serial_ = ++serials;
  m->file_ = std::move(file);
  m->bytes_ = m->file_->data();
  const size_t size = m->file_->size();
  if (size < kMemoryHeaderBytes || std::memcmp(m->bytes_, kMagic, sizeof kMagic) != 0) {
    throw model_error(path, "magic", "not a nextword memory (its first 8 bytes are not NWMEMORY)");
  }
  const char* b = m->bytes_;
  if (read_at<uint32_t>(b, kVersionAt) != kVersion) {
    throw model_error(path, "version",
                      std::to_string(read_at<uint32_t>(b, kVersionAt)) + " is not 1");
  }
  MemoryHeader& h = m->header_;
  const auto order = read_at<uint32_t>(b, kOrderAt);
  if (order < 1 || order > kMemoryMaxOrder) {
    throw model_error(path, "order", std::to_string(order) + " is not between 1 and 8");
  }
  h.order = static_cast<int>(order);
  const auto V = read_at<uint32_t>(b, kVocabAt);
  if (V != static_cast<uint32_t>(vocab.size())) {
    throw model_error(
        path, "vocab_size",
        std::to_string(V) + " is not the vocabulary's " + std::to_string(vocab.size()) + " words");
  }
  h.vocab_size = static_cast<int>(V);
  h.word_bytes = static_cast<int>(read_at<uint32_t>(b, kWordBytesAt));
  if (h.word_bytes != (V <= 65536 ? 2 : 4)) {
    throw model_error(path, "word_bytes",
                      std::to_string(h.word_bytes) + " is not " + (V <= 65536 ? "2" : "4") +
                          " for a vocabulary of " + std::to_string(V) + " words");
  }
  h.vocab_hash = read_at<uint64_t>(b, kHashAt);
  if (h.vocab_hash != memory_vocab_hash(vocab)) {
    throw model_error(path, "vocab_hash", "counted with another vocabulary than vocab.json's");
  }
  h.tokens = read_at<uint64_t>(b, kTokensAt);
  if (read_at<uint32_t>(b, kBandsAt) != kMemoryBands) {
    throw model_error(path, "bands", "is not 16");
  }
  for (size_t k = 0; k < kMemoryMaxOrder; ++k) {
    h.entries[k] = read_at<uint64_t>(b, kEntriesAt + 8 * k);
    h.cutoffs[k] = read_at<uint32_t>(b, kCutoffsAt + 4 * k);
    for (size_t i = 0; i < 3; ++i)
      h.discounts[k][i] = read_at<double>(b, kDiscountsAt + 8 * (3 * k + i));
    const bool used = k < order;
    const uint64_t most = k == 0 ? V : uint64_t{UINT32_MAX} - 1;
    if ((used && (h.entries[k] > most || (k == 0 && h.entries[k] != V))) ||
        (!used && h.entries[k] != 0)) {
      throw model_error(path, "entries[" + std::to_string(k + 1) + "]",
                        std::to_string(h.entries[k]) + " is out of range");
    }
  }
  m->layout_ = memory_layout(h);
  if (size != m->layout_.size) {
    throw model_error(path, "",
                      std::to_string(size) + " bytes, but its header describes " +
                          std::to_string(m->layout_.size) +
                          (size < m->layout_.size ? " (truncated?)" : ""));
  }
  if (reinterpret_cast<uintptr_t>(b) % 8 != 0) {
    m->copy_.assign(b, size);  // std::string's heap bytes are aligned for any scalar
    m->bytes_ = b = m->copy_.data();
  }
  h.lambdas.resize(order * kMemoryBands);
  for (size_t i = 0; i < h.lambdas.size(); ++i) {
    h.lambdas[i] = read_at<double>(b, m->layout_.lambdas + 8 * i);
    if (!(h.lambdas[i] >= 0 && h.lambdas[i] <= 1)) {
      throw model_error(path, "lambdas[" + std::to_string(i) + "]", "is not between 0 and 1");
    }
  }
  // The order-1 floats, each a probability above 0 (a word of u = 0 that no
  // context stores would get p = 0, and ln p in score and eval no number);
  // their sum normalizes them (checked after the loop, which so vectorizes).
  const auto* unigram = reinterpret_cast<const float*>(b + m->layout_.unigram);
  double total = 0;
  bool probabilities = true;
  for (uint32_t w = 0; w < V; ++w) {
    probabilities &= unigram[w] > 0 && unigram[w] <= 1;
    total += static_cast<double>(unigram[w]);
  }
  if (!probabilities) {
    uint32_t w = 0;
    while (unigram[w] > 0 && unigram[w] <= 1) ++w;
    throw model_error(path, "unigram[" + std::to_string(w) + "]", "is not a probability above 0");
  }
  if (!(total > 0)) throw model_error(path, "unigram", "has no positive probability");
  m->unigram_total_ = total;
  return m;
}

std::span<const int> Memory::top_unigrams() const {
  // Found when first asked for (greedy generation), not at every start.
  std::call_once(top_unigrams_once_, [this] {
    const float* u = unigram().data();
    auto before = [u](int x, int y) { return u[x] > u[y] || (u[x] == u[y] && x < y); };
    std::vector<int>& top = top_unigrams_;
    for (int w = 0; w < header_.vocab_size; ++w) {
      if (top.size() == kTopUnigrams && !before(w, top.back())) continue;
      top.insert(std::upper_bound(top.begin(), top.end(), w, before), w);
      if (top.size() > kTopUnigrams) top.pop_back();
    }
  });
  return top_unigrams_;
}

const std::string& Memory::path() const { return file_->path(); }
size_t Memory::file_bytes() const { return layout_.size; }

// A node's successors, clamped into order k + 1's entries (so that no value
// of the file can send a read outside it).
void Memory::children_of(int k, int64_t node, uint64_t& begin, uint64_t& end) const {
  const auto* children =
      reinterpret_cast<const uint32_t*>(bytes_ + layout_.children[static_cast<size_t>(k - 1)]);
  const uint64_t next = header_.entries[static_cast<size_t>(k)];
  begin = std::min<uint64_t>(children[node], next);
  end = std::clamp<uint64_t>(children[node + 1], begin, next);
}

int64_t Memory::child(int k, uint64_t begin, uint64_t end, int word) const {
  // Successors are sorted by word (FORMAT.md): a binary search.
  while (begin < end) {
    const uint64_t mid = begin + (end - begin) / 2;
    const int w = word_at(k + 1, mid);
    if (w == word) return static_cast<int64_t>(mid);
    if (w < word) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  return -1;
}

MemoryContext Memory::find(std::span<const int> context, bool weigh) const {
  MemoryContext c;
  c.node.fill(-1);
  const int n = header_.order, V = header_.vocab_size;
  const auto T = static_cast<int>(context.size());
  for (int j = 1; j < n && j <= T; ++j) {
    // The suffix of length j, walked from its first word.
    const std::span<const int> suffix = context.subspan(static_cast<size_t>(T - j));
    if (suffix[0] < 0 || suffix[0] >= V) continue;
    int64_t node = suffix[0];
    for (int k = 1; k < j && node >= 0; ++k) {
      uint64_t begin = 0, end = 0;
      children_of(k, node, begin, end);
      node = child(k, begin, end, suffix[static_cast<size_t>(k)]);
    }
    if (node < 0) continue;
    const auto J = static_cast<size_t>(j);
    c.node[J] = node;
    children_of(j, node, c.begin[J], c.end[J]);
    c.longest = j;
  }
  const uint64_t successors = c.longest > 0 ? c.end[static_cast<size_t>(c.longest)] -
                                                  c.begin[static_cast<size_t>(c.longest)]
                                            : 0;
  const int band = std::min(kMemoryBands - 1, static_cast<int>(std::bit_width(successors)));
  c.bucket = c.longest * kMemoryBands + band;
  if (weigh) this->weigh(c);
  return c;
}

void Memory::weigh(MemoryContext& c) const {
  struct Sums {
    uint64_t serial = 0;
    int64_t node = -1;
    int order = 0;
    double kept = 0, most = 0;
  };
  constexpr size_t kSlots = 4096;
  constexpr uint64_t kCached = 256;  // fewer successors are summed on the spot
  thread_local std::vector<Sums> cache(kSlots);
  weigh_orders(c, [&](int j, double, double& most) {
    const auto J = static_cast<size_t>(j);
    auto walk = [&](double& largest) {
      return walk_shares(
          j + 1, c.begin[J], c.end[J], [](int, double) {}, largest);
    };
    if (c.end[J] - c.begin[J] < kCached) return walk(most);
    const auto node = static_cast<uint64_t>(c.node[J]);
    Sums& slot = cache[(node * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(j)) >> 52];
    if (slot.serial != serial_ || slot.node != c.node[J] || slot.order != j) {
      slot = {serial_, c.node[J], j, 0, 0};
      slot.kept = walk(slot.most);
    }
    most = slot.most;
    return slot.kept;
  });
}

double Memory::probability(const MemoryContext& c, int word) const {
  if (word < 0 || word >= header_.vocab_size) return 0;
  double p = unigram_weight(c) * static_cast<double>(unigram()[static_cast<size_t>(word)]);
  for (int j = 1; j < header_.order; ++j) {
    const auto J = static_cast<size_t>(j);
    if (c.node[J] < 0) continue;
    const int64_t i = child(j, c.begin[J], c.end[J], word);
    if (i >= 0) p += c.scale[J] * share_at(j + 1, static_cast<uint64_t>(i));
  }
  return p;
}

void Memory::distribution(MemoryContext c, std::span<double> out) const {
  std::fill(out.begin(), out.end(), 0.0);
  for_each_share(c, [&out](int w, double weight) {
    if (static_cast<size_t>(w) < out.size()) out[static_cast<size_t>(w)] += weight;
  });
  const double base = unigram_weight(c);
  const std::span<const float> u = unigram();
  for (size_t w = 0; w < u.size() && w < out.size(); ++w)
    out[w] += base * static_cast<double>(u[w]);
}

}  // namespace nextword
