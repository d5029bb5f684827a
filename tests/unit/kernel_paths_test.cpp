// The families of product kernels (math/kernel_paths.h): each one's order of
// sums, worked out here one element at a time, and the fused multiply-add
// that tells the fused families from the plain one.
#include "math/kernel_paths.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "base/half_float.h"
#include "base/weight_elements.h"
#include "math/layers.h"
#include "math/row_products.h"
#include "stored_weights.h"

using namespace nextword;

using testing::KernelPathScope;

namespace {

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

// A fused family's element of A B: one fma chain in the order of k.
float nn_by_hand(const float* a, const float* B, int ldb, int j, int K) {
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum = std::fma(a[k], B[area(k, ldb) + static_cast<size_t>(j)], sum);
  return sum;
}

// A fused family's element of A B^T: `lanes` fma chains (k mod lanes), added
// halves first.
float nt_by_hand(const float* a, const float* b, int K, int lanes) {
  std::vector<float> lane(static_cast<size_t>(lanes), 0.0f);
  for (int k = 0; k < K; ++k)
    lane[static_cast<size_t>(k % lanes)] =
        std::fma(a[k], b[k], lane[static_cast<size_t>(k % lanes)]);
  for (int width = lanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l)
      lane[static_cast<size_t>(l)] += lane[static_cast<size_t>(l + width)];
  }
  return lane[0];
}

}  // namespace

TEST_CASE("every CPU runs the plain family, and the names are the documented ones", "[math]") {
  const std::vector<KernelPath> paths = available_kernel_paths();
  REQUIRE(!paths.empty());
  CHECK(paths.front() == KernelPath::kPlain);
  CHECK(std::string(kernel_path_name(KernelPath::kPlain)) == "plain");
  CHECK(std::string(kernel_path_name(KernelPath::kAvx2)) == "avx2");
  CHECK(std::string(kernel_path_name(KernelPath::kAvx512)) == "avx512");
  // Unless NEXTWORD_KERNELS names a lower one, the best this CPU runs.
  if (std::getenv("NEXTWORD_KERNELS") == nullptr) CHECK(kernel_path() == paths.back());
}

TEST_CASE("the fused families sum each element in their documented order", "[math]") {
  std::mt19937 rng(37);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const KernelPath path : available_kernel_paths()) {
    if (path == KernelPath::kPlain) continue;  // layers_test.cpp works out its order
    const KernelPathScope scope(path);
    const int lanes = path == KernelPath::kAvx512 ? 16 : 8;
    for (int K = 1; K <= 40; ++K) {
      for (const int N : {1, 5, 8, 19, 33, 64, 130}) {
        INFO(kernel_path_name(path) << ", K " << K << ", N " << N);
        // Rows of both operands padded with NaN past their width: a read
        // past it would show.
        const int M = 7, lda = K + 2, ldb = N + 3, ldt = K + 3;
        std::vector<float> A(area(M, lda), std::nanf("")), B(area(K, ldb), std::nanf(""));
        std::vector<float> Bt(area(N, ldt), std::nanf(""));
        for (int i = 0; i < M; ++i) {
          for (int k = 0; k < K; ++k) A[area(i, lda) + static_cast<size_t>(k)] = normal(rng);
        }
        for (int k = 0; k < K; ++k) {
          for (int j = 0; j < N; ++j) {
            B[area(k, ldb) + static_cast<size_t>(j)] = Bt[area(j, ldt) + static_cast<size_t>(k)] =
                normal(rng);
          }
        }
        const int ldc = N + 1;
        std::vector<float> C(area(M, ldc), -7.0f), Ct(area(M, ldc), -7.0f);
        row_product(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc);
        row_product_transposed(M, N, K, A.data(), lda, Bt.data(), ldt, Ct.data(), ldc);
        for (int i = 0; i < M; ++i) {
          const float* a = A.data() + area(i, lda);
          for (int j = 0; j < N; ++j) {
            const size_t at = area(i, ldc) + static_cast<size_t>(j);
            REQUIRE(bits(C[at]) == bits(nn_by_hand(a, B.data(), ldb, j, K)));
            REQUIRE(bits(Ct[at]) == bits(nt_by_hand(a, Bt.data() + area(j, ldt), K, lanes)));
          }
          CHECK(C[area(i, ldc) + static_cast<size_t>(N)] == -7.0f);  // nothing written past N
          CHECK(Ct[area(i, ldc) + static_cast<size_t>(N)] == -7.0f);
        }
      }
    }
  }
}

TEST_CASE("the fused families round once per multiply-add, the plain one twice", "[math]") {
  // -(1 + 2^-11) + (1 + 2^-12)^2 = 2^-24 exactly: (1 + 2^-12)^2 = 1 + 2^-11 +
  // 2^-24 rounds to 1 + 2^-11 on its own (a tie, to even), so a separate
  // multiply and add give 0, a fused multiply-add 2^-24. Both products lie
  // in one lane: k = 0 and k = 16 (16 is a multiple of every family's lanes).
  const float x = 1.0f + std::ldexp(1.0f, -12);
  const int K = 17;
  std::vector<float> a(K, 0.0f), b(K, 0.0f);
  a[0] = -1.0f;
  b[0] = 1.0f + std::ldexp(1.0f, -11);
  a[16] = b[16] = x;
  for (const KernelPath path : available_kernel_paths()) {
    INFO(kernel_path_name(path));
    const KernelPathScope scope(path);
    const float expected = path == KernelPath::kPlain ? 0.0f : std::ldexp(1.0f, -24);
    float nn = -1.0f, nt = -1.0f;
    row_product(1, 1, K, a.data(), K, b.data(), 1, &nn, 1);
    row_product_transposed(1, 1, K, a.data(), K, b.data(), K, &nt, 1);
    CHECK(nn == expected);
    CHECK(nt == expected);
  }
}

TEST_CASE("every family's products of halves are the bits of the products of their floats",
          "[math]") {
  // B's halves widened exactly in registers (or, in the plain family, first):
  // each element the same sum as with B widened before the product. Shapes
  // that reach every path: one row, two rows of a B over 512 KiB (streamed),
  // blocks of rows, twelve and more over a large B (copied in panels), and
  // tails of every width.
  std::mt19937 rng(50);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  struct Shape {
    int M, N, K;
  };
  const Shape shapes[] = {{1, 1, 1},      {1, 37, 29},   {2, 70, 17},   {3, 19, 40},
                          {7, 130, 33},   {13, 64, 192}, {1, 900, 300}, {2, 1000, 300},
                          {14, 700, 400}, {5, 4096, 12}};
  for (const KernelPath path : available_kernel_paths()) {
    const KernelPathScope scope(path);
    for (const Shape& s : shapes) {
      INFO(kernel_path_name(path) << ", M " << s.M << ", N " << s.N << ", K " << s.K);
      const int lda = s.K + 1, ldb = s.N + 3, ldt = s.K + 5, ldc = s.N + 1;
      std::vector<float> A(area(s.M, lda));
      for (float& x : A) x = normal(rng);
      // B [K, N] and B^T [N, K] in halves, with the floats they widen to.
      std::vector<uint16_t> B(area(s.K, ldb)), Bt(area(s.N, ldt));
      std::vector<float> Bf(B.size()), Btf(Bt.size());
      for (size_t i = 0; i < B.size(); ++i) Bf[i] = f16_to_float(B[i] = float_to_f16(normal(rng)));
      for (size_t i = 0; i < Bt.size(); ++i) {
        Btf[i] = f16_to_float(Bt[i] = float_to_f16(normal(rng)));
      }
      std::vector<float> C(area(s.M, ldc), -7.0f), Cf = C, Ct = C, Ctf = C;
      row_product(s.M, s.N, s.K, A.data(), lda, B.data(), ldb, C.data(), ldc);
      row_product(s.M, s.N, s.K, A.data(), lda, Bf.data(), ldb, Cf.data(), ldc);
      row_product_transposed(s.M, s.N, s.K, A.data(), lda, Bt.data(), ldt, Ct.data(), ldc);
      row_product_transposed(s.M, s.N, s.K, A.data(), lda, Btf.data(), ldt, Ctf.data(), ldc);
      REQUIRE(std::memcmp(C.data(), Cf.data(), C.size() * sizeof(float)) == 0);
      REQUIRE(std::memcmp(Ct.data(), Ctf.data(), Ct.size() * sizeof(float)) == 0);
      CHECK(C[area(0, ldc) + static_cast<size_t>(s.N)] == -7.0f);  // nothing written past N
    }
  }
}

TEST_CASE(
    "every family's transposed products of bfloat16 rows are the bits of the "
    "products of their floats",
    "[math]") {
  // B's rows read in place, widened in registers (its bits shifted up) or,
  // in the plain family, a stretch of rows first: each element the same sum
  // as with B widened before the product. K of every tail, rows of B
  // further apart than K, N past a stretch of rows, A of one row and of
  // blocks of rows. (ggml's blocks: block_products_test.cpp.)
  std::mt19937 rng(51);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  struct Shape {
    int M, N, K;
  };
  const Shape shapes[] = {{1, 1, 1},     {1, 37, 29},   {2, 70, 17},   {3, 19, 40},
                          {7, 130, 33},  {13, 64, 192}, {1, 900, 300}, {4, 1100, 64},
                          {5, 4096, 12}, {6, 4200, 32}};
  for (const KernelPath path : available_kernel_paths()) {
    const KernelPathScope scope(path);
    for (const Shape& s : shapes) {
      INFO(kernel_path_name(path) << ", M " << s.M << ", N " << s.N << ", K " << s.K);
      const int lda = s.K + 1, ldc = s.N + 1;
      std::vector<float> A(area(s.M, lda));
      for (float& x : A) x = normal(rng);
      // Bfloat16 rows of K, ldt apart, NaN between them (a read past K
      // would show), and the floats they widen to.
      const int ldt = s.K + 5;
      std::vector<Bf16> B(area(s.N, ldt));
      std::vector<float> Bf(B.size());
      for (size_t i = 0; i < B.size(); ++i) {
        B[i].bits = static_cast<int>(i % static_cast<size_t>(ldt)) < s.K
                        ? float_to_bf16(normal(rng))
                        : uint16_t{0x7fc0};
        Bf[i] = bf16_to_float(B[i].bits);
      }
      std::vector<float> C(area(s.M, ldc), -7.0f), Cf = C;
      row_product_transposed(s.M, s.N, s.K, A.data(), lda, B.data(), ldt, C.data(), ldc);
      row_product_transposed(s.M, s.N, s.K, A.data(), lda, Bf.data(), ldt, Cf.data(), ldc);
      REQUIRE(std::memcmp(C.data(), Cf.data(), C.size() * sizeof(float)) == 0);
      CHECK(C[area(0, ldc) + static_cast<size_t>(s.N)] == -7.0f);  // nothing written past N
      CHECK(std::isfinite(C[0]));                                  // written, nothing past K read
    }
  }
}
