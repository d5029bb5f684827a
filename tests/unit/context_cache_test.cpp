// complete/context_cache.h: the writer's words by the contexts they followed.
#include "complete/context_cache.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

using namespace nextword;

TEST_CASE("p_context: softmax of theta cos(h, h_i), summed over each word's uses", "[cache]") {
  ContextCache cache(10, 2.0);
  std::vector<double> p(3, 0);
  // Nothing kept: nothing added.
  cache.add_probabilities(std::vector<float>{1, 0}, 1.0, p);
  CHECK(p == std::vector<double>{0, 0, 0});

  // Word 0 after (1, 0), word 1 after (0, 3), word 0 again after (-2, 0):
  // lengths do not count, directions do.
  cache.add(std::vector<float>{1, 0}, 0);
  cache.add(std::vector<float>{0, 3}, 1);
  cache.add(std::vector<float>{-2, 0}, 0);
  // h = (1, 1): cosines 1/sqrt2, 1/sqrt2, -1/sqrt2.
  const double c = 1 / std::sqrt(2.0);
  const double e_plus = std::exp(2.0 * c), e_minus = std::exp(-2.0 * c);
  const double total = 2 * e_plus + e_minus;
  cache.add_probabilities(std::vector<float>{5, 5}, 0.5, p);
  CHECK(p[0] == Approx(0.5 * (e_plus + e_minus) / total));
  CHECK(p[1] == Approx(0.5 * e_plus / total));
  CHECK(p[2] == 0);
  CHECK(p[0] + p[1] == Approx(0.5));

  // It adds to what p held: the word cache's share is already there.
  std::vector<double> q{0.25, 0, 0};
  cache.add_probabilities(std::vector<float>{1, 0}, 1.0, q);
  // h = (1, 0): cosines 1, 0, -1.
  const double t = std::exp(2.0) + 1 + std::exp(-2.0);
  CHECK(q[0] == Approx(0.25 + (std::exp(2.0) + std::exp(-2.0)) / t));
  CHECK(q[1] == Approx(1 / t));
}

TEST_CASE("theta 0 is the plain frequency of the uses kept; the oldest go first", "[cache]") {
  ContextCache cache(3, 0.0);
  cache.add(std::vector<float>{1, 0}, 0);
  cache.add(std::vector<float>{0, 1}, 1);
  cache.add(std::vector<float>{1, 1}, 1);
  std::vector<double> p(3, 0);
  cache.add_probabilities(std::vector<float>{1, 2}, 1.0, p);
  CHECK(p[0] == Approx(1.0 / 3));
  CHECK(p[1] == Approx(2.0 / 3));
  // A fourth use replaces the first (word 0's only one).
  cache.add(std::vector<float>{3, 1}, 2);
  std::fill(p.begin(), p.end(), 0);
  cache.add_probabilities(std::vector<float>{1, 2}, 1.0, p);
  CHECK(p[0] == 0);
  CHECK(p[1] == Approx(2.0 / 3));
  CHECK(p[2] == Approx(1.0 / 3));
}

TEST_CASE("a cache that keeps nothing, or a context of none, adds nothing", "[cache]") {
  ContextCache none(0, 1.0);
  none.add(std::vector<float>{1, 0}, 0);
  std::vector<double> p(1, 0);
  none.add_probabilities(std::vector<float>{1, 0}, 1.0, p);
  CHECK(p[0] == 0);
  ContextCache cache(4, 1.0);
  cache.add({}, 0);  // a word whose context is not known
  cache.add_probabilities(std::vector<float>{1, 0}, 1.0, p);
  CHECK(p[0] == 0);
}
