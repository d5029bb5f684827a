// complete/word_cache.h: the writer's words, the recent ones weighing most.
#include "complete/word_cache.h"

#include <catch2/catch.hpp>

using namespace nextword;

TEST_CASE("p_cache: uses weighted by decay^age, normalized over all uses", "[cache]") {
  WordCache cache(0.5);
  CHECK(cache.probability("a") == 0);
  cache.add("a", "a");
  CHECK(cache.probability("a") == 1);
  cache.add("b", "B");
  // a: 0.5, b: 1; total 1.5.
  CHECK(cache.probability("a") == Approx(0.5 / 1.5));
  CHECK(cache.probability("b") == Approx(1 / 1.5));
  cache.add("a", "");
  // a: 0.25 + 1 = 1.25, b: 0.5; total 1.75.
  CHECK(cache.probability("a") == Approx(1.25 / 1.75));
  CHECK(cache.probability("b") == Approx(0.5 / 1.75));
  CHECK(cache.probability("a") + cache.probability("b") == Approx(1));
  // The writer's spelling; an empty form (a sentence's capital) keeps the old one.
  CHECK(cache.form("b") == "B");
  CHECK(cache.form("a") == "a");
  CHECK(cache.form("c").empty());
}

TEST_CASE("with decay 1 the cache is plain relative frequency", "[cache]") {
  WordCache cache(1.0);
  for (const char* w : {"x", "y", "x", "x"}) cache.add(w, w);
  CHECK(cache.probability("x") == Approx(0.75));
  CHECK(cache.probability("y") == Approx(0.25));
}
