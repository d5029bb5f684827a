// The ranking rule (predict/ranking.h): specials never ranked, a higher
// logit first, the lower id first among equal logits; k = 0 and k above
// the vocabulary; a word's rank and its place in the top k agree.
#include "predict/ranking.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "test_models.h"

using namespace nextword;

TEST_CASE("ranking: higher logit first, lower id first on ties, specials never", "[ranking]") {
  const Model m = testing::random_model(testing::small_config(), false, false, 1);
  REQUIRE(m.unk_id == 0);
  REQUIRE(m.bos_id == 1);
  // ids:           unk  bos  2  3  4  5  6  7  8  9  10
  const std::vector<float> logits{9, 9, 1, 3, 3, 0, 5, 3, -2, 5, 1};
  std::vector<int> ids;
  rank_top(m, logits.data(), 100, ids);  // k above the vocabulary: every word
  CHECK(ids == std::vector<int>{6, 9, 3, 4, 7, 2, 10, 5, 8});
  rank_top(m, logits.data(), 4, ids);
  CHECK(ids == std::vector<int>{6, 9, 3, 4});
  rank_top(m, logits.data(), 9, ids);  // exactly the words that are not special
  CHECK(ids == std::vector<int>{6, 9, 3, 4, 7, 2, 10, 5, 8});
  rank_top(m, logits.data(), 0, ids);
  CHECK(ids.empty());
  rank_top(m, logits.data(), -3, ids);
  CHECK(ids.empty());

  CHECK(ranks_before(logits.data(), 6, 9));  // 5 = 5, lower id
  CHECK(!ranks_before(logits.data(), 9, 6));
  CHECK(ranks_before(logits.data(), 3, 2));   // 3 > 1
  CHECK(!ranks_before(logits.data(), 4, 4));  // a word is not before itself

  // rank_of counts the words before, specials not counted, up to the limit.
  CHECK(rank_of(m, logits.data(), 6, 5) == 0);
  CHECK(rank_of(m, logits.data(), 9, 5) == 1);
  CHECK(rank_of(m, logits.data(), 7, 5) == 4);
  CHECK(rank_of(m, logits.data(), 2, 5) == 5);  // 5 before it, the limit
  CHECK(rank_of(m, logits.data(), 8, 5) == 5);  // 8 before it, counted up to 5
  CHECK(rank_of(m, logits.data(), 8, 100) == 8);
  CHECK(rank_of(m, logits.data(), 0, 100) == 0);  // unk's logit 9 beats every word
}

TEST_CASE("ranking: a word's rank is its place in the full ranking", "[ranking]") {
  Config c = testing::small_config();
  c.vocab_size = 200;
  const Model m = testing::random_model(c, false, false, 2);
  std::vector<float> logits(200);
  for (int id = 0; id < 200; ++id)
    logits[static_cast<size_t>(id)] = static_cast<float>((id * 37) % 23);
  std::vector<int> all, top;
  rank_top(m, logits.data(), 1000, all);
  REQUIRE(all.size() == 198);
  for (size_t i = 0; i < all.size(); ++i) {
    CHECK(rank_of(m, logits.data(), all[i], 1000) == static_cast<int>(i));
    if (i > 0) CHECK(ranks_before(logits.data(), all[i - 1], all[i]));
  }
  for (int k : {1, 5, 23, kFewTop, kFewTop + 1, 197}) {
    rank_top(m, logits.data(), k, top);
    CHECK(top == std::vector<int>(all.begin(), all.begin() + k));
  }
}

TEST_CASE("ranking: kth_largest against a full sort, repeats counted", "[ranking]") {
  // Worked: 3, 9, 9, 1 -> the 2nd largest is 9 (a repeat), the 3rd 3.
  const std::vector<float> small{3, 9, 9, 1};
  CHECK(kth_largest(small, 1) == 9);
  CHECK(kth_largest(small, 2) == 9);
  CHECK(kth_largest(small, 3) == 3);
  CHECK(kth_largest(small, 4) == 1);
  CHECK(kth_largest(small, 5) == -std::numeric_limits<float>::infinity());
  CHECK(kth_largest(small, 0) == -std::numeric_limits<float>::infinity());
  // Rows longer than a block, rising (every block beats the k-th), falling
  // (none does) and shuffled with many repeats, sizes off the block size.
  std::mt19937 rng(7);
  for (const size_t n : {17u, 64u, 100u, 1000u, 65'537u}) {
    for (int shape = 0; shape < 3; ++shape) {
      std::vector<float> row(n);
      for (size_t i = 0; i < n; ++i) {
        row[i] = shape == 0   ? static_cast<float>(i)
                 : shape == 1 ? -static_cast<float>(i)
                              : static_cast<float>(rng() % 50);
      }
      std::vector<float> sorted = row;
      std::sort(sorted.begin(), sorted.end(), std::greater<>());
      for (const size_t k : {1u, 16u, 64u}) {
        if (k > n) continue;
        CHECK(kth_largest(row, k) == sorted[k - 1]);
      }
    }
  }
}
