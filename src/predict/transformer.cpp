#include "predict/transformer.h"

#include <algorithm>

#include "math/layers.h"

namespace nextword {
namespace {

size_t area(int rows, int cols) { return static_cast<size_t>(rows) * static_cast<size_t>(cols); }

// Grows the buffers to fit T tokens; capacity is kept between calls.
void reserve(RunState& s, const Config& c, int T, bool keep_attention) {
  const int qk = c.n_heads * c.d_k, v = c.n_heads * c.d_v;
  const size_t layers_kept = keep_attention ? static_cast<size_t>(std::max(c.n_layers, 1)) : 1;
  s.X.resize(area(T, c.d_model));
  s.U.resize(area(T, c.d_model));
  s.Q.resize(area(T, qk));
  s.K.resize(area(T, qk));
  s.V.resize(area(T, v));
  s.A.resize(layers_kept * static_cast<size_t>(c.n_heads) * area(T, T));
  s.heads.resize(area(T, v));
  s.O.resize(area(T, c.d_model));
  s.H.resize(area(T, c.d_ff));
  s.z.resize(static_cast<size_t>(c.d_model));
  s.logits.resize(static_cast<size_t>(c.vocab_size));
}

// U = norm(X), or X itself when the model has no norm.
const float* norm_forward(float* U, const float* X, const float* weight, const float* bias,
                          const Config& c, int T) {
  if (c.norm == Norm::kNone) return X;
  layernorm_forward(U, X, weight, bias, T, c.d_model, c.norm_eps);
  return U;
}

// X = X + branch if residual, else X = branch.
void merge_branch(float* X, const float* branch, size_t n, bool residual) {
  if (residual) {
    residual_forward(X, branch, n);
  } else {
    std::copy(branch, branch + n, X);
  }
}

}  // namespace

void forward(const Model& model, RunState& s, const int* ids, int T, bool keep_attention) {
  const Config& c = model.config;
  const Weights& w = model.weights;
  const int d = c.d_model, h = c.n_heads;
  reserve(s, c, T, keep_attention);
  float* X = s.X.data();

  // X = E[ids] (+ positions)
  embedding_forward(X, w.embedding, ids, T, d);
  if (c.positional == Positional::kLearned) position_forward(X, w.position, T, d);
  if (c.positional == Positional::kSinusoidal) sinusoid_forward(X, T, d);

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[static_cast<size_t>(l)];
    // Attention block: Q = U W_q + b_q, K = U W_k + b_k, V = U W_v + b_v
    const float* U = norm_forward(s.U.data(), X, lw.norm1_weight, lw.norm1_bias, c, T);
    matmul_forward(s.Q.data(), U, lw.w_q, lw.b_q, T, d, h * c.d_k);
    matmul_forward(s.K.data(), U, lw.w_k, lw.b_k, T, d, h * c.d_k);
    matmul_forward(s.V.data(), U, lw.w_v, lw.b_v, T, d, h * c.d_v);
    float* A = s.A.data() + (keep_attention ? static_cast<size_t>(l) * h * area(T, T) : 0);
    attention_forward(s.heads.data(), A, s.Q.data(), s.K.data(), s.V.data(), T, h, c.d_k, c.d_v,
                      c.attention_scale(), c.causal);
    // O = concat(heads) W_o + b_o
    matmul_forward(s.O.data(), s.heads.data(), lw.w_o, lw.b_o, T, h * c.d_v, d);
    merge_branch(X, s.O.data(), area(T, d), c.residual);

    if (c.d_ff > 0) {
      // F = act(norm2(X) W_in + b_in) W_out + b_out
      const float* U2 = norm_forward(s.U.data(), X, lw.norm2_weight, lw.norm2_bias, c, T);
      matmul_forward(s.H.data(), U2, lw.w_in, lw.b_in, T, d, c.d_ff);
      if (c.activation == Activation::kGelu) {
        gelu_forward(s.H.data(), area(T, c.d_ff));
      } else {
        relu_forward(s.H.data(), area(T, c.d_ff));
      }
      matmul_forward(s.O.data(), s.H.data(), lw.w_out, lw.b_out, T, c.d_ff, d);
      merge_branch(X, s.O.data(), area(T, d), c.residual);
    }
  }

  // z = final_norm(last row of X); logits = z C^T + c
  const float* last = X + area(T - 1, d);
  const float* z = norm_forward(s.z.data(), last, w.final_norm_weight, w.final_norm_bias, c, 1);
  matvec_forward(s.logits.data(), w.classifier, z, w.classifier_bias, c.vocab_size, d);
}

}  // namespace nextword
