#include "train/muon.h"

#include <algorithm>
#include <cmath>

#include "math/training_products.h"

namespace nextword {

void newton_schulz(float* X, int rows, int cols, int steps, std::vector<float>& scratch) {
  constexpr float a = 3.4445f, b = -4.7750f, c = 2.0315f;
  // Work on Y [r, k] with r <= k: X itself, or X^T.
  const bool transposed = rows > cols;
  const int r = transposed ? cols : rows, k = transposed ? rows : cols;
  const auto rk = static_cast<size_t>(r) * static_cast<size_t>(k);
  const auto rr = static_cast<size_t>(r) * static_cast<size_t>(r);
  scratch.resize(2 * rk + 2 * rr);
  float* Y = scratch.data();
  float* Z = Y + rk;
  float* A = Z + rk;
  float* B = A + rr;
  double norm = 0;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const float x =
          X[static_cast<size_t>(i) * static_cast<size_t>(cols) + static_cast<size_t>(j)];
      norm += static_cast<double>(x) * x;
      const size_t at =
          transposed ? static_cast<size_t>(j) * static_cast<size_t>(k) + static_cast<size_t>(i)
                     : static_cast<size_t>(i) * static_cast<size_t>(k) + static_cast<size_t>(j);
      Y[at] = x;
    }
  }
  const auto scale = static_cast<float>(1.0 / (std::sqrt(norm) + 1e-7));
  for (size_t i = 0; i < rk; ++i) Y[i] *= scale;
  for (int s = 0; s < steps; ++s) {
    training_product(false, true, r, r, k, Y, k, Y, k, 0.0f, A, r);   // A = Y Y^T
    training_product(false, false, r, r, r, A, r, A, r, 0.0f, B, r);  // B = A A
    for (size_t i = 0; i < rr; ++i) B[i] = b * A[i] + c * B[i];
    std::copy(Y, Y + rk, Z);
    training_product(false, false, r, k, r, B, r, Z, k, 0.0f, Y, k);  // Y = B Z
    for (size_t i = 0; i < rk; ++i) Y[i] += a * Z[i];
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const size_t at =
          transposed ? static_cast<size_t>(j) * static_cast<size_t>(k) + static_cast<size_t>(i)
                     : static_cast<size_t>(i) * static_cast<size_t>(k) + static_cast<size_t>(j);
      X[static_cast<size_t>(i) * static_cast<size_t>(cols) + static_cast<size_t>(j)] = Y[at];
    }
  }
}

void muon_update(float* W, const float* G, float* B, int rows, int cols, float lr, float decay,
                 const MuonOptions& o, std::vector<float>& scratch) {
  const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  std::vector<float> U(n);
  for (size_t i = 0; i < n; ++i) {
    B[i] = o.momentum * B[i] + G[i];
    U[i] = G[i] + o.momentum * B[i];
  }
  newton_schulz(U.data(), rows, cols, o.ns_steps, scratch);
  const auto step =
      static_cast<float>(lr * std::sqrt(std::max(1.0, static_cast<double>(cols) / rows)));
  const float keep = 1.0f - decay;
  for (size_t i = 0; i < n; ++i) W[i] = W[i] * keep - step * U[i];
}

}  // namespace nextword
