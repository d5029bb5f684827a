// text/spelling.h: q(word), the character n-gram spelling distribution that
// gives words outside the vocabulary a probability of their own.
#include "text/spelling.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace nextword;

namespace {

using Words = std::vector<std::pair<std::string, int64_t>>;
const std::vector<unsigned char> kAbc = {'a', 'b', 'c'};

// The q of every word of 1 to `length` letters of a, b, c, and the mass of
// the longer words: the probability of each `length`-letter prefix that did
// not end there.
struct Mass {
  double words = 0;
  double longer = 0;
};

Mass mass_up_to(const Spelling& spelling, size_t length) {
  Mass mass;
  std::string word;
  const std::function<void()> visit = [&] {
    for (char c : {'a', 'b', 'c'}) {
      word.push_back(c);
      const double q = std::exp(spelling.log_prob(word));
      mass.words += q;
      if (word.size() < length) {
        visit();
      } else {
        mass.longer += std::exp(spelling.log_prefix_prob(word)) - q;
      }
      word.pop_back();
    }
  };
  visit();
  return mass;
}

}  // namespace

TEST_CASE("q sums to 1 over all strings: the words up to 10 letters and the longer ones",
          "[spelling]") {
  // With repeated letters, a word outside the alphabet, an empty word and a
  // count of 0, which are skipped.
  const Words words = {{"abc", 3}, {"abba", 1}, {"cab", 2}, {"a", 5},
                       {"zab", 4}, {"", 2},     {"bcb", 0}, {"aaaaaaab", 1}};
  for (int order : {1, 2, 3, 5, 7}) {
    CAPTURE(order);
    const Spelling spelling(words, {.order = order}, kAbc);
    const Mass mass = mass_up_to(spelling, 10);
    CHECK(mass.words <= 1 + 1e-9);
    CHECK(mass.words > 0.9);
    CHECK(std::abs(mass.words + mass.longer - 1) < 1e-9);
    // The first letter is drawn without the end of a word.
    double first = 0;
    for (const char* letter : {"a", "b", "c"}) first += std::exp(spelling.log_prefix_prob(letter));
    CHECK(std::abs(first - 1) < 1e-12);
  }
  // Untrained, q is the uniform floor: q(w) = 4^-(|w| + 1) / (3/4).
  const Spelling untrained({}, {.order = 3}, kAbc);
  CHECK(untrained.log_prob("a") == Approx(std::log(1.0 / 12)));
  CHECK(untrained.log_prob("abc") == Approx(std::log(1.0 / 192)));
  const Mass mass = mass_up_to(untrained, 10);
  CHECK(std::abs(mass.words + mass.longer - 1) < 1e-9);
}

TEST_CASE("q of a tiny model, worked by hand", "[spelling]") {
  // Symbols a, b, c and the end E. Counts: "ab" once, "a" twice.
  const Words words = {{"ab", 1}, {"a", 2}};
  // Order 1: c(a) = 3, c(b) = 1, c(E) = 3, so c() = 7 and T() = 3; the floor is
  // 1/4. P(a) = (3 + 3/4) / 10 = .375, P(b) = .175, P(c) = .075, P(E) = .375,
  // and the first letter is divided by 1 - P(E) = .625.
  const Spelling unigram(words, {.order = 1}, kAbc);
  CHECK(std::exp(unigram.log_prob("a")) == Approx(0.375 / 0.625 * 0.375));
  CHECK(std::exp(unigram.log_prob("ab")) == Approx(0.375 / 0.625 * 0.175 * 0.375));
  CHECK(std::exp(unigram.log_prob("c")) == Approx(0.075 / 0.625 * 0.375));
  CHECK(std::exp(unigram.log_prefix_prob("a")) == Approx(0.6));
  // Order 2 adds the previous symbol, or the begin mark B, to the context:
  // c(B a) = 3: P(a | B) = (3 + 1 * .375) / (3 + 1) = .84375, P(E | B) = .375 / 4;
  // c(a E) = 2, c(a b) = 1: P(E | a) = (2 + 2 * .375) / (3 + 2) = .55,
  // P(b | a) = (1 + 2 * .175) / 5 = .27; c(b E) = 1: P(E | b) = (1 + .375) / 2.
  const Spelling bigram(words, {.order = 2}, kAbc);
  const double first = 1 - 0.375 / 4;
  CHECK(std::exp(bigram.log_prob("a")) == Approx(0.84375 / first * 0.55));
  CHECK(std::exp(bigram.log_prob("ab")) == Approx(0.84375 / first * 0.27 * 0.6875));
  // c was never seen: P(c | B) = .075 / 4, and after c the order-1 P(E) = .375.
  CHECK(std::exp(bigram.log_prob("c")) == Approx(0.075 / 4 / first * 0.375));
  CHECK(bigram.order() == 2);
}

TEST_CASE("words seen in training, and seen more often, score higher", "[spelling]") {
  const Words words = {{"banana", 50}, {"bandana", 10}, {"cabana", 20}, {"Paris", 30}};
  const Spelling spelling(words, {.order = 5});
  CHECK(spelling.log_prob("banana") > spelling.log_prob("bandana"));
  CHECK(spelling.log_prob("bandana") > spelling.log_prob("nabnab"));
  CHECK(spelling.log_prob("cabana") > spelling.log_prob("canaba"));
  CHECK(spelling.log_prob("Paris") > spelling.log_prob("Pxqis"));
  CHECK(spelling.log_prob("nabnab") > spelling.log_prob("qqqqqq"));
  // A longer word that shares the spelling still costs its extra letters.
  CHECK(spelling.log_prob("bananas") < spelling.log_prob("banana"));
  // Any byte is in the default alphabet, so nothing is impossible.
  CHECK(std::isfinite(spelling.log_prob(std::string("\xFF\x00\x01", 3))));
  CHECK(spelling.bytes() > 0);
}

TEST_CASE("an empty word or a byte outside the alphabet has q = 0", "[spelling]") {
  const double minus_infinity = -std::numeric_limits<double>::infinity();
  const Spelling spelling({{"abc", 1}}, {.order = 3}, kAbc);
  CHECK(spelling.log_prob("") == minus_infinity);
  CHECK(spelling.log_prob("abd") == minus_infinity);
  CHECK(spelling.log_prob("A") == minus_infinity);
  CHECK(spelling.log_prefix_prob("ad") == minus_infinity);
  CHECK(spelling.log_prefix_prob("") == 0);
  CHECK(std::isfinite(spelling.log_prob("cba")));
  CHECK_THROWS_AS(Spelling({}, {.order = 0}), std::invalid_argument);
  CHECK_THROWS_AS(Spelling({}, {.order = 8}), std::invalid_argument);
}
