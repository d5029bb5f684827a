// The probability of a word's spelling, for words outside a model's
// vocabulary: an interpolated Witten-Bell character n-gram model over bytes.
// See docs/models.md, "The spelling of a word outside the vocabulary".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextword {

struct SpellingOptions {
  // Symbols per n-gram: each symbol's context is the order-1 symbols before
  // it. 1 to 7 (a 7-gram of 9-bit symbols fills a 64-bit key).
  int order = 5;
};

class Spelling {
 public:
  using Options = SpellingOptions;

  // Every byte value, the default alphabet.
  static std::vector<unsigned char> all_bytes();

  // Trains on `words`, (spelling, count) pairs; a count weights its word as
  // that many occurrences. Words that are empty, have a count below 1 or hold
  // a byte outside `alphabet` are skipped. The floor P_-1 is spread over
  // `alphabet` and E; a word with a byte outside it has q = 0.
  // Throws std::invalid_argument when options.order is outside 1..7.
  Spelling(const std::vector<std::pair<std::string, int64_t>>& words, Options options = {},
           const std::vector<unsigned char>& alphabet = all_bytes());

  // ln q(word): -infinity for the empty word and for a word with a byte
  // outside the alphabet.
  double log_prob(std::string_view word) const;

  // ln of the probability that a word starts with `prefix` (the sum of q over
  // the words that do, `prefix` itself included): 0 for the empty prefix.
  // log_prob(w) = log_prefix_prob(w) + ln P(E | w's last order-1 symbols).
  double log_prefix_prob(std::string_view prefix) const;

  int order() const;
  // Bytes held by the count tables.
  size_t bytes() const;

 private:
  struct Model;  // the count tables (spelling.cpp)
  std::shared_ptr<const Model> model_;
};

}  // namespace nextword
