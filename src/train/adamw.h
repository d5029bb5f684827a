// AdamW (Loshchilov & Hutter), as torch.optim.AdamW computes it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nextword {

struct AdamWOptions {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
};

// One step t (counted from 1) on n parameters:
//   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//   p -= lr (weight_decay p + (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps))
void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, float lr,
                  float weight_decay, const AdamWOptions& options, int64_t t);

// sqrt(sum g^2), accumulated in double.
double gradient_norm(const float* grads, size_t n);

}  // namespace nextword
