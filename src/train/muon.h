// Muon (Jordan et al. 2024, as in modded-nanogpt): momentum SGD whose update
// of a weight matrix is orthogonalized by a Newton-Schulz iteration, for the
// attention and feed-forward matrices; the embedding, the adaptive softmax,
// gains and biases stay with AdamW (train/adamw.h).
#pragma once

#include <cstdint>
#include <vector>

namespace nextword {

struct MuonOptions {
  float lr = 0.02f;        // peak; the run's schedule scales it as it scales AdamW's
  float momentum = 0.95f;  // beta, with Nesterov's look-ahead
  int ns_steps = 5;
};

// X [rows, cols] in place becomes an approximate orthogonalization of
// itself, U V^T of its singular value decomposition U S V^T: X / |X|_F, then
// `steps` times X <- a X + (b A + c A^2) X with A = X X^T (on X^T when rows >
// cols), a, b, c = 3.4445, -4.7750, 2.0315 (the quintic of Muon, whose
// singular values end near 1, between about 0.7 and 1.2).
void newton_schulz(float* X, int rows, int cols, int steps, std::vector<float>& scratch);

// One step on W [rows, cols] (X W's layout: rows in, cols out) with gradient G:
//   B = beta B + G;  U = G + beta B;  W = W (1 - decay) - lr sqrt(max(1, cols / rows)) NS(U)
void muon_update(float* W, const float* G, float* B, int rows, int cols, float lr, float decay,
                 const MuonOptions& options, std::vector<float>& scratch);

}  // namespace nextword
