#include "transformer/backward.h"

#include <stdexcept>
#include <string>

#include "math/layers.h"
#include "transformer/adaptive_softmax.h"

namespace nextword {
namespace {

// backward() reads every buffer forward() kept: anything else is a bug in
// the caller, said at once rather than read as garbage.
void check_preconditions(const Config& c, const Activations& a) {
  auto require = [](bool ok, const char* what) {
    if (!ok) throw std::logic_error(std::string("backward: ") + what);
  };
  const Sequences& s = a.sequences;
  require(s.B > 0 && s.T > 0, "needs a forward pass over B >= 1 windows of one length T");
  const int N = s.N();
  require(a.layers.size() == static_cast<size_t>(c.n_layers) &&
              a.A.size() == static_cast<size_t>(c.n_layers) &&
              a.X_out.size() == area(N, c.d_model) && a.ids.size() == static_cast<size_t>(N),
          "the activations are not of a forward pass of this model");
  require(a.logits.size() == area(N, c.head_size()) && a.logits_are_gradients,
          "run loss_forward_backward first: the logits are not d loss / d logits");
}

}  // namespace

double mean_loss_forward_backward(float* logits, const int* targets, int N, int V) {
  return crossentropy_forward_backward(logits, targets, N, V, 1.0f / static_cast<float>(N)) / N;
}

double loss_forward_backward(const Model& model, Activations& a, const int* targets) {
  const int N = a.sequences.N();
  const double loss =
      model.config.adaptive()
          ? adaptive_loss_forward_backward(model, a, targets, 1.0f / static_cast<float>(N)) / N
          : mean_loss_forward_backward(a.logits.data(), targets, N, model.config.vocab_size);
  a.logits_are_gradients = true;
  return loss;
}

double distillation_loss_forward_backward(Activations& a, const float* teacher, const int* targets,
                                          int vocab_size, float weight, float tau) {
  const int N = a.sequences.N();
  const double loss =
      distillation_forward_backward(a.logits.data(), teacher, targets, N, vocab_size, weight, tau,
                                    1.0f / static_cast<float>(N)) /
      N;
  a.logits_are_gradients = true;
  return loss;
}

void backward(const Model& model, const Activations& a, GradState& g, float* grads) {
  const Config& c = model.config;
  const Weights& w = model.weights;
  check_preconditions(c, a);
  const Gradients G{w.values(), grads};
  const Sequences& s = a.sequences;
  const int N = s.N();

  // logits = Z C^T + c, Z = final_norm(X_out)
  g.dX.assign(area(N, c.d_model), 0.0f);
  g.dU.assign(area(N, c.d_model), 0.0f);
  logits_backward(g.dX.data(), g.dU.data(), G, model, a, g);
  for (int l = c.n_layers - 1; l >= 0; --l) {
    const LayerWeights& lw = w.layers[static_cast<size_t>(l)];
    const LayerActivations& layer = a.layers[static_cast<size_t>(l)];
    ffn_block_backward(c, lw, G, N, layer, a.dropout, g);
    attention_block_backward(c, lw, G, s, layer, a.A[static_cast<size_t>(l)].data(), a.dropout, g);
  }
  // X = E[ids] + P
  embed_backward(G, model, g.dX.data(), a.ids.data(), s);
}

}  // namespace nextword
