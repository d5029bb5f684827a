// The fused families' products (math/kernel_paths.h), written once over an
// instruction set's vector of floats S (fused_avx2.cpp, fused_avx512.cpp),
// each built for its own instructions. Everything here is in an anonymous
// namespace: each of those files gets its own copy, in its own instructions,
// and the linker cannot merge one family's inline code into another's.
//
// S gives: V, a vector of kLanes floats; Mask, the first n lanes of one;
// zero, broadcast, load, store (whole or masked: a masked load reads
// nothing past the mask and gives +0 there; B's loads read floats or IEEE
// halves, const uint16_t*, and the transposed product's also bfloat16,
// const Bf16*, each widened exactly in registers (base/weight_elements.h),
// so a product of them is the same bits as the product of their floats;
// ggml's blocks are math/block_kernels.h's), fma(a, b, c) = a b + c rounded once; sum(v),
// the lanes added halves first (lane l + lane l + kLanes/2, and so on down
// to one), and sum4, four vectors' sums, the same additions, side by side;
// kRows and width<R>(), the register block of product: R rows of C by
// width<R>() vectors of columns; kDotRows, the rows of A that
// product_transposed takes together (by four rows of B; a single row of A
// by eight).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "base/weight_elements.h"
#include "math/kernel_paths.h"  // NEXTWORD_HOT_LOOP

namespace nextword {
namespace {

// What the kernels' innermost loops call, the instruction sets' vector
// operations included: always inlined and, like those loops, outside the
// sanitizers (clang inlines nothing instrumented into a function that is not:
// each fma would be a call in the sanitizer build).
#define NEXTWORD_VECTOR_OP [[gnu::always_inline]] NEXTWORD_HOT_LOOP inline

// math/layers.h's area(), again: an inline function of another header, built
// here for AVX-512, could be the copy the linker keeps for the whole program.
NEXTWORD_VECTOR_OP constexpr size_t offset(int row, int ld) {
  return static_cast<size_t>(row) * static_cast<size_t>(ld);
}
NEXTWORD_VECTOR_OP constexpr int smaller(int a, int b) { return a < b ? a : b; }

// Every sum of a register block at +0.
template <class S, int R, int W>
NEXTWORD_VECTOR_OP void zero_sums(typename S::V (&acc)[R][W]) {
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int w = 0; w < W; ++w) acc[r][w] = S::zero();
  }
}

// ---- C = A B: element (i, j) = fma(A[i, K-1], B[K-1, j], ... fma(A[i, 0],
// B[0, j], 0)), one chain in the order of k whatever block computes it.

// Rows [0, R) and columns [0, W kLanes) of C = A B; with Masked, the last
// vector's lanes past `last` are neither read nor written.
template <class S, int R, int W, bool Masked, class T>
[[gnu::always_inline]] NEXTWORD_HOT_LOOP inline void nn_block(int K, const float* A, int lda,
                                                              const T* B, int ldb, float* C,
                                                              int ldc, typename S::Mask last) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  V acc[R][W];
  zero_sums<S>(acc);
  for (int k = 0; k < K; ++k) {
    const T* b = B + offset(k, ldb);
    V bv[W];
#pragma GCC unroll 16
    for (int w = 0; w < W; ++w) {
      bv[w] = Masked && w == W - 1 ? S::load(b + w * L, last) : S::load(b + w * L);
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const V a = S::broadcast(A[offset(r, lda) + static_cast<size_t>(k)]);
#pragma GCC unroll 16
      for (int w = 0; w < W; ++w) acc[r][w] = S::fma(a, bv[w], acc[r][w]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int w = 0; w < W; ++w) {
      float* c = C + offset(r, ldc) + w * L;
      if (Masked && w == W - 1) {
        S::store(c, acc[r][w], last);
      } else {
        S::store(c, acc[r][w]);
      }
    }
  }
}

// Rows [0, R) of C = A B, columns [0, n) with n < W kLanes: one block of as
// many vectors as they need, the last one masked when n is not whole
// vectors, so that their chains of sums run side by side (one vector at a
// time, a row's chain would wait on each fma's latency, slower than the
// plain loops).
template <class S, int R, int W, class T>
NEXTWORD_HOT_LOOP void nn_rest(int n, int K, const float* A, int lda, const T* B, int ldb, float* C,
                               int ldc) {
  constexpr int L = S::kLanes;
  if constexpr (W > 1) {
    if (n <= (W - 1) * L) {
      nn_rest<S, R, W - 1>(n, K, A, lda, B, ldb, C, ldc);
      return;
    }
  }
  if (n == W * L) {
    nn_block<S, R, W, false>(K, A, lda, B, ldb, C, ldc, S::first(L));
  } else {
    nn_block<S, R, W, true>(K, A, lda, B, ldb, C, ldc, S::first(n - (W - 1) * L));
  }
}

// Rows [0, R) of C = A B, all N columns: blocks of width<R>() vectors, then
// the rest in one block.
template <class S, int R, class T>
NEXTWORD_HOT_LOOP void nn_rows(int N, int K, const float* A, int lda, const T* B, int ldb, float* C,
                               int ldc) {
  constexpr int L = S::kLanes, W = S::template width<R>();
  int j = 0;
  for (; j + W * L <= N; j += W * L) {
    nn_block<S, R, W, false>(K, A, lda, B + j, ldb, C + j, ldc, S::first(L));
  }
  if (j < N) nn_rest<S, R, W>(N - j, K, A, lda, B + j, ldb, C + j, ldc);
}

template <class S, int R = S::kRows, class T>
void nn_few_rows(int rows, int N, int K, const float* A, int lda, const T* B, int ldb, float* C,
                 int ldc) {
  if constexpr (R > 1) {
    if (rows < R) {
      nn_few_rows<S, R - 1>(rows, N, K, A, lda, B, ldb, C, ldc);
      return;
    }
  }
  nn_rows<S, R>(N, K, A, lda, B, ldb, C, ldc);
}

// One or two rows of C = A B, B too large for the caches: each row of B read
// once, front to back, while C's rows, in L1, take fma(a_k, B[k, j], C[i, j])
// at every k: the same chains as nn_block's, kept in memory, not registers.
template <class S, class T>
NEXTWORD_HOT_LOOP void nn_stream(int rows, int N, int K, const float* A, int lda, const T* B,
                                 int ldb, float* C, int ldc) {
  constexpr int L = S::kLanes;
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < N; ++j) C[offset(r, ldc) + static_cast<size_t>(j)] = 0.0f;
  }
  const typename S::Mask tail = S::first(N % L);
  for (int k = 0; k < K; ++k) {
    const T* b = B + offset(k, ldb);
    for (int r = 0; r < rows; ++r) {
      const typename S::V a = S::broadcast(A[offset(r, lda) + static_cast<size_t>(k)]);
      float* c = C + offset(r, ldc);
      int j = 0;
      for (; j + L <= N; j += L) S::store(c + j, S::fma(a, S::load(b + j), S::load(c + j)));
      if (j < N) S::store(c + j, S::fma(a, S::load(b + j, tail), S::load(c + j, tail)), tail);
    }
  }
}

// n elements of B as floats at `to`, a vector at a time (halves widened).
template <class S, class T>
NEXTWORD_VECTOR_OP void copy_floats(const T* from, int n, float* to) {
  constexpr int L = S::kLanes;
  int x = 0;
  for (; x + L <= n; x += L) S::store(to + x, S::load(from + x));
  if (x < n) S::store(to + x, S::load(from + x, S::first(n - x)), S::first(n - x));
}

// Columns in panels of kPanel, rows in blocks of kRows under each: the
// panel's K rows of B stay in cache while every row of A passes under them.
// With many rows and a B larger than L2, the panel is first copied together
// as floats (kernel_scratch): read in place, its K rows lie on pages of
// their own, and the TLB's misses halved the speed; halves are widened
// there once, not once per block of rows.
template <class S, class T>
void fused_product(int M, int N, int K, const float* A, int lda, const T* B, int ldb, float* C,
                   int ldc) {
  constexpr int kPanel = S::template width<S::kRows>() * S::kLanes;
  constexpr size_t kCachedB = size_t{1} << 19;  // bytes of B that stay in L2
  const size_t bytes_of_B = offset(K, ldb) * sizeof(T);
  if (M <= 2 && bytes_of_B > kCachedB) {
    nn_stream<S>(M, N, K, A, lda, B, ldb, C, ldc);
    return;
  }
  if (M <= S::kRows) {
    nn_few_rows<S>(M, N, K, A, lda, B, ldb, C, ldc);
    return;
  }
  if (M >= 2 * S::kRows && bytes_of_B > kCachedB) {
    float* panel = kernel_scratch(offset(K, kPanel));
    for (int j = 0; j < N; j += kPanel) {
      const int width = smaller(kPanel, N - j);
      for (int k = 0; k < K; ++k)
        copy_floats<S>(B + offset(k, ldb) + j, width, panel + offset(k, width));
      for (int i = 0; i < M; i += S::kRows) {
        nn_few_rows<S>(smaller(S::kRows, M - i), width, K, A + offset(i, lda), lda,
                       static_cast<const float*>(panel), width,
                       C + offset(i, ldc) + static_cast<size_t>(j), ldc);
      }
    }
    return;
  }
  for (int j = 0; j < N; j += kPanel) {
    const int width = smaller(kPanel, N - j);
    for (int i = 0; i < M; i += S::kRows) {
      nn_few_rows<S>(smaller(S::kRows, M - i), width, K, A + offset(i, lda), lda, B + j, ldb,
                     C + offset(i, ldc) + static_cast<size_t>(j), ldc);
    }
  }
}

// ---- C = A B^T: element (i, j) = sum(lanes), lane l the chain of fmas of
// the products at k = l, l + kLanes, ... in order (the last vector masked:
// its lanes past K add fma(+0, +0, lane)), whatever block computes it.

// acc[r][s] = fma(A[r, 0 .. kLanes), B[s, 0 .. kLanes), acc[r][s]), lane by
// lane; with Masked, lanes past `tail` are read as +0 (nothing past it is read).
template <class S, int RA, int RB, bool Masked, class P>
[[gnu::always_inline]] NEXTWORD_HOT_LOOP inline void nt_step(typename S::V (&acc)[RA][RB],
                                                             const float* A, int lda, P B, int ldb,
                                                             typename S::Mask tail) {
  using V = typename S::V;
  V a[RA];
#pragma GCC unroll 16
  for (int r = 0; r < RA; ++r) {
    a[r] = Masked ? S::load(A + offset(r, lda), tail) : S::load(A + offset(r, lda));
  }
#pragma GCC unroll 16
  for (int s = 0; s < RB; ++s) {
    if constexpr (RA == 1) {
      // One row of A reads B from memory: the row after next on its way.
      _mm_prefetch(reinterpret_cast<const char*>(B + offset(s + 2, ldb)), _MM_HINT_T0);
    }
    const V b = Masked ? S::load(B + offset(s, ldb), tail) : S::load(B + offset(s, ldb));
#pragma GCC unroll 16
    for (int r = 0; r < RA; ++r) acc[r][s] = S::fma(a[r], b, acc[r][s]);
  }
}

// C[r, s] = the sum of acc[r][s]'s lanes, for RB 1 or a multiple of 4
// (sum4 adds as sum does, four vectors side by side).
template <class S, int RA, int RB>
NEXTWORD_VECTOR_OP void store_sums(typename S::V (&acc)[RA][RB], float* C, int ldc) {
#pragma GCC unroll 16
  for (int r = 0; r < RA; ++r) {
    float* c = C + offset(r, ldc);
    if constexpr (RB % 4 == 0) {
#pragma GCC unroll 4
      for (int s = 0; s < RB; s += 4) {
        S::sum4(acc[r][s], acc[r][s + 1], acc[r][s + 2], acc[r][s + 3], c + s);
      }
    } else {
#pragma GCC unroll 16
      for (int s = 0; s < RB; ++s) c[s] = S::sum(acc[r][s]);
    }
  }
}

// Rows [0, RA) of A by rows [0, RB) of B, RB 1 or a multiple of 4.
template <class S, int RA, int RB, class P>
[[gnu::always_inline]] NEXTWORD_HOT_LOOP inline void nt_block(int K, const float* A, int lda, P B,
                                                              int ldb, float* C, int ldc) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  V acc[RA][RB];
  zero_sums<S>(acc);
  int k = 0;
  for (; k + L <= K; k += L) {
    nt_step<S, RA, RB, false>(acc, A + k, lda, B + k, ldb, S::first(L));
  }
  if (k < K) nt_step<S, RA, RB, true>(acc, A + k, lda, B + k, ldb, S::first(K - k));
  store_sums<S>(acc, C, ldc);
}

template <class S, int RA, class P>
NEXTWORD_HOT_LOOP void nt_rows(int N, int K, const float* A, int lda, P B, int ldb, float* C,
                               int ldc) {
  // One row of A takes B's rows one at a time: a single stream from memory
  // with the row after next prefetched (F16 generation on SmolLM2's shape
  // 77 -> 119 pieces/s, against eight rows side by side).
  constexpr int RB = RA == 1 ? 1 : 4;
  int j = 0;
  for (; j + RB <= N; j += RB) nt_block<S, RA, RB>(K, A, lda, B + offset(j, ldb), ldb, C + j, ldc);
  for (; j < N; ++j) nt_block<S, RA, 1>(K, A, lda, B + offset(j, ldb), ldb, C + j, ldc);
}

// Rows of A from this many on meet B's rows widened into floats once per
// stretch (halves, bfloat16, ggml's blocks), not in registers once per group
// of rows of A.
constexpr int kWidenedRows = 8;

// B in stretches of about 128 KiB of its rows, each met by every row of A
// while it is in cache.
template <class S, class P>
void fused_product_transposed(int M, int N, int K, const float* A, int lda, const P* B, int ldb,
                              float* C, int ldc) {
  constexpr int RA = S::kDotRows;
  constexpr bool kFloats = std::is_same_v<P, float>;
  const bool widen = !kFloats && M >= kWidenedRows;
  const size_t row_bytes =
      (widen ? sizeof(float) : sizeof(*B)) * static_cast<size_t>(K > 0 ? K : 1);
  const int stretch = smaller(N, static_cast<int>(131072 / row_bytes) / 4 * 4 + 4);
  for (int j = 0; j < N; j += stretch) {
    const int n = smaller(stretch, N - j);
    const P* b = B + offset(j, ldb);
    if constexpr (!kFloats) {
      // Many rows of A: the stretch widened into floats once (exactly), not
      // once per group of rows; the same sums over the same floats.
      if (widen) {
        float* rows = kernel_scratch(offset(n, K));
        for (int r = 0; r < n; ++r) copy_floats<S>(b + offset(r, ldb), K, rows + offset(r, K));
        fused_product_transposed<S>(M, n, K, A, lda, static_cast<const float*>(rows), K, C + j,
                                    ldc);
        continue;
      }
    }
    int i = 0;
    for (; i + RA <= M; i += RA) {
      nt_rows<S, RA>(n, K, A + offset(i, lda), lda, b, ldb, C + offset(i, ldc) + j, ldc);
    }
    // Two rows left meet B's rows once, not once each.
    for (; RA > 2 && i + 2 <= M; i += 2) {
      nt_rows<S, 2>(n, K, A + offset(i, lda), lda, b, ldb, C + offset(i, ldc) + j, ldc);
    }
    for (; i < M; ++i)
      nt_rows<S, 1>(n, K, A + offset(i, lda), lda, b, ldb, C + offset(i, ldc) + j, ldc);
  }
}

}  // namespace
}  // namespace nextword
