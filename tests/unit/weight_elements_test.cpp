// The elements of a GGUF file's tensors besides float32 (base/weight_elements.h)
// and the products that read them in place (math/weight_products.h): BF16
// and Q8_0 widen exactly, and the products and the embedding of rows of
// outputs and of words in them give, in every family and however the rows
// are split over calls and threads, the bits of the same rows widened to
// float32 first.
#include "base/weight_elements.h"

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "base/half_float.h"
#include "base/threading.h"
#include "math/kernel_paths.h"
#include "math/layers.h"
#include "math/q8_activations.h"
#include "math/weight_products.h"
#include "stored_weights.h"

using namespace nextword;

namespace {

std::vector<float> widened(WeightType type, const std::vector<uint16_t>& bytes, size_t n) {
  std::vector<float> out(n);
  REQUIRE(widen_elements(type, bytes.data(), n, out.data()));
  return out;
}

// The family in force for a scope, then one thread again.
struct FamilyScope : testing::KernelPathScope {
  using testing::KernelPathScope::KernelPathScope;
  ~FamilyScope() { set_threading(Threading::kRows, 1); }
};

// x stored as `type`; of a block type other than Q8_0, random blocks of as
// many values (the products are held to the bits of the values the blocks hold).
std::vector<uint16_t> stored(WeightType type, const std::vector<float>& x) {
  static std::mt19937 rng(54);
  if (is_block_type(type) && type != WeightType::kQ8_0) {
    return testing::random_blocks(type, x.size(), rng);
  }
  return testing::stored_as(type, x);
}

// Every type a file's tensors are read in place as, but float32.
const WeightType kStoredTypes[] = {
    WeightType::kBF16, WeightType::kF16,  WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_1,
    WeightType::kQ5_0, WeightType::kQ5_1, WeightType::kQ4_K, WeightType::kQ5_K, WeightType::kQ6_K};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("BF16 and Q8_0 elements widen exactly", "[math]") {
  // Every bfloat16 is its bits shifted up 16.
  for (uint32_t h = 0; h < 0x10000; h += 7) {
    const auto bits = static_cast<uint16_t>(h);
    float x = 0.0f;
    widen_elements(WeightType::kBF16, &bits, 1, &x);
    REQUIRE(std::bit_cast<uint32_t>(x) == h << 16);
  }
  // q d of every q and many scales (subnormal halves, the largest, negative)
  // is float(q) * float(d) and the exact product, as double computes it.
  BlockQ8_0 block{};
  for (int q = -128; q < 128; ++q) block.q[(q + 128) % kQ8Block] = static_cast<int8_t>(q);
  for (const uint16_t d :
       {0x0001, 0x03ff, 0x0400, 0x3c00, 0x3555, 0x7bff, 0xfbff, 0x8001, 0x2e66}) {
    block.d = d;
    for (int q = -128; q < 128; ++q) {
      block.q[0] = static_cast<int8_t>(q);
      float x[kQ8Block];
      REQUIRE(widen_elements(WeightType::kQ8_0, &block, kQ8Block, x));
      REQUIRE(static_cast<double>(x[0]) == q * static_cast<double>(f16_to_float(d)));
      REQUIRE(x[0] == static_cast<float>(q) * f16_to_float(d));
    }
  }
  // A scale that is not finite makes the block's elements not finite, and says so.
  block.d = 0x7c00;
  float x[kQ8Block];
  CHECK_FALSE(widen_elements(WeightType::kQ8_0, &block, kQ8Block, x));
  CHECK(element_bytes(WeightType::kQ8_0, 64) == 68);
  CHECK(element_bytes(WeightType::kBF16, 5) == 10);
}

TEST_CASE(
    "weight_product and the embedding read BF16, F16 and ggml's blocks with the bits of "
    "their floats",
    "[math]") {
  // A projection held as rows of outputs ([out, in]) and a classifier and
  // embedding as rows of words ([V, d]), in BF16, F16 and ggml's blocks: every
  // family's products of them, all rows at once, a row alone, a few rows
  // and over two threads, are the bits of the same rows widened to float32
  // and held as rows of outputs or words in float32 (F32 rows of outputs:
  // the same transposed product; F32 rows of words: plain floats).
  std::mt19937 rng(52);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  struct Shape {
    int in, out;
  };
  const Shape shapes[] = {{32, 8}, {64, 96}, {96, 33}, {256, 700}, {512, 37}};
  const int M = 70;
  for (const KernelPath path : available_kernel_paths()) {
    const FamilyScope scope(path);
    for (const int threads : {1, 2}) {
      set_threading(Threading::kRows, threads);
      for (const WeightType type : kStoredTypes) {
        for (const Shape& s : shapes) {
          if (s.in % block_shape(type).values != 0) continue;
          INFO(kernel_path_name(path)
               << ", threads " << threads << ", type " << static_cast<int>(type) << ", in " << s.in
               << ", out " << s.out);
          std::vector<float> x(area(s.out, s.in)), A(area(M, s.in));
          for (float& v : x) v = normal(rng);
          for (float& v : A) v = normal(rng);
          const std::vector<uint16_t> rows = stored(type, x);
          const std::vector<float> floats = widened(type, rows, x.size());
          const WeightView outputs = WeightView::rows_of_outputs(rows.data(), type, s.in, nullptr);
          const WeightView outputs_f32 =
              WeightView::rows_of_outputs(floats.data(), WeightType::kF32, s.in, nullptr);
          const WeightView words = WeightView::rows_of_words(rows.data(), type, s.in, nullptr);
          // y = A W, W [in, out]: matmul_forward; logits = A C^T, C [out, in].
          auto projected = [&](WeightView W, int first, int n) {
            std::vector<float> y(area(n, s.out));
            matmul_forward(y.data(), A.data() + area(first, s.in), W, nullptr, n, s.in, s.out);
            return y;
          };
          auto classified = [&](WeightView C, int first, int n) {
            std::vector<float> y(area(n, s.out));
            classifier_forward(y.data(), A.data() + area(first, s.in), C, nullptr, n, s.in, s.out);
            return y;
          };
          const std::vector<float> all = projected(outputs_f32, 0, M);
          CHECK(same_bits(projected(outputs, 0, M), all));
          CHECK(same_bits(classified(words, 0, M), classified(floats.data(), 0, M)));
          // The classifier of word rows sums as a projection of output rows does.
          CHECK(same_bits(classified(words, 0, M), all));
          const std::vector<std::pair<int, int>> splits{{0, 1},  {7, 1},  {69, 1}, {3, 5},
                                                        {12, 3}, {30, 7}, {20, 9}, {10, 60}};
          for (const auto& [first, n] : splits) {
            INFO("rows " << first << " to " << first + n);
            const std::vector<float> part(
                all.begin() + static_cast<ptrdiff_t>(area(first, s.out)),
                all.begin() + static_cast<ptrdiff_t>(area(first + n, s.out)));
            CHECK(same_bits(projected(outputs, first, n), part));
            CHECK(same_bits(classified(words, first, n), part));
          }
          // The embedding widens the rows it copies: the rows' floats.
          const std::vector<int> ids{s.out - 1, 0, s.out / 2, 0};
          std::vector<float> E(area(4, s.in)), Ef(E.size());
          embedding_forward(E.data(), words, ids.data(), 4, s.in);
          embedding_forward(Ef.data(), floats.data(), ids.data(), 4, s.in);
          CHECK(same_bits(E, Ef));
          CHECK(E[0] == floats[area(s.out - 1, s.in)]);
        }
      }
    }
  }
}

TEST_CASE("a single row's product shared by the threads by columns is the bits of one thread's",
          "[math]") {
  // Generation multiplies one row at a time: past 2^21 multiply-adds the
  // threads share its columns (whole blocks of 64). Each element is still
  // its own chain of sums: the same bits as on one thread, for floats in the
  // math's layout, and rows of outputs in F32, BF16, F16 and ggml's blocks; N not a
  // multiple of 64.
  std::mt19937 rng(53);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  const int in = 1024, out = 2100;
  std::vector<float> x(area(out, in)), a(static_cast<size_t>(in)), w(area(in, out));
  for (float& v : x) v = normal(rng);
  for (float& v : a) v = normal(rng);
  for (float& v : w) v = normal(rng);
  for (const KernelPath path : available_kernel_paths()) {
    const FamilyScope scope(path);
    auto product = [&](WeightView W, int threads) {
      set_threading(Threading::kRows, threads);
      std::vector<float> y(static_cast<size_t>(out));
      matmul_forward(y.data(), a.data(), W, nullptr, 1, in, out);
      return y;
    };
    INFO(kernel_path_name(path));
    CHECK(same_bits(product(w.data(), 2), product(w.data(), 1)));
    for (const WeightType type : kStoredTypes) {
      INFO("type " << static_cast<int>(type));
      const std::vector<uint16_t> rows = stored(type, x);
      const std::vector<float> floats = widened(type, rows, x.size());
      const WeightView outputs = WeightView::rows_of_outputs(rows.data(), type, in, nullptr);
      const std::vector<float> one = product(outputs, 1);
      CHECK(same_bits(product(outputs, 2), one));
      CHECK(same_bits(
          product(WeightView::rows_of_outputs(floats.data(), WeightType::kF32, in, nullptr), 2),
          one));
    }
  }
}

TEST_CASE("a layer's products of the same rows, shared by the threads at once, are each one's bits",
          "[math]") {
  // q, k and v (gate and up) read the same rows: with few rows the threads
  // share the columns of all of them in one region (matmuls_forward). Each
  // element stays its own chain of sums: the bits of each matmul_forward on
  // one thread, parts of different types and widths into one wide matrix,
  // with biases, float32 or 8-bit activations, for 1 to 33 rows.
  std::mt19937 rng(55);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  const int in = 256, ld = 520;
  struct Part {
    WeightType type;
    int n, column;
  };
  const Part parts[] = {{WeightType::kQ5_0, 300, 0},
                        {WeightType::kQ8_0, 130, 300},
                        {WeightType::kQ6_K, 70, 430},
                        {WeightType::kF16, 20, 500}};
  std::vector<std::vector<uint16_t>> rows;
  std::vector<std::vector<float>> biases;
  for (const Part& p : parts) {
    std::vector<float> x(area(p.n, in));
    for (float& v : x) v = normal(rng);
    rows.push_back(stored(p.type, x));
    biases.emplace_back(static_cast<size_t>(p.n));
    for (float& v : biases.back()) v = normal(rng);
  }
  auto weights = [&](size_t p) {
    return WeightView::rows_of_outputs(rows[p].data(), parts[p].type, in, nullptr);
  };
  for (const KernelPath path : available_kernel_paths()) {
    const FamilyScope scope(path);
    for (const bool q8 : {false, true}) {
      set_q8_activations(q8);
      for (const int M : {1, 2, 5, 16, 33}) {
        INFO(kernel_path_name(path) << ", 8-bit activations " << q8 << ", rows " << M);
        std::vector<float> a(area(M, in));
        for (float& v : a) v = normal(rng);
        std::vector<float> alone(area(M, ld), -1.0f), together(alone);
        set_threading(Threading::kRows, 1);
        for (size_t p = 0; p < std::size(parts); ++p) {
          matmul_forward(alone.data() + parts[p].column, a.data(), weights(p), biases[p].data(), M,
                         in, parts[p].n, ld);
        }
        set_threading(Threading::kRows, 2);
        std::vector<MatmulPart> all;
        for (size_t p = 0; p < std::size(parts); ++p) {
          all.push_back(
              {together.data() + parts[p].column, weights(p), biases[p].data(), parts[p].n, ld});
        }
        matmuls_forward(all, a.data(), M, in);
        CHECK(same_bits(together, alone));
      }
    }
    set_q8_activations(false);
  }
}
