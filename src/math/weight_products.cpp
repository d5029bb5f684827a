#include "math/weight_products.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "base/threading.h"
#include "math/kernels.h"
#include "math/layers.h"
#include "math/q8_activations.h"
#include "math/row_products.h"
#include "math/training_products.h"

namespace nextword {
namespace {

// Products smaller than this (multiply-adds) run on one thread.
constexpr double kParallelProduct = 1 << 21;
// A product of few rows is split among the threads in blocks of this many
// columns (a multiple of every family's vector), from this much work on: a
// row reads the whole matrix once, so sharing it pays sooner than rows do.
constexpr int kColumnBlock = 64;
constexpr double kParallelRow = 1 << 16;
// Up to this many rows the threads share the columns too: each then widens
// (or reads) only its part of the matrix, where a share of the rows would
// widen the whole of it (the word search's 16 partial words, a short prompt).
constexpr int kColumnSplitRows = 32;

}  // namespace

namespace {

// One product C = A op(B) as weight_product takes it, cut into blocks:
// rows [row, row_end) and columns [column, column_end) of C, each element
// the same chain of sums whichever block computes it.
class BlockedProduct {
 public:
  BlockedProduct(bool transpose_B, int N, int K, const float* A, int lda, WeightView B, int ldb,
                 float* C, int ldc)
      : transpose_B_(transpose_B), N_(N), K_(K), A_(A), lda_(lda), ldb_(ldb), C_(C), ldc_(ldc) {
    // A matrix held as rows of outputs (a GGUF file's [out, in]) is the
    // transposed product of its rows: B [K, N] is N rows of K. Rows of words
    // ([N, K], the embedding and classifier of a GGUF file) are read as they
    // lie by the transposed product they already are.
    elements_ = B.halves();
    if (B.rows() != nullptr && B.output_rows() != transpose_B) {
      transpose_B_ = true;
      ldb_ = static_cast<int>(B.row_length());
      elements_ = B.rows();
      type_ = B.type();
    }
    floats_ = elements_ == nullptr ? static_cast<const float*>(B) : nullptr;
  }

  int columns() const { return N_; }

  void block(int row, int row_end, int column, int column_end) const {
    if (row >= row_end || column >= column_end) return;
    const float* a = A_ + area(row, lda_);
    float* c = C_ + area(row, ldc_) + column;
    const int m = row_end - row, n = column_end - column, K = K_, lda = lda_, ldb = ldb_,
              ldc = ldc_;
    auto product = [&](const auto* b) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(b)>>;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, uint16_t>) {
        if (!transpose_B_) return row_product(m, n, K, a, lda, b + column, ldb, c, ldc);
      }
      // Column j of C is row j of B.
      row_product_transposed(m, n, K, a, lda, b + area(column, ldb), ldb, c, ldc);
    };
    if (floats_ != nullptr) return product(floats_);
    switch (type_) {
      case WeightType::kF32: return product(static_cast<const float*>(elements_));
      case WeightType::kF16: return product(static_cast<const uint16_t*>(elements_));
      case WeightType::kBF16: return product(static_cast<const Bf16*>(elements_));
      default: {
        const size_t row_bytes = element_bytes(type_, static_cast<size_t>(ldb));
        const BlockRows rows{
            type_, static_cast<const char*>(elements_) + area(column, 1) * row_bytes, row_bytes};
        if (q8_activations() && q8_type(type_)) {
          // This block's rows of A rounded to 8 bits (the same bits in
          // whichever block rounds them).
          thread_local std::vector<int8_t> q;
          thread_local std::vector<float> d;
          q.resize(area(m, K));
          d.resize(area(m, K / 32));
          for (int i = 0; i < m; ++i) {
            round_to_q8(a + area(i, lda), K, q.data() + area(i, K), d.data() + area(i, K / 32));
          }
          return q8_product(m, n, K, q.data(), d.data(), K, rows, c, ldc);
        }
        return row_product_transposed(m, n, K, a, lda, rows, c, ldc);
      }
    }
  }

 private:
  bool transpose_B_;
  int N_, K_;
  const float* A_;
  int lda_, ldb_;
  float* C_;
  int ldc_;
  const void* elements_ = nullptr;
  WeightType type_ = WeightType::kF16;
  const float* floats_ = nullptr;
};

// Whether a product of M rows and this much work runs on the calling
// thread alone.
bool one_thread(int M, double work) {
  return !rows_split() || work < (M <= kColumnSplitRows ? kParallelRow : kParallelProduct) ||
         omp_in_parallel();
}

}  // namespace

void weight_product(bool transpose_B, int M, int N, int K, const float* A, int lda, WeightView B,
                    int ldb, float* C, int ldc) {
  if (!fixed_row_blocks()) {
    training_product(false, transpose_B, M, N, K, A, lda, B, ldb, 0.0f, C, ldc);
    return;
  }
  const BlockedProduct product(transpose_B, N, K, A, lda, B, ldb, C, ldc);
  if (one_thread(M, static_cast<double>(M) * N * K)) {
    product.block(0, M, 0, N);
    return;
  }
  if (M > kColumnSplitRows) {
    on_thread_rows(M, [&](int begin, int end) { product.block(begin, end, 0, N); });
    return;
  }
  // Few rows (one: generation's next piece): the threads share the columns,
  // in whole blocks of kColumnBlock.
  const int blocks = (N + kColumnBlock - 1) / kColumnBlock;
  on_thread_rows(blocks, [&](int begin, int end) {
    product.block(0, M, begin * kColumnBlock, std::min(end * kColumnBlock, N));
  });
}

void weight_products(int M, int K, const float* A, int lda, std::span<const WeightPart> parts) {
  double work = 0;
  for (const WeightPart& part : parts) work += static_cast<double>(M) * part.N * K;
  if (!fixed_row_blocks() || M > kColumnSplitRows || one_thread(M, work)) {
    for (const WeightPart& part : parts) {
      weight_product(false, M, part.N, K, A, lda, part.B, part.N, part.C, part.ldc);
    }
    return;
  }
  // The parts' blocks of kColumnBlock columns one after another, shared
  // among the threads in one parallel region.
  std::vector<BlockedProduct> products;
  std::vector<int> first_block{0};
  for (const WeightPart& part : parts) {
    products.emplace_back(false, part.N, K, A, lda, part.B, part.N, part.C, part.ldc);
    first_block.push_back(first_block.back() + (part.N + kColumnBlock - 1) / kColumnBlock);
  }
  on_thread_rows(first_block.back(), [&](int begin, int end) {
    for (size_t p = 0; p < products.size(); ++p) {
      const int from = std::max(begin, first_block[p]) - first_block[p];
      const int to = std::min(end, first_block[p + 1]) - first_block[p];
      if (from >= to) continue;
      const int N = products[p].columns();
      products[p].block(0, M, from * kColumnBlock, std::min(to * kColumnBlock, N));
    }
  });
}

}  // namespace nextword
