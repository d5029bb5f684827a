// Muon (train/muon.h): Newton-Schulz against the same iteration written
// plainly in double, the quintic worked on a 1 x 1 matrix, the update's
// momentum, scale and decay, and the schedules' learning rates by hand.
#include "train/muon.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "train/trainer.h"
#include "train/training_step.h"

using namespace nextword;

namespace {

// The iteration in double, on the r x k matrix (r <= k) by plain loops.
std::vector<double> plain_newton_schulz(std::vector<double> X, int r, int k, int steps) {
  double norm = 0;
  for (const double x : X) norm += x * x;
  for (double& x : X) x /= std::sqrt(norm) + 1e-7;
  for (int s = 0; s < steps; ++s) {
    std::vector<double> A(static_cast<size_t>(r * r)), B(A.size()), Y(X.size());
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < r; ++j)
        for (int l = 0; l < k; ++l)
          A[static_cast<size_t>(i * r + j)] +=
              X[static_cast<size_t>(i * k + l)] * X[static_cast<size_t>(j * k + l)];
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < r; ++j) {
        double aa = 0;
        for (int l = 0; l < r; ++l)
          aa += A[static_cast<size_t>(i * r + l)] * A[static_cast<size_t>(l * r + j)];
        B[static_cast<size_t>(i * r + j)] =
            -4.7750 * A[static_cast<size_t>(i * r + j)] + 2.0315 * aa;
      }
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < k; ++j) {
        double bx = 0;
        for (int l = 0; l < r; ++l)
          bx += B[static_cast<size_t>(i * r + l)] * X[static_cast<size_t>(l * k + j)];
        Y[static_cast<size_t>(i * k + j)] = 3.4445 * X[static_cast<size_t>(i * k + j)] + bx;
      }
    X = Y;
  }
  return X;
}

}  // namespace

TEST_CASE("Muon: Newton-Schulz against the iteration in double, both orientations", "[muon]") {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> normal(0, 1);
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{6, 17}, {17, 6}, {9, 9}}) {
    std::vector<float> X(static_cast<size_t>(rows * cols));
    for (float& x : X) x = normal(rng);
    // The plain side works on the wide orientation.
    const int r = std::min(rows, cols), k = std::max(rows, cols);
    std::vector<double> wide(X.size());
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        wide[static_cast<size_t>(rows <= cols ? i * k + j : j * k + i)] =
            X[static_cast<size_t>(i * cols + j)];
    const std::vector<double> want = plain_newton_schulz(wide, r, k, 5);
    std::vector<float> scratch;
    newton_schulz(X.data(), rows, cols, 5, scratch);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        CHECK(X[static_cast<size_t>(i * cols + j)] ==
              Approx(want[static_cast<size_t>(rows <= cols ? i * k + j : j * k + i)]).margin(1e-4));
    // Near-orthogonal: the wide side's rows have norms near 1 (0.6 .. 1.25).
    for (int i = 0; i < r; ++i) {
      double n = 0;
      for (int j = 0; j < k; ++j)
        n += want[static_cast<size_t>(i * k + j)] * want[static_cast<size_t>(i * k + j)];
      CHECK(std::sqrt(n) > 0.6);
      CHECK(std::sqrt(n) < 1.25);
    }
  }
}

TEST_CASE("Muon: one update on a 1 x 1 matrix, worked by hand", "[muon]") {
  // x / |x| = 1, then x <- 3.4445 x - 4.7750 x^3 + 2.0315 x^5 five times.
  double x = 1;
  for (int s = 0; s < 5; ++s) x = 3.4445 * x - 4.7750 * x * x * x + 2.0315 * std::pow(x, 5);
  float W = 2.0f, G = -0.5f, B = 0.25f;
  std::vector<float> scratch;
  MuonOptions o;
  // B = 0.95 x 0.25 - 0.5 = -0.2625; U = -0.5 + 0.95 B < 0: NS(U) = -x.
  muon_update(&W, &G, &B, 1, 1, 0.1f, 0.01f, o, scratch);
  CHECK(B == Approx(-0.2625));
  CHECK(W == Approx(2.0 * 0.99 + 0.1 * x).epsilon(1e-5));
}

TEST_CASE("Schedules: cosine and warmup-stable-decay by hand", "[muon]") {
  TrainOptions o;
  o.steps = 100;
  o.warmup = 10;
  o.lr = 1.0f;
  o.min_lr = 0.1f;
  CHECK(learning_rate(o, 4) == Approx(0.5));
  CHECK(learning_rate(o, 10) == Approx(1.0));
  CHECK(learning_rate(o, 55) == Approx(0.1 + 0.45 * (1 + std::cos(M_PI * 0.5))));
  o.schedule = "wsd";
  o.decay_fraction = 0.2f;  // steps 80..99 decay
  CHECK(learning_rate(o, 9) == Approx(1.0));
  CHECK(learning_rate(o, 79) == Approx(1.0));
  CHECK(learning_rate(o, 80) == Approx(1.0 - 0.9 / 20));
  CHECK(learning_rate(o, 89) == Approx(1.0 - 0.9 * 10 / 20));
  CHECK(learning_rate(o, 99) == Approx(0.1));
}
