#include "math/weight_products.h"

#include <omp.h>

#include <cstdint>
#include <type_traits>

#include "base/threading.h"
#include "math/kernels.h"
#include "math/layers.h"
#include "math/row_products.h"
#include "math/training_products.h"

namespace nextword {
namespace {

// Products smaller than this (multiply-adds) run on one thread.
constexpr double kParallelProduct = 1 << 21;

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
  auto rows = [&](int begin, int end) {
    if (begin >= end) return;
    const float* a = A + area(begin, lda);
    float* c = C + area(begin, ldc);
    auto product = [&](const auto* b) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(b)>>;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, uint16_t>) {
        if (!transpose_B) return row_product(end - begin, N, K, a, lda, b, ldb, c, ldc);
      }
      row_product_transposed(end - begin, N, K, a, lda, b, ldb, c, ldc);
    };
    if (floats != nullptr) return product(floats);
    switch (type) {
      case WeightType::kF32: return product(static_cast<const float*>(elements));
      case WeightType::kF16: return product(static_cast<const uint16_t*>(elements));
      case WeightType::kBF16: return product(static_cast<const Bf16*>(elements));
      case WeightType::kQ8_0: return product(static_cast<const BlockQ8_0*>(elements));
    }
  };
  const double work = static_cast<double>(M) * N * K;
  if (!rows_split() || M < 2 || work < kParallelProduct || omp_in_parallel()) {
    rows(0, M);
    return;
  }
  on_thread_rows(M, rows);
}

}  // namespace nextword
