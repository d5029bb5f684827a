#include "math/row_products.h"

#include <algorithm>
#include <cstddef>

#include "math/kernels.h"
#include "math/layers.h"

// The sanitizer build leaves these two loops, nearly all of a prediction's
// work, out of AddressSanitizer's and UndefinedBehaviorSanitizer's checks: instrumented, they made
// the split tests of that build 15 times slower. Their bounds are those of the products above them,
// which the rest of the build checks.
#if defined(__clang__)
#define NEXTWORD_HOT_LOOP __attribute__((no_sanitize("address", "undefined")))
#else
#define NEXTWORD_HOT_LOOP
#endif

namespace nextword {
namespace {

constexpr int kRowBlock = 4;          // rows that share each loaded row of B
constexpr int kColumnBlock = 64;      // columns of C kept in the accumulators
constexpr int kDotLanes = 16;         // partial sums of a dot product
constexpr int kStreamColumns = 1024;  // stream_nn: kRowBlock rows of C fit in L1 (16 KiB)

// Rows [i, i + rows) and columns [j, j + width) of C = A B, rows <= kRowBlock,
// width <= kColumnBlock.
NEXTWORD_HOT_LOOP NEXTWORD_VECTOR_CLONES void block_nn(int rows, int width, int K, const float* A,
                                                       int lda, const float* B, int ldb, float* C,
                                                       int ldc) {
  float acc[kRowBlock][kColumnBlock] = {};
  if (width == kColumnBlock) {
    for (int k = 0; k < K; ++k) {
      const float* b = B + area(k, ldb);
      for (int r = 0; r < rows; ++r) {
        const float a = A[area(r, lda) + static_cast<size_t>(k)];
        for (int j = 0; j < kColumnBlock; ++j) acc[r][j] += a * b[j];
      }
    }
  } else {
    for (int k = 0; k < K; ++k) {
      const float* b = B + area(k, ldb);
      for (int r = 0; r < rows; ++r) {
        const float a = A[area(r, lda) + static_cast<size_t>(k)];
        for (int j = 0; j < width; ++j) acc[r][j] += a * b[j];
      }
    }
  }
  for (int r = 0; r < rows; ++r) std::copy_n(acc[r], width, C + area(r, ldc));
}

// Rows [0, rows) of C = A B, rows <= kRowBlock, all N columns at once: each
// row of B is read once, front to back, while C's rows stay in L1. For a few
// rows (a phrase, a word added to the key/value cache) the weights come cold
// from memory, and this order streams them where block_nn's column blocks
// jump a row of B at every step. Each element is the same sum as there.
NEXTWORD_HOT_LOOP NEXTWORD_VECTOR_CLONES void stream_nn(int rows, int N, int K, const float* A,
                                                        int lda, const float* B, int ldb, float* C,
                                                        int ldc) {
  for (int r = 0; r < rows; ++r) std::fill_n(C + area(r, ldc), N, 0.0f);
  for (int k = 0; k < K; ++k) {
    const float* b = B + area(k, ldb);
    for (int r = 0; r < rows; ++r) {
      const float a = A[area(r, lda) + static_cast<size_t>(k)];
      float* c = C + area(r, ldc);
      for (int j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}

// One dot product of n floats, in kDotLanes lanes then a fixed order.
NEXTWORD_HOT_LOOP NEXTWORD_VECTOR_CLONES float dot(const float* a, const float* b, int n) {
  float lane[kDotLanes] = {};
  int k = 0;
  for (; k + kDotLanes <= n; k += kDotLanes) {
    for (int l = 0; l < kDotLanes; ++l) lane[l] += a[k + l] * b[k + l];
  }
  for (int l = 0; k < n; ++k, ++l) lane[l] += a[k] * b[k];
  for (int width = kDotLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  }
  return lane[0];
}

}  // namespace

void row_product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                 int ldc) {
  if (M <= kRowBlock && N <= kStreamColumns) {
    stream_nn(M, N, K, A, lda, B, ldb, C, ldc);
    return;
  }
  for (int i = 0; i < M; i += kRowBlock) {
    const int rows = std::min(kRowBlock, M - i);
    for (int j = 0; j < N; j += kColumnBlock) {
      block_nn(rows, std::min(kColumnBlock, N - j), K, A + area(i, lda), lda, B + j, ldb,
               C + area(i, ldc) + static_cast<size_t>(j), ldc);
    }
  }
}

void row_product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                            float* C, int ldc) {
  for (int i = 0; i < M; ++i) {
    const float* a = A + area(i, lda);
    float* c = C + area(i, ldc);
    for (int j = 0; j < N; ++j) c[j] = dot(a, B + area(j, ldb), K);
  }
}

}  // namespace nextword
