// The probability of a word's spelling, for words outside a model's
// vocabulary: `score` and `eval` give such a word p(<unk> | context) x q(word)
// instead of the whole p(<unk> | context), so that a model with a small
// vocabulary cannot win by calling every rare word <unk>.
//
// q is an interpolated Witten-Bell character n-gram model over bytes with an
// end-of-word symbol E, trained on (word, count) pairs (the lexicon's words
// outside the vocabulary, each weighted by its count). A word's symbols are
// its bytes and then E; the context of a symbol is the n-1 symbols before it,
// padded on the left with a begin mark. With m = |alphabet|, c(h s) the count
// of symbol s after context h, c(h) = sum over s of c(h s), T(h) the number of
// distinct s with c(h s) > 0, and h' the context h without its first symbol:
//
//   P_-1(s)    = 1 / (m + 1)                           for s in alphabet + {E}
//   P(s | h)   = (c(h s) + T(h) P(s | h')) / (c(h) + T(h))      when c(h) > 0
//   P(s | h)   = P(s | h')                                      when c(h) = 0
//
// (the empty context's lower order is P_-1). Each P(. | h) sums to exactly 1
// over alphabet + {E}, by induction from the uniform P_-1: the sum is
// (c(h) + T(h) * 1) / (c(h) + T(h)). The first symbol is drawn from
// P(. | begin) renormalized without E (the empty word is never a token), so
//
//   q(b1 .. bL) = P(b1 | begin) / (1 - P(E | begin)) x P(b2 | ..) .. P(E | .. bL)
//
// is the probability that this process writes b1 .. bL and then stops; the
// words are disjoint outcomes, so the q of all byte strings sum to at most 1
// (to exactly 1: every step has P(E) > 0, so the process stops for sure).
// Rounding aside: c(h) is the sum of the stored c(h s), so each step's sum is
// 1 up to floating-point rounding (~1e-16); counts are kept as doubles, exact
// while a total stays below 2^53.
//
// The counts live in hash tables keyed by the symbol sequence itself (9 bits
// a symbol), so no two sequences share counts. Training hashes every symbol
// of every word once, into the table of the highest order, and derives each
// lower order from the one above. On one core of the project's machine,
// 1.5 M words of 12.8 bytes took 1.7-1.9 s and 110 MiB of tables at order 5
// (each order more about doubles both); log_prob takes a few microseconds.
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
