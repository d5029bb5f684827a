#include "text/spelling.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace nextword {
namespace {

// Symbols: byte b is b + 1, so that no symbol is 0 and a packed sequence
// tells its own length; then the end of a word and the begin mark.
constexpr int kSymbolBits = 9;
constexpr uint64_t kEnd = 257;
constexpr uint64_t kBegin = 258;
constexpr int kMaxOrder = 64 / kSymbolBits;

uint64_t symbol_of(char byte) { return uint64_t{static_cast<unsigned char>(byte)} + 1; }

// The last `symbols` symbols of a packed sequence.
uint64_t last_symbols(uint64_t key, int symbols) {
  return symbols == 0 ? 0 : key & ~uint64_t{0} >> (64 - kSymbolBits * symbols);
}

// SplitMix64's finalizer. Not a plain product: the lower tables are filled
// in the order of the upper table's slots, and a linear hash would relate
// that order to the lower table's slots and pile the keys up (100 probes an
// insert in a test).
uint64_t hash_of(uint64_t key) {
  key = (key ^ key >> 30) * 0xBF58476D1CE4E5B9ull;
  key = (key ^ key >> 27) * 0x94D049BB133111EBull;
  return key ^ key >> 31;
}

struct ContextCounts {
  double total = 0;    // c(h)
  uint32_t types = 0;  // T(h)
  void add(double count) {
    total += count;
    ++types;
  }
};

// Open addressing with linear probing, from a packed sequence to its counts.
// The key is the sequence itself, so two sequences never share counts.
template <typename Value>
class Table {
 public:
  Value& insert(uint64_t key) {
    if (10 * (used_ + 1) > 7 * slots_.size()) {  // keep the load at most 0.7
      std::vector<Slot> old(std::max<size_t>(1024, 2 * slots_.size()));
      old.swap(slots_);
      used_ = 0;
      for (const Slot& s : old) {
        if (s.key != 0) insert(s.key) = s.value;
      }
    }
    size_t i = home(key);
    while (slots_[i].key != key && slots_[i].key != 0) i = (i + 1) & (slots_.size() - 1);
    if (slots_[i].key == 0) {
      slots_[i].key = key;
      ++used_;
    }
    return slots_[i].value;
  }
  const Value* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (const Slot& s : slots_) {
      if (s.key != 0) visit(s.key, s.value);
    }
  }
  size_t bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    uint64_t key = 0;  // 0: empty
    Value value{};
  };
  size_t home(uint64_t key) const {
    return static_cast<size_t>(hash_of(key) >> (64 - std::countr_zero(slots_.size())));
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

}  // namespace

struct Spelling::Model {
  int order = 0;
  bool in_alphabet[256] = {};
  double uniform = 0;                          // P_-1 = 1 / (m + 1)
  ContextCounts empty;                         // c() and T() of the empty context
  double log_first_norm = 0;                   // ln(1 - P(E | begin))
  uint64_t begin = 0;                          // order - 1 begin marks
  std::vector<Table<double>> ngrams;           // [j]: c(h s) of the j-symbol sequences h s
  std::vector<Table<ContextCounts>> contexts;  // [j]: c(h), T(h) of the j-symbol contexts h

  // P(symbol | context), `context` the order - 1 symbols before it.
  double conditional(uint64_t context, uint64_t symbol) const {
    double p = uniform;
    if (empty.total > 0) {
      const double* unigram = ngrams[1].find(symbol);
      p = ((unigram != nullptr ? *unigram : 0) + empty.types * p) / (empty.total + empty.types);
    }
    // Longer contexts until one was never seen (then no longer one was either).
    for (int k = 1; k < order; ++k) {
      const uint64_t h = last_symbols(context, k);
      const ContextCounts* seen = contexts[static_cast<size_t>(k)].find(h);
      if (seen == nullptr) break;
      const double* ngram = ngrams[static_cast<size_t>(k) + 1].find(h << kSymbolBits | symbol);
      p = ((ngram != nullptr ? *ngram : 0) + seen->types * p) / (seen->total + seen->types);
    }
    return p;
  }

  // The sum of ln P over `text`'s bytes, then over E when `end`, with the
  // first step renormalized; -infinity at a byte outside the alphabet.
  double log_walk(std::string_view text, bool end) const {
    double sum = -log_first_norm;
    uint64_t context = begin;
    for (size_t i = 0; i < text.size() + (end ? 1 : 0); ++i) {
      uint64_t symbol = kEnd;
      if (i < text.size()) {
        if (!in_alphabet[static_cast<unsigned char>(text[i])]) {
          return -std::numeric_limits<double>::infinity();
        }
        symbol = symbol_of(text[i]);
      }
      sum += std::log(conditional(context, symbol));
      context = last_symbols(context << kSymbolBits | symbol, order - 1);
    }
    return sum;
  }
};

std::vector<unsigned char> Spelling::all_bytes() {
  std::vector<unsigned char> bytes(256);
  for (size_t b = 0; b < bytes.size(); ++b) bytes[b] = static_cast<unsigned char>(b);
  return bytes;
}

Spelling::Spelling(const std::vector<std::pair<std::string, int64_t>>& words, Options options,
                   const std::vector<unsigned char>& alphabet) {
  const int n = options.order;
  if (n < 1 || n > kMaxOrder) throw std::invalid_argument("a spelling model's order is 1 to 7");
  auto model = std::make_shared<Model>();
  model->order = n;
  for (unsigned char b : alphabet) model->in_alphabet[b] = true;
  const bool* in_alphabet = model->in_alphabet;
  model->uniform = 1.0 / static_cast<double>(std::count(in_alphabet, in_alphabet + 256, true) + 1);
  for (int i = 0; i < n - 1; ++i) model->begin = model->begin << kSymbolBits | kBegin;

  model->ngrams.resize(static_cast<size_t>(n) + 1);
  model->contexts.resize(static_cast<size_t>(n));

  // The n-grams of every position of every word, begin marks padding the context.
  Table<double>& top = model->ngrams[static_cast<size_t>(n)];
  for (const auto& [word, count] : words) {
    if (word.empty() || count < 1 || !std::all_of(word.begin(), word.end(), [&](char c) {
          return in_alphabet[static_cast<unsigned char>(c)];
        })) {
      continue;
    }
    uint64_t context = model->begin;
    for (size_t i = 0; i <= word.size(); ++i) {
      const uint64_t key = context << kSymbolBits | (i < word.size() ? symbol_of(word[i]) : kEnd);
      top.insert(key) += static_cast<double>(count);
      context = last_symbols(key, n - 1);
    }
  }
  // A position's n-gram of j - 1 symbols is its n-gram of j without the first
  // symbol, and the first j - 1 symbols of that are its context; so c(h) is
  // the sum of the c(h s) stored, and T(h) the number of them.
  for (int j = n; j >= 2; --j) {
    Table<double>& lower = model->ngrams[static_cast<size_t>(j) - 1];
    Table<ContextCounts>& context = model->contexts[static_cast<size_t>(j) - 1];
    model->ngrams[static_cast<size_t>(j)].for_each([&](uint64_t key, double count) {
      lower.insert(last_symbols(key, j - 1)) += count;
      context.insert(key >> kSymbolBits).add(count);
    });
  }
  model->ngrams[1].for_each([&](uint64_t, double count) { model->empty.add(count); });
  model->log_first_norm = std::log1p(-model->conditional(model->begin, kEnd));
  model_ = std::move(model);
}

double Spelling::log_prob(std::string_view word) const {
  if (word.empty()) return -std::numeric_limits<double>::infinity();
  return model_->log_walk(word, true);
}

double Spelling::log_prefix_prob(std::string_view prefix) const {
  return prefix.empty() ? 0 : model_->log_walk(prefix, false);
}

int Spelling::order() const { return model_->order; }

size_t Spelling::bytes() const {
  size_t sum = 0;
  for (const auto& table : model_->ngrams) sum += table.bytes();
  for (const auto& table : model_->contexts) sum += table.bytes();
  return sum;
}

}  // namespace nextword
