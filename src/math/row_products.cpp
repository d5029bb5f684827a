#include "math/row_products.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/half_float.h"
#include "math/kernel_paths.h"
#include "math/kernels.h"
#include "math/layers.h"

namespace nextword {
namespace {

constexpr int kRowBlock = 4;          // rows that share each loaded row of B
constexpr int kColumnBlock = 64;      // columns of C kept in the accumulators
constexpr int kDotLanes = 16;         // partial sums of a dot product
constexpr int kStreamColumns = 1024;  // stream_nn: kRowBlock rows of C fit in L1 (16 KiB)
constexpr int kNarrowColumns = 256;   // narrow_row: one row of C in registers, a block at a time

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

// Columns [0, W) of one row of C = a B, their sums held in registers for
// all of K instead of read and written at every k as stream_nn does. Each
// element is the same sum, in the same order, as there.
template <int W>
[[gnu::always_inline]] NEXTWORD_HOT_LOOP inline void narrow_block(int K, const float* a,
                                                                  const float* B, int ldb,
                                                                  float* c) {
  float acc[W] = {};
  for (int k = 0; k < K; ++k) {
    const float ak = a[k];
    const float* b = B + area(k, ldb);
    for (int x = 0; x < W; ++x) acc[x] += ak * b[x];
  }
  std::copy_n(acc, W, c);
}

// One row of C = a B, N <= kNarrowColumns, in blocks of 32 columns, then 8,
// then one: worth it for the narrow products of a small model (a head's A V
// over d_v = 8 columns, 64- to 256-column projections).
NEXTWORD_HOT_LOOP NEXTWORD_VECTOR_CLONES void narrow_row(int N, int K, const float* a,
                                                         const float* B, int ldb, float* c) {
  int j = 0;
  for (; j + 32 <= N; j += 32) narrow_block<32>(K, a, B + j, ldb, c + j);
  for (; j + 8 <= N; j += 8) narrow_block<8>(K, a, B + j, ldb, c + j);
  for (; j < N; ++j) narrow_block<1>(K, a, B + j, ldb, c + j);
}

// Eight floats in one vector (GCC's and Clang's vector extension, so each
// clone below gets its own instructions: two SSE registers, one AVX one).
using Floats8 = float __attribute__((vector_size(32)));
using Mask8 = int32_t __attribute__((vector_size(32)));
static_assert(kDotLanes == 16, "a dot product's lanes are two Floats8");

// A vector of p[0..7] (by reference: a vector returned by value would
// change the calling convention between the clones).
inline void load8(Floats8& v, const float* p) { std::memcpy(&v, p, sizeof v); }

// sum += x[0..7] * y[0..7], lane by lane, and masked when `mask` is given.
inline void add_products(Floats8& sum, const float* x, const float* y, const Mask8* mask) {
  Floats8 u, v;
  load8(u, x);
  load8(v, y);
  Floats8 p = u * v;
  if (mask != nullptr) p = reinterpret_cast<Floats8>(reinterpret_cast<Mask8>(p) & *mask);
  sum += p;
}

// dots for K <= 8 (a small model's heads), eight rows of B at a time: the
// eight rows' products, masked past K, are summed across rows instead of
// one row's lanes after another (shuffles, not a reduction per row), in the
// order dots sums them: c = ((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7)),
// each p_l = +0 + a_l b_l (dots' high lanes add only +0, which changes
// nothing: a lane that starts at +0 is never -0). Returns the rows done: the
// blocks of eight whose reads stay inside B.
NEXTWORD_HOT_LOOP NEXTWORD_VECTOR_CLONES int eight_short_dots(const float* a, int N, int K,
                                                              const float* B, int ldb,
                                                              const Mask8& mask, float* c) {
  const size_t end_of_B = area(N - 1, ldb) + static_cast<size_t>(K);
  Floats8 x;
  load8(x, a);
  int j = 0;
  for (; j + 8 <= N && area(j + 7, ldb) + 8 <= end_of_B; j += 8) {
    Floats8 p[8];
    for (int r = 0; r < 8; ++r) {
      Floats8 row;
      load8(row, B + area(j + r, ldb));
      const Floats8 product = x * row;
      p[r] = Floats8{} + reinterpret_cast<Floats8>(reinterpret_cast<Mask8>(product) & mask);
    }
    // four_i = p_i + p_{i+4} of rows r and r + 1 side by side: [four(r) | four(r + 1)].
    Floats8 four[4];
    for (int r = 0; r < 4; ++r) {
      four[r] = __builtin_shufflevector(p[2 * r], p[2 * r + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
                __builtin_shufflevector(p[2 * r], p[2 * r + 1], 4, 5, 6, 7, 12, 13, 14, 15);
    }
    // (four_0 + four_2, four_1 + four_3) of rows 4h .. 4h + 3.
    Floats8 two[2];
    for (int h = 0; h < 2; ++h) {
      two[h] = __builtin_shufflevector(four[2 * h], four[2 * h + 1], 0, 1, 4, 5, 8, 9, 12, 13) +
               __builtin_shufflevector(four[2 * h], four[2 * h + 1], 2, 3, 6, 7, 10, 11, 14, 15);
    }
    const Floats8 sums = __builtin_shufflevector(two[0], two[1], 0, 2, 4, 6, 8, 10, 12, 14) +
                         __builtin_shufflevector(two[0], two[1], 1, 3, 5, 7, 9, 11, 13, 15);
    std::memcpy(c + j, &sums, sizeof sums);
  }
  return j;
}

// c[j] = a . B[j] for j in [0, N), each a dot product of K floats: lane l
// (of kDotLanes) sums the products at k = l, l + kDotLanes, ... in order, one
// rounded multiply and one rounded add at a time, and the lanes are then
// added halves first (lanes l and l + 8, then l and l + 4, ...). Lanes
// 0..7 and 8..15 are two vectors. The last K mod kDotLanes products are
// read whole and masked to +0 past K, which leaves a lane as it was (a lane
// that starts at +0 and adds products is never -0); a row whose masked read
// would pass the end of B sums them one at a time instead, the same sums.
// One call a row of A, not one an element: with K as small as an adaptive
// softmax cluster's 12, the call cost more than the sums.
NEXTWORD_HOT_LOOP NEXTWORD_VECTOR_CLONES void dots(const float* a_row, int N, int K, const float* B,
                                                   int ldb, float* c) {
  // a, zero-padded to whole lanes, so its tail is read whole too.
  thread_local std::vector<float> padded;
  const int whole = (K + kDotLanes - 1) / kDotLanes * kDotLanes;
  padded.assign(static_cast<size_t>(whole) + kDotLanes, 0.0f);
  std::copy_n(a_row, K, padded.begin());
  const float* a = padded.data();
  const int body = K / kDotLanes * kDotLanes, tail = K - body;
  Mask8 low_mask, high_mask;
  for (int l = 0; l < 8; ++l) {
    low_mask[l] = l < tail ? -1 : 0;
    high_mask[l] = l + 8 < tail ? -1 : 0;
  }
  // The rows whose tail read (16 floats from `body`) stays inside B.
  const size_t end_of_B = area(N - 1, ldb) + static_cast<size_t>(K);
  int j = K <= 8 ? eight_short_dots(a, N, K, B, ldb, low_mask, c) : 0;
  for (; j < N; ++j) {
    const float* row = B + area(j, ldb);
    Floats8 low = {}, high = {};
    for (int k = 0; k < body; k += kDotLanes) {
      add_products(low, a + k, row + k, nullptr);
      add_products(high, a + k + 8, row + k + 8, nullptr);
    }
    if (tail > 0 && area(j, ldb) + static_cast<size_t>(body + kDotLanes) <= end_of_B) {
      add_products(low, a + body, row + body, &low_mask);
      add_products(high, a + body + 8, row + body + 8, &high_mask);
    } else if (tail > 0) {
      float lane[kDotLanes];
      std::memcpy(lane, &low, sizeof low);
      std::memcpy(lane + 8, &high, sizeof high);
      for (int l = 0; l < tail; ++l) lane[l] += a[body + l] * row[body + l];
      load8(low, lane);
      load8(high, lane + 8);
    }
    const Floats8 eight = low + high;
    const float four[4] = {eight[0] + eight[4], eight[1] + eight[5], eight[2] + eight[6],
                           eight[3] + eight[7]};
    c[j] = (four[0] + four[2]) + (four[1] + four[3]);
  }
}

// The plain family: each element summed one rounded multiply and one rounded
// add at a time.
void plain_product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                   int ldc) {
  if (M == 1 && N <= kNarrowColumns) {
    narrow_row(N, K, A, B, ldb, C);
    return;
  }
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

void plain_product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                              float* C, int ldc) {
  for (int i = 0; i < M; ++i) dots(A + area(i, lda), N, K, B, ldb, C + area(i, ldc));
}

// rows x columns halves of B (rows ld apart) as floats, columns apart, in
// this thread's scratch: the plain family widens B first, then sums as for
// floats (widening is exact, so the bits are those of the floats' product).
NEXTWORD_VECTOR_CLONES const float* widened(int rows, int columns, const uint16_t* B, int ld) {
  float* out = kernel_scratch(area(rows, columns));
  for (int r = 0; r < rows; ++r) {
    const uint16_t* from = B + area(r, ld);
    float* to = out + area(r, columns);
    for (int x = 0; x < columns; ++x) to[x] = f16_to_float(from[x]);
  }
  return out;
}

void plain_product_halves(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb,
                          float* C, int ldc) {
  plain_product(M, N, K, A, lda, widened(K, N, B, ldb), N, C, ldc);
}

// The first n elements of row `row` of B (rows ld elements apart, or
// row_bytes for blocks) as floats at `to`, exactly (base/weight_elements.h).
void widen_row(const uint16_t* B, int ld, int row, int n, float* to) {
  f16_to_floats(reinterpret_cast<const char*>(B + area(row, ld)), static_cast<size_t>(n), to);
}
void widen_row(const Bf16* B, int ld, int row, int n, float* to) {
  bf16_to_floats(reinterpret_cast<const char*>(B + area(row, ld)), static_cast<size_t>(n), to);
}
void widen_row(const BlockRows& B, int, int row, int n, float* to) {
  widen_elements(B.type, static_cast<const char*>(B.rows) + area(row, 1) * B.row_bytes,
                 static_cast<size_t>(n), to);
}

// C = A B^T of B's rows in halves, bfloat16 or blocks: a stretch of B's rows
// at a time widened into this thread's scratch (so the whole of a large
// classifier is never widened at once), each row of A then summed against
// them as plain_product_transposed sums floats: each element is the same
// dot product of the same floats, whatever the stretch.
template <class P>
void plain_product_transposed_of(int M, int N, int K, const float* A, int lda, P B, int ldb,
                                 float* C, int ldc) {
  const int width = std::max(K, 1);
  const int stretch = std::max(8, 16384 / width);
  float* rows = kernel_scratch(area(std::min(stretch, N), width));
  for (int j = 0; j < N; j += stretch) {
    const int n = std::min(stretch, N - j);
    for (int r = 0; r < n; ++r) widen_row(B, ldb, j + r, K, rows + area(r, width));
    for (int i = 0; i < M; ++i) {
      dots(A + area(i, lda), n, K, rows, width, C + area(i, ldc) + static_cast<size_t>(j));
    }
  }
}

// Each family's products, for B in floats, halves, bfloat16 and blocks, in
// KernelPath's order.
template <class T>
using Product = void(int, int, int, const float*, int, const T*, int, float*, int);
struct Products {
  Product<float>* nn;
  Product<float>* nt;
  Product<uint16_t>* nn_halves;
  Product<uint16_t>* nt_halves;
  Product<Bf16>* nt_bf16;
  void (*nt_blocks)(int, int, int, const float*, int, const BlockRows&, float*, int);
};

void plain_product_transposed_blocks(int M, int N, int K, const float* A, int lda,
                                     const BlockRows& B, float* C, int ldc) {
  plain_product_transposed_of(M, N, K, A, lda, B, 0, C, ldc);
}
constexpr Products kFamilies[] = {
    {plain_product, plain_product_transposed, plain_product_halves,
     plain_product_transposed_of<const uint16_t*>, plain_product_transposed_of<const Bf16*>,
     plain_product_transposed_blocks},
    {avx2::product, avx2::product_transposed, avx2::product, avx2::product_transposed,
     avx2::product_transposed, avx2::product_transposed},
    {avx512::product, avx512::product_transposed, avx512::product, avx512::product_transposed,
     avx512::product_transposed, avx512::product_transposed}};
static_assert(static_cast<int>(KernelPath::kPlain) == 0 &&
              static_cast<int>(KernelPath::kAvx2) == 1 &&
              static_cast<int>(KernelPath::kAvx512) == 2);

const Products& in_force() { return kFamilies[static_cast<int>(kernel_path())]; }

}  // namespace

void row_product(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
                 int ldc) {
  in_force().nn(M, N, K, A, lda, B, ldb, C, ldc);
}

void row_product_transposed(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                            float* C, int ldc) {
  in_force().nt(M, N, K, A, lda, B, ldb, C, ldc);
}

void row_product(int M, int N, int K, const float* A, int lda, const uint16_t* B, int ldb, float* C,
                 int ldc) {
  in_force().nn_halves(M, N, K, A, lda, B, ldb, C, ldc);
}

void row_product_transposed(int M, int N, int K, const float* A, int lda, const uint16_t* B,
                            int ldb, float* C, int ldc) {
  in_force().nt_halves(M, N, K, A, lda, B, ldb, C, ldc);
}

void row_product_transposed(int M, int N, int K, const float* A, int lda, const Bf16* B, int ldb,
                            float* C, int ldc) {
  in_force().nt_bf16(M, N, K, A, lda, B, ldb, C, ldc);
}

void row_product_transposed(int M, int N, int K, const float* A, int lda, const BlockRows& B,
                            float* C, int ldc) {
  in_force().nt_blocks(M, N, K, A, lda, B, C, ldc);
}

}  // namespace nextword
