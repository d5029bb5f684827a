#include "math/q8_activations.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "base/half_float.h"
#include "base/quant_blocks.h"
#include "math/kernel_paths.h"

namespace nextword {
namespace {

std::atomic<bool> q8_on{false};

// Block b of a weight row as 32 signed values.
void block_values(WeightType type, const char* row, int b, int8_t* w, float* scale) {
  if (type == WeightType::kQ8_0) {
    const auto& block = reinterpret_cast<const BlockQ8_0*>(row)[b];
    for (int i = 0; i < 32; ++i) w[i] = block.q[i];
    *scale = f16_to_float(block.d);
    return;
  }
  const auto& block = reinterpret_cast<const BlockQ4_0*>(row)[b];
  for (int i = 0; i < 16; ++i) {
    w[i] = static_cast<int8_t>((block.qs[i] & 0xF) - 8);
    w[i + 16] = static_cast<int8_t>((block.qs[i] >> 4) - 8);
  }
  *scale = f16_to_float(block.d);
}

}  // namespace

void set_q8_activations(bool on) { q8_on.store(on, std::memory_order_relaxed); }
bool q8_activations() { return q8_on.load(std::memory_order_relaxed); }
bool q8_type(WeightType type) { return type == WeightType::kQ8_0 || type == WeightType::kQ4_0; }

void round_to_q8(const float* x, int K, int8_t* q, float* d) {
  if (kernel_path() == KernelPath::kPlain) return plain_round_to_q8(x, K, q, d);
  avx2::round_to_q8(x, K, q, d);  // the AVX-512 family's CPUs have AVX2
}

void plain_round_to_q8(const float* x, int K, int8_t* q, float* d) {
  for (int b = 0; b < K / 32; ++b) {
    const float* v = x + 32 * b;
    if (!std::all_of(v, v + 32, [](float a) { return std::isfinite(a); })) {
      d[b] = std::numeric_limits<float>::quiet_NaN();
      std::fill(q + 32 * b, q + 32 * b + 32, int8_t{0});
      continue;
    }
    float most = 0;
    for (int i = 0; i < 32; ++i) most = std::fmax(most, std::fabs(v[i]));
    const float scale = most / 127;
    const float inverse = scale != 0 ? 1 / scale : 0;
    d[b] = f16_to_float(float_to_f16(scale));
    for (int i = 0; i < 32; ++i)
      q[32 * b + i] = static_cast<int8_t>(std::nearbyint(v[i] * inverse));
  }
}

void plain_q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda,
                      const BlockRows& B, float* C, int ldc) {
  const int blocks = K / 32;
  for (int i = 0; i < M; ++i) {
    const int8_t* qi = q + static_cast<ptrdiff_t>(i) * lda;
    const float* di = d + static_cast<ptrdiff_t>(i) * (lda / 32);
    for (int j = 0; j < N; ++j) {
      const char* row = static_cast<const char*>(B.rows) + static_cast<size_t>(j) * B.row_bytes;
      float v[8] = {};
      for (int b = 0; b < blocks; ++b) {
        int8_t w[32];
        float scale;
        block_values(B.type, row, b, w, &scale);
        const float s = scale * di[b];
        for (int l = 0; l < 8; ++l) {
          int32_t p = 0;
          for (int t = 4 * l; t < 4 * l + 4; ++t) p += int32_t{w[t]} * qi[32 * b + t];
          v[l] = std::fma(s, static_cast<float>(p), v[l]);
        }
      }
      for (int l = 0; l < 4; ++l) v[l] += v[l + 4];
      for (int l = 0; l < 2; ++l) v[l] += v[l + 2];
      C[static_cast<ptrdiff_t>(i) * ldc + j] = v[0] + v[1];
    }
  }
}

void q8_product(int M, int N, int K, const int8_t* q, const float* d, int lda, const BlockRows& B,
                float* C, int ldc) {
  switch (kernel_path()) {
    case KernelPath::kPlain: return plain_q8_product(M, N, K, q, d, lda, B, C, ldc);
    case KernelPath::kAvx2: return avx2::q8_product(M, N, K, q, d, lda, B, C, ldc);
    case KernelPath::kAvx512: {
      static const bool has_vnni = __builtin_cpu_supports("avx512vnni");
      if (has_vnni) return vnni::q8_product(M, N, K, q, d, lda, B, C, ldc);
      return avx512::q8_product(M, N, K, q, d, lda, B, C, ldc);
    }
  }
}

}  // namespace nextword
