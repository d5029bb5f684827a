#include "inspect/trace.h"

#include <limits>

#include "math/layers.h"

namespace nextword {
namespace {

// Columns [first, first + width) of rows [T, ld]: one of Q, K, V out of [Q | K | V].
std::vector<float> columns(const std::vector<float>& rows, int T, int ld, int first, int width) {
  std::vector<float> out;
  out.reserve(area(T, width));
  for (int t = 0; t < T; ++t) {
    const float* row = rows.data() + area(t, ld) + first;
    out.insert(out.end(), row, row + width);
  }
  return out;
}

// in[T, m] W[m, n] + b: a projection as the forward pass makes it.
std::vector<float> projection(const float* in, const float* W, const float* b, int T, int m,
                              int n) {
  std::vector<float> out(area(T, n));
  matmul_forward(out.data(), in, W, b, T, m, n);
  return out;
}

// S_i = Q_i K_i^T * s per head, -inf where a causal model masks (key after
// query): [h, T, T], what the softmax rows of A are taken of.
std::vector<float> attention_scores(const Config& c, const std::vector<float>& QKV, int T) {
  const int ld = c.qkv_width();
  std::vector<float> S(static_cast<size_t>(c.n_heads) * area(T, T));
  for (int i = 0; i < c.n_heads; ++i) {
    for (int q = 0; q < T; ++q) {
      for (int k = 0; k < T; ++k) {
        const float* Q = QKV.data() + area(q, ld) + i * c.d_k;
        const float* K = QKV.data() + area(k, ld) + c.q_width() + (i / c.kv_group()) * c.d_k;
        double dot = 0;
        for (int j = 0; j < c.d_k; ++j) dot += static_cast<double>(Q[j]) * K[j];
        S[static_cast<size_t>(i) * area(T, T) + area(q, T) + static_cast<size_t>(k)] =
            c.causal && k > q ? -std::numeric_limits<float>::infinity()
                              : static_cast<float>(dot * c.attention_scale());
      }
    }
  }
  return S;
}

}  // namespace

std::vector<NamedActivation> trace(const Inspection& inspection) {
  const Model& model = inspection.model();
  const Config& c = model.config;
  const Activations& a = inspection.activations();
  const int T = inspection.length(), d = c.d_model, h = c.n_heads;
  const bool norm = c.norm != Norm::kNone, rope = c.positional == Positional::kRope;
  std::vector<NamedActivation> out;
  auto add = [&out](std::string name, std::vector<int> shape, std::vector<float> data,
                    std::string formula) {
    const Axes axes = shape.size() == 1   ? Axes::kVocabulary
                      : shape.size() == 2 ? Axes::kPosition
                      : name.ends_with("_scores") || name.ends_with("_pattern")
                          ? Axes::kHeadQueryKey
                          : Axes::kPositionHead;
    out.push_back({std::move(name), axes, std::move(shape), std::move(data), std::move(formula)});
  };
  // The names of the formulas: U is the normed stream, or X itself without a norm.
  const std::string U = norm ? "U" : "X";
  const std::string plus = c.residual ? "X + " : "";

  std::vector<float> E(area(T, d));
  model.weights.embedding_rows(inspection.input().ids.data(), static_cast<size_t>(T));
  embedding_forward(E.data(), model.weights.embedding, inspection.input().ids.data(), T, d);
  add("hook_embed", {T, d}, std::move(E), "X = E[ids]");
  if (c.adds_positions()) {
    add("hook_pos_embed", {T, d}, inspection.position_embedding(),
        c.positional == Positional::kLearned ? "P[0..T-1], added to X"
                                             : "the sinusoids, added to X");
  }
  // K and V have kv heads of their own (fewer than h with grouped-query attention).
  const int q = c.q_width(), k = c.k_width(), kv = c.kv_heads(), ld = c.qkv_width();
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerActivations& layer = a.layers[static_cast<size_t>(l)];
    const std::string block = "blocks." + std::to_string(l) + ".";
    auto residual = [&](const Step& step) {
      const auto x = inspection.residual(step);
      return std::vector<float>(x.begin(), x.end());
    };
    add(block + "hook_resid_pre", {T, d}, layer.X_in, "X entering layer " + std::to_string(l + 1));
    if (norm) add(block + "ln1.hook_normalized", {T, d}, layer.U1, "U = norm1(X)");
    if (rope || c.qk_norm) {
      // Q and K as the projections made them; QKV holds them turned and/or normalized.
      const LayerWeights& w = model.weights.layers[static_cast<size_t>(l)];
      const float* in = norm ? layer.U1.data() : layer.X_in.data();
      add(block + "attn.hook_q", {T, h, c.d_k}, projection(in, w.w_q, w.b_q, T, d, q),
          "Q = " + U + " W_q + b_q");
      add(block + "attn.hook_k", {T, kv, c.d_k}, projection(in, w.w_k, w.b_k, T, d, k),
          "K = " + U + " W_k + b_k");
      const std::string normed = c.qk_norm ? ", each head divided by its root mean square" : "";
      const std::string name = rope ? "attn.hook_rot_" : "attn.hook_normed_";
      const std::string turned =
          rope ? " with each pair of a head's columns turned by position p times its frequency"
               : "";
      add(block + name + "q", {T, h, c.d_k}, columns(layer.QKV, T, ld, 0, q),
          "Q" + turned + normed);
      add(block + name + "k", {T, kv, c.d_k}, columns(layer.QKV, T, ld, q, k),
          "K" + turned + normed);
    } else {
      add(block + "attn.hook_q", {T, h, c.d_k}, columns(layer.QKV, T, ld, 0, q),
          "Q = " + U + " W_q + b_q");
      add(block + "attn.hook_k", {T, kv, c.d_k}, columns(layer.QKV, T, ld, q, k),
          "K = " + U + " W_k + b_k");
    }
    add(block + "attn.hook_v", {T, kv, c.d_v}, columns(layer.QKV, T, ld, q + k, c.v_width()),
        "V = " + U + " W_v + b_v");
    add(block + "attn.hook_attn_scores", {h, T, T}, attention_scores(c, layer.QKV, T),
        std::string("Q_i K_i^T * s, s = ") + (c.scale == Scale::kSqrtDk ? "1/sqrt(d_k)" : "1") +
            (c.causal ? ", -inf where the key comes after the query" : ""));
    add(block + "attn.hook_pattern", {h, T, T}, a.A[static_cast<size_t>(l)],
        "A_i = softmax(scores), row by row");
    add(block + "attn.hook_z", {T, h, c.d_v}, layer.heads,
        "head_i = A_i V_i: each row a weighted average of V's rows");
    add(block + "hook_attn_out", {T, d}, inspection.attention_out(l),
        "O = concat(head_i) W_o + b_o");
    add(block + "hook_resid_mid", {T, d}, residual({l + 1, true}), "X = " + plus + "O");
    if (c.d_ff > 0) {
      if (norm) add(block + "ln2.hook_normalized", {T, d}, layer.U2, "norm2(X)");
      const std::string in = norm ? "norm2(X)" : "X";
      if (c.gated()) {
        // TransformerLens's gated MLP: hook_pre is the gate, hook_pre_linear the up projection.
        add(block + "mlp.hook_pre", {T, c.d_ff}, layer.G_pre, in + " W_gate + b_gate");
        add(block + "mlp.hook_pre_linear", {T, c.d_ff}, layer.H_pre, in + " W_in + b_in");
        add(block + "mlp.hook_post", {T, c.d_ff}, layer.H, "silu(hook_pre) * hook_pre_linear");
      } else {
        add(block + "mlp.hook_pre", {T, c.d_ff}, layer.H_pre, in + " W_in + b_in");
        add(block + "mlp.hook_post", {T, c.d_ff}, layer.H,
            std::string(to_string(c.activation)) + "(hook_pre)");
      }
      add(block + "hook_mlp_out", {T, d}, inspection.mlp_out(l), "F = hook_post W_out + b_out");
    }
    add(block + "hook_resid_post", {T, d}, residual({l + 1, false}),
        c.d_ff > 0 ? "X = " + plus + "F" : "X (no feed-forward block)");
  }
  if (norm) add("ln_final.hook_normalized", {T, d}, a.Z, "z = final_norm(X)");
  add("logits", {c.vocab_size}, inspection.final_logits(),
      std::string(norm ? "z" : "X") + " C^T + c at the last position");
  return out;
}

}  // namespace nextword
