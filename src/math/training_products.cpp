#include "math/training_products.h"

#include <cblas.h>

#ifndef NEXTWORD_DNNL
#define NEXTWORD_DNNL 0  // built without oneDNN: float32 only
#endif

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if NEXTWORD_DNNL
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#endif

#include "math/kernels.h"
#include "math/layers.h"

namespace nextword {
namespace {

Precision precision = Precision::kFloat32;

void sgemm(bool transpose_a, bool transpose_b, int M, int N, int K, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
}

#if NEXTWORD_DNNL
using dnnl::memory;

// bfloat16 of x, rounded to nearest even (every value training sees is finite).
inline uint16_t bfloat16_of(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// One row: integer arithmetic only, so every clone gives the same bits.
NEXTWORD_VECTOR_CLONES void bfloat16_row(uint16_t* dst, const float* row, int cols) {
  for (int c = 0; c < cols; ++c) dst[c] = bfloat16_of(row[c]);
}

// rows x cols of a row-major matrix (ld floats apart) into packed bfloat16.
void to_bfloat16(std::vector<uint16_t>& out, const float* in, int rows, int cols, int ld) {
  out.resize(area(rows, cols));
  for (int r = 0; r < rows; ++r) bfloat16_row(out.data() + area(r, cols), in + area(r, ld), cols);
}

// One matmul primitive per shape, made once per thread (training's shapes
// repeat every step), with its engine and stream.
struct Matmuls {
  struct Made {
    dnnl::matmul::primitive_desc pd;
    dnnl::matmul matmul;
  };
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<std::tuple<bool, bool, int, int, int, int, bool>, Made> made;
  std::vector<uint16_t> a, b;

  Made& get(bool ta, bool tb, int M, int N, int K, int ldc, bool accumulate) {
    const auto key = std::make_tuple(ta, tb, M, N, K, ldc, accumulate);
    auto it = made.find(key);
    if (it != made.end()) return it->second;
    using dt = memory::data_type;
    // The packed operands as stored: A' [M, K] is A [M, K], or A [K, M]
    // read transposed (by its strides); B' likewise.
    const memory::desc a_md({M, K}, dt::bf16, ta ? memory::dims{1, M} : memory::dims{K, 1});
    const memory::desc b_md({K, N}, dt::bf16, tb ? memory::dims{1, K} : memory::dims{N, 1});
    const memory::desc c_md({M, N}, dt::f32, memory::dims{ldc, 1});
    dnnl::primitive_attr attr;
    if (accumulate) {
      dnnl::post_ops sum;
      sum.append_sum(1.0f);
      attr.set_post_ops(sum);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, engine);
    dnnl::matmul matmul(pd);
    return made.emplace(key, Made{std::move(pd), std::move(matmul)}).first->second;
  }
};

void bf16_product(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B,
                  int ldb, float beta, float* C, int ldc) {
  thread_local Matmuls m;
  to_bfloat16(m.a, A, ta ? K : M, ta ? M : K, lda);
  to_bfloat16(m.b, B, tb ? N : K, tb ? K : N, ldb);
  Matmuls::Made& made = m.get(ta, tb, M, N, K, ldc, beta != 0.0f);
  memory a_mem(made.pd.src_desc(), m.engine, m.a.data());
  memory b_mem(made.pd.weights_desc(), m.engine, m.b.data());
  memory c_mem(made.pd.dst_desc(), m.engine, C);
  made.matmul.execute(m.stream,
                      {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  m.stream.wait();
}
#endif

}  // namespace

bool bf16_available() {
#if NEXTWORD_DNNL
  // Debian's oneDNN has bf16 matmul kernels for AVX-512 processors only; on
  // others creating the primitive fails. Asked once, with a small product.
  static const bool available = [] {
    try {
      Matmuls m;
      m.get(false, false, 2, 2, 2, 2, false);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
#else
  return false;
#endif
}

const char* bf16_unavailable_reason() {
  return NEXTWORD_DNNL ? "this processor has no bf16 matrix products in oneDNN (they need AVX-512)"
                       : "a build with -DNEXTWORD_DNNL=ON (oneDNN, libdnnl-dev) is needed";
}

void set_training_precision(Precision p) {
  if (p == Precision::kBfloat16 && !bf16_available()) {
    throw std::logic_error(std::string("bf16 products: ") + bf16_unavailable_reason());
  }
  precision = p;
}

void training_product(bool transpose_a, bool transpose_b, int M, int N, int K, const float* A,
                      int lda, const float* B, int ldb, float beta, float* C, int ldc) {
#if NEXTWORD_DNNL
  if (precision == Precision::kBfloat16) {
    bf16_product(transpose_a, transpose_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
    return;
  }
#endif
  sgemm(transpose_a, transpose_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace nextword
