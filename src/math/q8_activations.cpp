#include "math/q8_activations.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/half_float.h"
#include "base/quant_blocks.h"
#include "math/kernel_paths.h"

namespace nextword {
namespace {

std::atomic<bool> q8_on{false};

// Block b (32 values) of a weight row as the q8 products read it: integer
// values w, the scale of lanes 0-3 (values 0-15) and of lanes 4-7, and the
// minimum subtracted from every value (0 for the types without one).
struct Q8Block {
  int8_t w[32];
  float scale[2];
  float min;
};

// Q4_0 .. Q5_1: value i the nibble of byte i (low) or i - 16 (high), Q5's
// fifth bit i of the word qh above it, less the centre (8 for Q4_0, 16 for
// Q5_0); Q4_1 and Q5_1 add their m, a minimum of -m.
template <bool kFifth, bool kMinimum, class Block>
void nibble_values(const Block& block, int centre, Q8Block* out) {
  uint32_t qh = 0;
  if constexpr (kFifth) std::memcpy(&qh, block.qh, sizeof qh);
  for (int i = 0; i < 32; ++i) {
    const int nibble = i < 16 ? block.qs[i] & 0xF : block.qs[i - 16] >> 4;
    out->w[i] = static_cast<int8_t>((nibble | static_cast<int>((qh >> i) & 1) << 4) - centre);
  }
  out->scale[0] = out->scale[1] = f16_to_float(block.d);
  if constexpr (kMinimum) out->min = -f16_to_float(block.m);
}

Q8Block block_values(WeightType type, const char* row, int b) {
  Q8Block out{};
  if (type == WeightType::kQ8_0) {
    const auto& block = reinterpret_cast<const BlockQ8_0*>(row)[b];
    for (int i = 0; i < 32; ++i) out.w[i] = block.q[i];
    out.scale[0] = out.scale[1] = f16_to_float(block.d);
  } else if (type == WeightType::kQ4_0) {
    nibble_values<false, false>(reinterpret_cast<const BlockQ4_0*>(row)[b], 8, &out);
  } else if (type == WeightType::kQ4_1) {
    nibble_values<false, true>(reinterpret_cast<const BlockQ4_1*>(row)[b], 0, &out);
  } else if (type == WeightType::kQ5_0) {
    nibble_values<true, false>(reinterpret_cast<const BlockQ5_0*>(row)[b], 16, &out);
  } else if (type == WeightType::kQ5_1) {
    nibble_values<true, true>(reinterpret_cast<const BlockQ5_1*>(row)[b], 0, &out);
  } else if (type == WeightType::kQ4_K || type == WeightType::kQ5_K) {
    // Sub-block s of super-block b / 8: value q d1[s] - m1[s].
    const int s = b % 8;
    const uint8_t* qs;
    KFactors f;
    const uint8_t* qh = nullptr;
    if (type == WeightType::kQ4_K) {
      const auto& block = reinterpret_cast<const BlockQ4_K*>(row)[b / 8];
      f = k_factors(block.d, block.dmin, block.scales);
      qs = block.qs;
    } else {
      const auto& block = reinterpret_cast<const BlockQ5_K*>(row)[b / 8];
      f = k_factors(block.d, block.dmin, block.scales);
      qs = block.qs;
      qh = block.qh;
    }
    for (int i = 0; i < 32; ++i) {
      const uint8_t byte = qs[32 * (s / 2) + i];
      int v = s % 2 == 0 ? byte & 0xF : byte >> 4;
      if (qh != nullptr) v |= ((qh[i] >> s) & 1) << 4;
      out.w[i] = static_cast<int8_t>(v);
    }
    out.scale[0] = out.scale[1] = f.d1[s];
    out.min = f.m1[s];
  } else {  // Q6_K: value 32 s + i of a super-block, scales[2 s] and [2 s + 1]
    const auto& block = reinterpret_cast<const BlockQ6_K*>(row)[b / 8];
    const int s = b % 8, half = s / 4, j = s % 4;
    for (int i = 0; i < 32; ++i) {
      const uint8_t low = block.ql[64 * half + 32 * (j % 2) + i];
      const int nibble = j >= 2 ? low >> 4 : low & 0xF;
      const int top = (block.qh[32 * half + i] >> (2 * j)) & 3;
      out.w[i] = static_cast<int8_t>((nibble | top << 4) - 32);
    }
    for (int h = 0; h < 2; ++h) {
      out.scale[h] = f16_to_float(block.d) * static_cast<float>(block.scales[2 * s + h]);
    }
  }
  return out;
}

// Lanes l and l + 4 added, then l and l + 2, then 0 and 1.
float sum8(float (&v)[8]) {
  for (int l = 0; l < 4; ++l) v[l] += v[l + 4];
  for (int l = 0; l < 2; ++l) v[l] += v[l + 2];
  return v[0] + v[1];
}

}  // namespace

void set_q8_activations(bool on) { q8_on.store(on, std::memory_order_relaxed); }
bool q8_activations() { return q8_on.load(std::memory_order_relaxed); }
bool q8_type(WeightType type) { return is_block_type(type); }
bool q8_has_min(WeightType type) {
  return type == WeightType::kQ4_1 || type == WeightType::kQ5_1 || type == WeightType::kQ4_K ||
         type == WeightType::kQ5_K;
}

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
      float v[2][8] = {}, min[8] = {};
      for (int b = 0; b < blocks; ++b) {
        const Q8Block w = block_values(B.type, row, b);
        const int8_t* a = qi + 32 * b;
        const float s[2] = {w.scale[0] * di[b], w.scale[1] * di[b]};
        for (int l = 0; l < 8; ++l) {
          int32_t p = 0;
          for (int t = 4 * l; t < 4 * l + 4; ++t) p += int32_t{w.w[t]} * a[t];
          v[b % 2][l] = std::fma(s[l / 4], static_cast<float>(p), v[b % 2][l]);
        }
        if (q8_has_min(B.type)) {
          int32_t sum = 0;
          for (int t = 0; t < 32; ++t) sum += a[t];
          min[b % 8] = std::fma(w.min * di[b], static_cast<float>(sum), min[b % 8]);
        }
      }
      // Even blocks' lanes and odd blocks' added, then summed.
      for (int l = 0; l < 8; ++l) v[0][l] += v[1][l];
      const float c = sum8(v[0]);
      C[static_cast<ptrdiff_t>(i) * ldc + j] = q8_has_min(B.type) ? c - sum8(min) : c;
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
