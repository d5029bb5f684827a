// Each formula of src/math/layers.h against values worked out by hand.
#include "math/layers.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/random.h"
#include "base/threading.h"
#include "math/kernel_paths.h"
#include "math/row_products.h"
#include "math/training_products.h"

using namespace nextword;

namespace {
std::vector<float> softmax(std::vector<float> row) {
  softmax_forward(row.data(), static_cast<int>(row.size()));
  return row;
}
}  // namespace

TEST_CASE("softmax of close, spread and far-apart scores", "[math]") {
  // softmax([a, b])[0] = 1 / (1 + e^(b - a))
  auto p = softmax({1.0f, 1.1f});
  CHECK(p[0] == Approx(0.4750208));  // 1 / (1 + e^0.1): nearly even
  CHECK(p[1] == Approx(0.5249792));
  p = softmax({10.0f, 11.0f});
  CHECK(p[0] == Approx(0.2689414));  // 1 / (1 + e)
  CHECK(p[1] == Approx(0.7310586));
  p = softmax({100.0f, 110.0f});
  CHECK(p[0] == Approx(4.5397869e-05));  // 1 / (1 + e^10): almost all on one
  CHECK(p[1] == Approx(0.9999546));
}

TEST_CASE("softmax stays finite for huge and infinite scores", "[math]") {
  auto p = softmax({1000.0f, 1010.0f});
  CHECK(p[0] == Approx(4.5397869e-05));
  p = softmax({3e38f, 3e38f, -3e38f});
  CHECK(p[0] == Approx(0.5));
  CHECK(p[1] == Approx(0.5));
  CHECK(p[2] == 0.0f);
  const float inf = std::numeric_limits<float>::infinity();
  p = softmax({-inf, 0.0f, -inf});
  CHECK(p == std::vector<float>{0.0f, 1.0f, 0.0f});
  p = softmax({inf, 1.0f, inf});
  CHECK(p == std::vector<float>{0.5f, 0.0f, 0.5f});
}

TEST_CASE("layernorm uses the biased variance and eps", "[math]") {
  // [1,2,3,4]: mean 2.5, biased variance 1.25 -> (x - 2.5) / sqrt(1.25 + eps)
  const std::vector<float> x = {1, 2, 3, 4}, w = {1, 1, 2, 1}, b = {0, 0, 0, 1};
  std::vector<float> y(4);
  layernorm_forward(y.data(), x.data(), w.data(), b.data(), 1, 4, 0.0f);
  CHECK(y[0] == Approx(-1.3416408));
  CHECK(y[1] == Approx(-0.4472136));
  CHECK(y[2] == Approx(0.8944272));  // weight 2
  CHECK(y[3] == Approx(2.3416408));  // bias 1
  layernorm_forward(y.data(), x.data(), w.data(), b.data(), 1, 4, 0.75f);
  CHECK(y[0] == Approx(-1.5 / std::sqrt(2.0)));  // sqrt(1.25 + 0.75)
  // A constant row has zero variance: eps keeps it finite.
  const std::vector<float> flat = {1e30f, 1e30f, 1e30f, 1e30f};
  layernorm_forward(y.data(), flat.data(), w.data(), b.data(), 1, 4, 1e-5f);
  CHECK(y[0] == 0.0f);
  CHECK(y[3] == 1.0f);
}

TEST_CASE("rmsnorm divides by the root mean square, with no mean and no bias", "[math]") {
  // [3, 4]: mean of squares 12.5, sqrt(12.5 + 0.5) = sqrt(13) = 3.6055513
  const std::vector<float> x = {3, 4}, weight = {1, 2};
  std::vector<float> y(2);
  rmsnorm_forward(y.data(), x.data(), weight.data(), 1, 2, 0.5f);
  CHECK(y[0] == Approx(3 / 3.6055513));
  CHECK(y[1] == Approx(2 * 4 / 3.6055513));
  // d y0 / d x0 = w0 (1/r - x0^2 / (d r^3)) = 1/r - 9 / (2 r^3); d y0 / d x1 = -12 / (2 r^3)
  std::vector<float> dx(2, 0.0f), dw(2, 0.0f);
  const std::vector<float> dy = {1, 0};
  rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), weight.data(), 1, 2, 0.5f);
  const double r = 3.6055513;
  CHECK(dx[0] == Approx(1 / r - 9 / (2 * r * r * r)));
  CHECK(dx[1] == Approx(-12 / (2 * r * r * r)));
  CHECK(dw[0] == Approx(3 / r));
  CHECK(dw[1] == 0.0f);
}

TEST_CASE("rotary positions turn adjacent pairs by p * theta^(-2i/d_k)", "[math]") {
  // One head of d_k = 4, theta 100: pair 0 turns by p rad, pair 1 by p / 10 rad.
  std::vector<float> x = {1, 0, 0, 1,   // position 0: not turned
                          1, 0, 0, 1};  // position 1: by 1 and 0.1
  rope_forward(x.data(), 2, 4, 1, 4, {100.0f});
  CHECK(x[0] == 1.0f);
  CHECK(x[3] == 1.0f);
  CHECK(x[4] == Approx(std::cos(1.0)));
  CHECK(x[5] == Approx(std::sin(1.0)));
  CHECK(x[6] == Approx(-std::sin(0.1)));
  CHECK(x[7] == Approx(std::cos(0.1)));
  // Two heads in rows 10 floats apart: each head turns alike; counting from
  // position 5 is row 0's position 5.
  std::vector<float> y = {1, 0, 1, 0, 7, 7, 7, 7, 7, 7};
  rope_forward(y.data(), 1, 10, 2, 2, {100.0f}, 5);
  CHECK(y[0] == Approx(std::cos(5.0)));
  CHECK(y[1] == Approx(std::sin(5.0)));
  CHECK(y[2] == y[0]);
  CHECK(y[3] == y[1]);
  CHECK(y[4] == 7.0f);
  // Backward turns back: the rotation's transpose is its inverse.
  rope_backward(x.data(), 2, 4, 1, 4, {100.0f});
  const std::vector<float> back = {1, 0, 0, 1, 1, 0, 0, 1};
  for (size_t i = 0; i < back.size(); ++i) CHECK(x[i] == Approx(back[i]).margin(1e-7));
}

TEST_CASE("rotary positions on a head's two halves, with frequency factors", "[math]") {
  // d_k = 4, theta 100, halves: pair 0 is columns (0, 2), pair 1 columns
  // (1, 3); factors 2 and 0.5 divide the angles: at position 1, pair 0 turns
  // by 1/2 rad and pair 1 by 0.1/0.5 = 0.2 rad.
  const float factors[] = {2.0f, 0.5f};
  const Rotary rotary{100.0f, true, factors};
  std::vector<float> x = {1, 2, 3, 4,   // position 0: not turned
                          1, 2, 3, 4};  // position 1
  rope_forward(x.data(), 2, 4, 1, 4, rotary);
  const std::vector<float> first = {1, 2, 3, 4};
  for (size_t i = 0; i < 4; ++i) CHECK(x[i] == first[i]);
  const double a = 0.5, b = 0.2;
  CHECK(x[4] == Approx(1 * std::cos(a) - 3 * std::sin(a)));
  CHECK(x[6] == Approx(1 * std::sin(a) + 3 * std::cos(a)));
  CHECK(x[5] == Approx(2 * std::cos(b) - 4 * std::sin(b)));
  CHECK(x[7] == Approx(2 * std::sin(b) + 4 * std::cos(b)));
  // The table of angles is per rotation: the same call without factors
  // turns by the plain angles (1 and 0.1), not the ones kept from above.
  std::vector<float> y = {1, 2, 3, 4};
  rope_forward(y.data(), 1, 4, 1, 4, {100.0f, true, nullptr}, 1);
  CHECK(y[0] == Approx(1 * std::cos(1.0) - 3 * std::sin(1.0)));
  CHECK(y[1] == Approx(2 * std::cos(0.1) - 4 * std::sin(0.1)));
  rope_backward(x.data(), 2, 4, 1, 4, rotary);
  for (size_t i = 0; i < 8; ++i) CHECK(x[i] == Approx(first[i % 4]).margin(1e-6));
}

TEST_CASE("swiglu gates the up projection by silu of the gate", "[math]") {
  // silu(1) = 1 / (1 + e^-1) = 0.7310586, silu(-1) = -0.2689414
  const std::vector<float> G = {1, -1, 0}, U = {2, 3, 5};
  std::vector<float> H(3);
  swiglu_forward(H.data(), G.data(), U.data(), 3);
  CHECK(H[0] == Approx(2 * 0.7310586));
  CHECK(H[1] == Approx(3 * -0.2689414));
  CHECK(H[2] == 0.0f);
  // silu'(g) = s (1 + g (1 - s)): at 1, 0.7310586 (1 + 0.2689414) = 0.9276705; at 0, 0.5
  std::vector<float> dG(3), dU(3);
  const std::vector<float> dH = {1, 1, 2};
  swiglu_backward(dG.data(), dU.data(), dH.data(), G.data(), U.data(), 3);
  CHECK(dG[0] == Approx(2 * 0.9276705));
  CHECK(dU[0] == Approx(0.7310586));
  CHECK(dG[2] == Approx(2 * 5 * 0.5));
  CHECK(dU[2] == 0.0f);
}

TEST_CASE("gelu (tanh approximation) and relu", "[math]") {
  std::vector<float> x = {1.0f, -1.0f, 0.5f, 3.0f, 0.0f};
  gelu_forward(x.data(), x.size());
  CHECK(x[0] == Approx(0.8411920));
  CHECK(x[1] == Approx(-0.1588080));
  CHECK(x[2] == Approx(0.3457140));
  CHECK(x[3] == Approx(2.9963626));
  CHECK(x[4] == 0.0f);
  std::vector<float> r = {-2, 0, 3};
  relu_forward(r.data(), r.size());
  CHECK(r == std::vector<float>{0, 0, 3});
}

TEST_CASE("sinusoidal positions", "[math]") {
  // d = 4: PE[p] = [sin p, cos p, sin(p/100), cos(p/100)]
  std::vector<float> X(8, 0.0f);
  sinusoid_forward(X.data(), 2, 4);
  CHECK(X[0] == 0.0f);
  CHECK(X[1] == 1.0f);
  CHECK(X[4] == Approx(std::sin(1.0)));
  CHECK(X[5] == Approx(std::cos(1.0)));
  CHECK(X[6] == Approx(std::sin(0.01)));
  CHECK(X[7] == Approx(std::cos(0.01)));
}

TEST_CASE("embedding lookup and the classifier", "[math]") {
  const std::vector<float> E = {0, 0, 1, 2, 3, 4};  // 3 words, d = 2
  const std::vector<int> ids = {2, 1};
  std::vector<float> X(4);
  embedding_forward(X.data(), E.data(), ids.data(), 2, 2);
  CHECK(X == std::vector<float>{3, 4, 1, 2});
  // logits = C z + c
  const std::vector<float> z = {1, -1}, c = {0.5f, 0, 0};
  std::vector<float> logits(3);
  classifier_forward(logits.data(), z.data(), E.data(), c.data(), 1, 2, 3);
  CHECK(logits == std::vector<float>{0.5f, -1, -1});
}

TEST_CASE("layernorm, GELU and log-sum-exp stay finite for extreme inputs", "[math]") {
  const float big = std::numeric_limits<float>::max();
  // Rows near float's limits, a constant row (variance 0), a subnormal row.
  const std::vector<std::vector<float>> rows = {{big, -big, big, -big},
                                                {3e38f, 3e38f, 3e38f, -3e38f},
                                                {7.0f, 7.0f, 7.0f, 7.0f},
                                                {1e-45f, -1e-45f, 0.0f, 1e-45f}};
  const std::vector<float> gain(4, 1.0f), bias(4, 0.0f);
  for (const std::vector<float>& row : rows) {
    std::vector<float> out(4);
    layernorm_forward(out.data(), row.data(), gain.data(), bias.data(), 1, 4, 1e-5f);
    for (float x : out) CHECK(std::isfinite(x));
  }
  std::vector<float> out(4);
  layernorm_forward(out.data(), rows[0].data(), gain.data(), bias.data(), 1, 4, 1e-5f);
  CHECK(out[0] == Approx(1.0f));  // (x - 0) / max: the row's own scale
  CHECK(out[1] == Approx(-1.0f));

  std::vector<float> x = {big, -big, 1e30f, -1e30f, 0.0f, -0.0f, 88.7f, -88.7f, -1e-45f};
  const std::vector<float> in = x;
  gelu_forward(x.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    INFO(in[i]);
    CHECK(std::isfinite(x[i]));
  }
  CHECK(x[0] == big);   // gelu(x) = x for large x
  CHECK(x[1] == 0.0f);  // and 0 for very negative x
  CHECK(x[6] == Approx(88.7f));

  const std::vector<float> logits = {big, big, -big};
  CHECK(log_sum_exp(logits.data(), 3) == Approx(static_cast<double>(big) + std::log(2.0)));
  const std::vector<float> tiny = {-1e30f, -1e30f};
  CHECK(log_sum_exp(tiny.data(), 2) == Approx(-1e30 + std::log(2.0)));
}

// Records must not depend on how the work is split: a row's product must be the same bits whatever
// rows share the call (a phrase alone, in a batch of 7 or 64, split over threads), in every family
// of kernels.
TEST_CASE("a product row does not depend on the rows beside it", "[math]") {
  struct Shape {
    bool classifier;  // logits = Z C^T (op(B) = B^T), else out = in W
    int n, k;
  };
  // The default model's products (d 128, d_ff 512, vocabulary 4096) and
  // small, odd ones where OpenBLAS picks other kernels: some change kernel
  // between a block alone and many blocks in one call.
  const std::vector<Shape> shapes = {
      {false, 384, 128}, {false, 128, 128}, {false, 512, 128}, {false, 128, 512}, {false, 8, 8},
      {false, 5, 3},     {false, 48, 24},   {false, 64, 64},   {false, 200, 96},  {true, 4096, 128},
      {true, 37, 8},     {true, 1000, 64},  {true, 100, 100},  {true, 24, 48}};
  std::mt19937 rng(15);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int M = 1100;  // many whole blocks and a partial one
  const KernelPath saved = kernel_path();
  for (const KernelPath path : available_kernel_paths()) {
    set_kernel_path(path);
    for (const int threads : {1, 2}) {
      set_threading(Threading::kRows, threads);
      for (const Shape& shape : shapes) {
        INFO(kernel_path_name(path) << ", threads " << threads << ", n " << shape.n << ", k "
                                    << shape.k << (shape.classifier ? ", classifier" : ""));
        std::vector<float> in(area(M, shape.k)), W(area(shape.k, shape.n));
        for (float& x : in) x = normal(rng);
        for (float& x : W) x = normal(rng);
        auto product = [&](int first, int rows) {
          std::vector<float> out(area(rows, shape.n));
          const float* rows_in = in.data() + area(first, shape.k);
          if (shape.classifier) {
            classifier_forward(out.data(), rows_in, W.data(), nullptr, rows, shape.k, shape.n);
          } else {
            matmul_forward(out.data(), rows_in, W.data(), nullptr, rows, shape.k, shape.n);
          }
          return out;
        };
        const std::vector<float> all = product(0, M);
        for (const auto& [first, rows] : std::vector<std::pair<int, int>>{{0, 1},
                                                                          {63, 1},
                                                                          {64, 1},
                                                                          {1099, 1},
                                                                          {3, 7},
                                                                          {60, 7},
                                                                          {1093, 7},
                                                                          {5, 64},
                                                                          {70, 80},
                                                                          {1, 128},
                                                                          {7, 640},
                                                                          {1, 1099},
                                                                          {100, 1000}}) {
          const std::vector<float> part = product(first, rows);
          INFO("rows " << first << " to " << first + rows);
          CHECK(std::memcmp(part.data(), all.data() + area(first, shape.n),
                            part.size() * sizeof(float)) == 0);
        }
      }
    }
  }
  set_kernel_path(saved);
  set_threading(Threading::kRows, 1);
}

TEST_CASE("a transposed product sums each element in 16 lanes, halves first", "[math]") {
  // The plain family's documented order (math/row_products.h), computed here one product
  // at a time (volatile: never fused into a multiply-add), against the
  // kernel's vectors and masked tails: every K from 1 to 40, rows of B
  // padded with NaN past K, and the last rows, whose tails are summed alone.
  auto by_hand = [](const float* a, const float* b, int K) {
    float lane[16] = {};
    for (int k = 0; k < K; ++k) {
      volatile float product = a[k] * b[k];
      lane[k % 16] += product;
    }
    for (int width = 8; width > 0; width /= 2) {
      for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
    }
    return lane[0];
  };
  std::mt19937 rng(37);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int K = 1; K <= 40; ++K) {
    for (const int N : {1, 2, 5, 19, 64}) {
      INFO("K " << K << ", N " << N);
      const int ldb = K + 3, M = 3;
      std::vector<float> A(area(M, K)), B(area(N, ldb), std::nanf("")), C(area(M, N));
      for (float& x : A) x = normal(rng);
      for (int j = 0; j < N; ++j) {
        for (int k = 0; k < K; ++k) B[area(j, ldb) + static_cast<size_t>(k)] = normal(rng);
      }
      const KernelPath saved = kernel_path();
      set_kernel_path(KernelPath::kPlain);
      row_product_transposed(M, N, K, A.data(), K, B.data(), ldb, C.data(), N);
      set_kernel_path(saved);
      for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
          const float expected = by_hand(A.data() + area(i, K), B.data() + area(j, ldb), K);
          REQUIRE(std::bit_cast<uint32_t>(C[area(i, N) + static_cast<size_t>(j)]) ==
                  std::bit_cast<uint32_t>(expected));
        }
      }
    }
  }
}

TEST_CASE("training's products in bf16 stay within bfloat16's rounding of float32", "[math]") {
  if (!bf16_available()) {
    CHECK_THROWS_WITH(set_training_precision(Precision::kBfloat16),
                      Catch::Contains(bf16_unavailable_reason()));
    return;
  }
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  const int M = 37, N = 70, K = 129;
  std::vector<float> A(M * K), B(K * N), C0(M * N), C1(M * N);
  for (float& x : A) x = normal(rng);
  for (float& x : B) x = normal(rng);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (float beta : {0.0f, 1.0f}) {
        INFO("transposed A " << ta << ", B " << tb << ", beta " << beta);
        // The same numbers read as A [M, K] or A^T of [K, M], and B likewise.
        const int lda = ta ? M : K, ldb = tb ? K : N;
        for (size_t i = 0; i < C0.size(); ++i) C0[i] = C1[i] = 0.5f * static_cast<float>(i % 7);
        set_training_precision(Precision::kFloat32);
        training_product(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, beta, C0.data(), N);
        set_training_precision(Precision::kBfloat16);
        training_product(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, beta, C1.data(), N);
        set_training_precision(Precision::kFloat32);
        double diff2 = 0, norm2 = 0;
        for (size_t i = 0; i < C0.size(); ++i) {
          diff2 += (C1[i] - C0[i]) * (C1[i] - C0[i]);
          norm2 += C0[i] * C0[i];
        }
        // bfloat16 keeps 8 bits of mantissa: a product's relative error is
        // about 2^-9 per operand, averaged down over K terms.
        const double error = std::sqrt(diff2 / norm2);
        CHECK(error > 1e-5);  // it really was rounded
        CHECK(error < 1e-2);
      }
    }
  }
}

TEST_CASE(
    "dropout masks: element i is dropped where splitmix64(splitmix64(seed) ^ i)'s top 24 bits / "
    "2^24 < p") {
  // Several of the vectorized pieces (4,096 elements) and a ragged end, on
  // one thread and on two: each element as the formula computes it alone.
  const size_t n = 9 * 4096 + 17;  // past kParallelElements: the threads share the pieces
  const float p = 0.2f, keep = 1.0f / (1.0f - p);
  const uint64_t seed = 0x1234abcd;
  std::vector<float> expected(n);
  size_t dropped = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bits = splitmix64(splitmix64(seed) ^ i) >> 40;
    expected[i] = static_cast<double>(bits) / 16777216.0 < p ? 0.0f : keep;
    dropped += expected[i] == 0.0f;
  }
  CHECK(dropped > n / 6);
  CHECK(dropped < n / 4);
  for (int threads : {1, 2}) {
    set_threading(Threading::kRows, threads);
    std::vector<float> mask(n, -1.0f);
    dropout_mask(mask.data(), n, p, seed);
    CHECK(std::memcmp(mask.data(), expected.data(), n * sizeof(float)) == 0);
  }
  set_threading(Threading::kRows, 1);
}
