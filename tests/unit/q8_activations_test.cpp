// math/q8_activations.h against the test's own arithmetic.
#include "math/q8_activations.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/half_float.h"
#include "math/kernel_paths.h"
#include "stored_weights.h"

using namespace nextword;

TEST_CASE("a row rounded to q8_0 blocks: scales as halves, values within half a step", "[math]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0, 3);
  std::vector<float> x(96);
  for (float& v : x) v = normal(rng);
  for (int i = 32; i < 64; ++i) x[static_cast<size_t>(i)] = 0;  // a block of zeros: scale 0
  std::vector<int8_t> q(96);
  std::vector<float> d(3);
  plain_round_to_q8(x.data(), 96, q.data(), d.data());
  // Every family rounds to the same bytes.
  const KernelPath before = kernel_path();
  for (const KernelPath path : available_kernel_paths()) {
    set_kernel_path(path);
    std::vector<int8_t> q2(96);
    std::vector<float> d2(3);
    round_to_q8(x.data(), 96, q2.data(), d2.data());
    CHECK(q2 == q);
    CHECK(d2 == d);
  }
  set_kernel_path(before);
  CHECK(d[1] == 0);
  for (int b = 0; b < 3; ++b) {
    double most = 0;
    for (int i = 0; i < 32; ++i) most = std::max(most, std::fabs(double(x[size_t(32 * b + i)])));
    CHECK(d[size_t(b)] == f16_to_float(float_to_f16(static_cast<float>(most / 127))));
    for (int i = 0; i < 32; ++i) {
      const size_t at = size_t(32 * b + i);
      CHECK(std::abs(int{q[at]}) <= 127);
      if (most > 0) CHECK(std::fabs(x[at] / (most / 127) - q[at]) <= 0.5 + 1e-5);
      if (x[at] == 0) CHECK(q[at] == 0);
    }
  }
}

TEST_CASE("q8 products: the plain loop's bits in every family, a row's bits alone or in a batch",
          "[math]") {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 1);
  const KernelPath before = kernel_path();
  for (const WeightType type :
       {WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_1, WeightType::kQ5_0,
        WeightType::kQ5_1, WeightType::kQ4_K, WeightType::kQ5_K, WeightType::kQ6_K}) {
    const bool super = block_shape(type).values == 256;
    for (const int K : super ? std::vector<int>{256, 768} : std::vector<int>{32, 96, 576, 288}) {
      for (const int N : {1, 5, 13, 300}) {
        for (const int M : {1, 2, 5, 9, 17}) {
          INFO("type " << static_cast<int>(type) << ", K " << K << ", N " << N << ", M " << M);
          const auto bytes = testing::random_blocks(type, size_t(N) * K, rng);
          const BlockRows B{type, bytes.data(), element_bytes(type, size_t(K))};
          std::vector<float> A(size_t(M) * K);
          for (float& x : A) x = normal(rng);
          std::vector<int8_t> q(A.size());
          std::vector<float> d(A.size() / 32);
          for (int i = 0; i < M; ++i) {
            round_to_q8(&A[size_t(i * K)], K, &q[size_t(i * K)], &d[size_t(i * K / 32)]);
          }
          std::vector<float> plain(size_t(M) * N);
          plain_q8_product(M, N, K, q.data(), d.data(), K, B, plain.data(), N);
          // Against float64 of the same integers and scales.
          std::vector<float> w(size_t(N) * K);
          widen_elements(type, bytes.data(), w.size(), w.data());
          for (int i = 0; i < M; ++i) {
            for (int j = 0; j < N; ++j) {
              double want = 0, size = 0;
              for (int k = 0; k < K; ++k) {
                const double term = double(w[size_t(j * K + k)]) * q[size_t(i * K + k)] *
                                    d[size_t(i * K / 32 + k / 32)];
                want += term;
                size += std::fabs(term);
              }
              CHECK(std::fabs(plain[size_t(i * N + j)] - want) <= 1e-5 * size + 1e-30);
            }
          }
          for (const KernelPath path : available_kernel_paths()) {
            set_kernel_path(path);
            std::vector<float> C(plain.size());
            q8_product(M, N, K, q.data(), d.data(), K, B, C.data(), N);
            CHECK(std::memcmp(C.data(), plain.data(), C.size() * sizeof(float)) == 0);
            for (int i = 0; i < M; ++i) {
              std::vector<float> one(static_cast<size_t>(N));
              q8_product(1, N, K, &q[size_t(i * K)], &d[size_t(i * K / 32)], K, B, one.data(), N);
              CHECK(std::memcmp(one.data(), &plain[size_t(i * N)], one.size() * sizeof(float)) ==
                    0);
            }
            if (path == KernelPath::kAvx512) {
              // Both of the AVX-512 family's kernels, whichever this CPU picks.
              avx512::q8_product(M, N, K, q.data(), d.data(), K, B, C.data(), N);
              CHECK(std::memcmp(C.data(), plain.data(), C.size() * sizeof(float)) == 0);
              if (__builtin_cpu_supports("avx512vnni")) {
                vnni::q8_product(M, N, K, q.data(), d.data(), K, B, C.data(), N);
                CHECK(std::memcmp(C.data(), plain.data(), C.size() * sizeof(float)) == 0);
              }
            }
          }
          set_kernel_path(before);
        }
      }
    }
  }
}

TEST_CASE("a block of activations that is not finite: scale NaN, values 0, in every family",
          "[math]") {
  const KernelPath before = kernel_path();
  for (const float bad :
       {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> x(64, 1.5f);
    x[40] = bad;
    for (const KernelPath path : available_kernel_paths()) {
      set_kernel_path(path);
      std::vector<int8_t> q(64, 7);
      std::vector<float> d(2);
      round_to_q8(x.data(), 64, q.data(), d.data());
      CHECK(d[0] == f16_to_float(float_to_f16(1.5f / 127)));
      CHECK(q[0] == 127);
      CHECK(std::isnan(d[1]));
      for (int i = 32; i < 64; ++i) CHECK(q[size_t(i)] == 0);
    }
  }
  set_kernel_path(before);
}
