#include "train/adamw.h"

#include <cmath>

namespace nextword {

void adamw_update(float* params, const float* grads, float* m, float* v, size_t n, float lr,
                  float weight_decay, const AdamWOptions& o, int64_t t) {
  const double correction1 = 1.0 - std::pow(static_cast<double>(o.beta1), static_cast<double>(t));
  const double correction2 = 1.0 - std::pow(static_cast<double>(o.beta2), static_cast<double>(t));
  const auto step = static_cast<float>(lr / correction1);
  const auto root2 = static_cast<float>(std::sqrt(correction2));
  // torch applies the decay first: p *= 1 - lr * weight_decay.
  const float decay = 1.0f - lr * weight_decay;
#pragma omp parallel for schedule(static) if (n >= (1u << 16))
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    m[i] = o.beta1 * m[i] + (1.0f - o.beta1) * g;
    v[i] = o.beta2 * v[i] + (1.0f - o.beta2) * g * g;
    params[i] = params[i] * decay - step * m[i] / (std::sqrt(v[i]) / root2 + o.eps);
  }
}

double gradient_norm(const float* grads, size_t n) {
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(grads[i]) * grads[i];
  return std::sqrt(sum);
}

}  // namespace nextword
