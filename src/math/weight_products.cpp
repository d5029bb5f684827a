#include "math/weight_products.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
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

void weight_product(bool transpose_B, int M, int N, int K, const float* A, int lda, WeightView B,
                    int ldb, float* C, int ldc) {
  if (!fixed_row_blocks()) {
    training_product(false, transpose_B, M, N, K, A, lda, B, ldb, 0.0f, C, ldc);
    return;
  }
  // A matrix held as rows of outputs (a GGUF file's [out, in]) is the
  // transposed product of its rows: B [K, N] is N rows of K. Rows of words
  // ([N, K], the embedding and classifier of a GGUF file) are read as they
  // lie by the transposed product they already are.
  const void* elements = B.halves();
  WeightType type = WeightType::kF16;
  if (B.rows() != nullptr && B.output_rows() != transpose_B) {
    transpose_B = true;
    ldb = static_cast<int>(B.row_length());
    elements = B.rows();
    type = B.type();
  }
  const float* floats = elements == nullptr ? static_cast<const float*>(B) : nullptr;
  // Rows [row, row_end) and columns [column, column_end) of C: each element
  // is the same chain of sums whichever block computes it.
  auto block = [&](int row, int row_end, int column, int column_end) {
    if (row >= row_end || column >= column_end) return;
    const float* a = A + area(row, lda);
    float* c = C + area(row, ldc) + column;
    const int m = row_end - row, n = column_end - column;
    auto product = [&](const auto* b) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(b)>>;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, uint16_t>) {
        if (!transpose_B) return row_product(m, n, K, a, lda, b + column, ldb, c, ldc);
      }
      // Column j of C is row j of B.
      row_product_transposed(m, n, K, a, lda, b + area(column, ldb), ldb, c, ldc);
    };
    if (floats != nullptr) return product(floats);
    switch (type) {
      case WeightType::kF32: return product(static_cast<const float*>(elements));
      case WeightType::kF16: return product(static_cast<const uint16_t*>(elements));
      case WeightType::kBF16: return product(static_cast<const Bf16*>(elements));
      default: {
        const size_t row_bytes = element_bytes(type, static_cast<size_t>(ldb));
        const BlockRows rows{type, static_cast<const char*>(elements) + area(column, 1) * row_bytes,
                             row_bytes};
        if (q8_activations() && q8_type(type)) {
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
  };
  const double work = static_cast<double>(M) * N * K;
  if (!rows_split() || work < (M <= kColumnSplitRows ? kParallelRow : kParallelProduct) ||
      omp_in_parallel()) {
    block(0, M, 0, N);
    return;
  }
  if (M > kColumnSplitRows) {
    on_thread_rows(M, [&](int begin, int end) { block(begin, end, 0, N); });
    return;
  }
  // Few rows (one: generation's next piece): the threads share the columns,
  // in whole blocks of kColumnBlock.
  const int blocks = (N + kColumnBlock - 1) / kColumnBlock;
  on_thread_rows(blocks, [&](int begin, int end) {
    block(0, M, begin * kColumnBlock, std::min(end * kColumnBlock, N));
  });
}

}  // namespace nextword
