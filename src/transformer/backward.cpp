#include "transformer/backward.h"

#include <algorithm>

#include "math/layers.h"

namespace nextword {
namespace {

void zero(std::vector<float>& v, size_t n) { v.assign(n, 0.0f); }

// d_in += d out / d in for out = norm(in), or d_in += d_out without a norm.
void norm_backward(float* d_in, float* d_weight, float* d_bias, const float* d_out, const float* in,
                   const float* weight, const Config& c, int rows) {
  if (c.norm == Norm::kNone) {
    residual_forward(d_in, d_out, area(rows, c.d_model));
  } else {
    layernorm_backward(d_in, d_weight, d_bias, d_out, in, weight, rows, c.d_model, c.norm_eps);
  }
}

// Through out = X + drop(branch) (or drop(branch) alone): d branch into
// `dbranch`; dX keeps the residual's share, or is cleared without one.
void merge_backward(float* dbranch, std::vector<float>& dX, const std::vector<float>& mask,
                    const Config& c) {
  std::copy(dX.begin(), dX.end(), dbranch);
  if (!mask.empty()) dropout_backward(dbranch, mask.data(), dX.size());
  if (!c.residual) std::fill(dX.begin(), dX.end(), 0.0f);
}

}  // namespace

double loss_forward_backward(RunState& s, const int* targets, int vocab_size) {
  const int N = s.B * s.T;
  return crossentropy_forward_backward(s.logits.data(), targets, N, vocab_size,
                                       1.0f / static_cast<float>(N)) /
         N;
}

void backward(const Model& model, RunState& s, GradState& g, float* grads) {
  const Config& c = model.config;
  const Weights& w = model.weights;
  // The gradient of a parameter sits at the parameter's offset in `grads`.
  auto G = [&](const float* p) -> float* {
    return p == nullptr ? nullptr : grads + (p - w.values());
  };
  const int B = s.B, T = s.T, N = B * T, d = c.d_model, h = c.n_heads;
  const int qk = h * c.d_k, v = h * c.d_v;
  zero(g.dX, area(N, d));
  zero(g.dU, area(N, d));

  // logits = Z C^T + c, Z = final_norm(X_out)
  classifier_backward(g.dU.data(), G(w.classifier), G(w.classifier_bias), s.logits.data(),
                      s.Z.data(), w.classifier, N, d, c.vocab_size);
  norm_backward(g.dX.data(), G(w.final_norm_weight), G(w.final_norm_bias), g.dU.data(),
                s.X_out.data(), w.final_norm_weight, c, N);

  for (int l = c.n_layers - 1; l >= 0; --l) {
    const LayerWeights& lw = w.layers[static_cast<size_t>(l)];
    LayerState& ls = s.layers[static_cast<size_t>(l)];
    float* dbranch = s.branch.data();

    if (c.d_ff > 0) {
      // X_next = X_mid + drop(act(U2 W_in + b_in) W_out + b_out), U2 = norm2(X_mid)
      merge_backward(dbranch, g.dX, ls.F_mask, c);
      zero(g.dH, area(N, c.d_ff));
      matmul_backward(g.dH.data(), G(lw.w_out), G(lw.b_out), dbranch, ls.H.data(), lw.w_out, N,
                      c.d_ff, d);
      if (c.activation == Activation::kGelu) {
        gelu_backward(g.dH.data(), ls.H_pre.data(), g.dH.data(), g.dH.size());
      } else {
        relu_backward(g.dH.data(), ls.H_pre.data(), g.dH.data(), g.dH.size());
      }
      const bool normed = c.norm != Norm::kNone;
      zero(g.dU, area(N, d));
      matmul_backward(g.dU.data(), G(lw.w_in), G(lw.b_in), g.dH.data(),
                      normed ? ls.U2.data() : ls.X_mid.data(), lw.w_in, N, d, c.d_ff);
      norm_backward(g.dX.data(), G(lw.norm2_weight), G(lw.norm2_bias), g.dU.data(), ls.X_mid.data(),
                    lw.norm2_weight, c, N);
    }

    // X_mid = X_in + drop(concat(heads) W_o + b_o)
    merge_backward(dbranch, g.dX, ls.O_mask, c);
    zero(g.dheads, area(N, v));
    matmul_backward(g.dheads.data(), G(lw.w_o), G(lw.b_o), dbranch, ls.heads.data(), lw.w_o, N, v,
                    d);
    // head_i = A_i V_i, A_i = softmax(Q_i K_i^T * scale), per window
    g.dQ.resize(area(N, qk));
    g.dK.resize(area(N, qk));
    g.dV.resize(area(N, v));
    g.dS.resize(static_cast<size_t>(B) * area(T, T));
    const bool dropout = !ls.A_mask.empty();
    const size_t attention = static_cast<size_t>(h) * area(T, T);
    const auto ld = static_cast<size_t>(2 * qk + v);  // the rows of [Q | K | V]
#pragma omp parallel for schedule(static) if (B > 1 && area(N, T) >= kParallelAttention)
    for (int b = 0; b < B; ++b) {
      const size_t row = area(b * T, 1), a = static_cast<size_t>(b) * attention;
      attention_backward(g.dQ.data() + row * qk, g.dK.data() + row * qk, g.dV.data() + row * v,
                         g.dS.data() + static_cast<size_t>(b) * area(T, T),
                         g.dheads.data() + row * v, ls.A.data() + a,
                         dropout ? ls.A_mask.data() + a : nullptr,
                         dropout ? ls.A_dropped.data() + a : nullptr, ls.QKV.data() + row * ld,
                         ls.QKV.data() + row * ld + qk, ls.QKV.data() + row * ld + 2 * qk, T, h,
                         c.d_k, c.d_v, c.attention_scale(), static_cast<int>(ld));
    }
    // Q = U W_q + b_q, K = U W_k + b_k, V = U W_v + b_v, U = norm1(X_in)
    const float* U = c.norm != Norm::kNone ? ls.U1.data() : ls.X_in.data();
    zero(g.dU, area(N, d));
    matmul_backward(g.dU.data(), G(lw.w_q), G(lw.b_q), g.dQ.data(), U, lw.w_q, N, d, qk);
    matmul_backward(g.dU.data(), G(lw.w_k), G(lw.b_k), g.dK.data(), U, lw.w_k, N, d, qk);
    matmul_backward(g.dU.data(), G(lw.w_v), G(lw.b_v), g.dV.data(), U, lw.w_v, N, d, v);
    norm_backward(g.dX.data(), G(lw.norm1_weight), G(lw.norm1_bias), g.dU.data(), ls.X_in.data(),
                  lw.norm1_weight, c, N);
  }

  // X = E[ids] + P
  if (c.positional == Positional::kLearned) {
    for (int b = 0; b < B; ++b)
      position_backward(G(w.position), g.dX.data() + area(b * T, d), T, d);
  }
  embedding_backward(G(w.embedding), g.dX.data(), s.ids.data(), N, d);
}

}  // namespace nextword
