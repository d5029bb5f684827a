// The backward pass against finite differences of the loss, on small random
// models covering every config option of format v1 (and dropout).
#include "transformer/backward.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_models.h"
#include "transformer/transformer.h"

using namespace nextword;
using nextword::testing::random_model;
using nextword::testing::small_config;

namespace {

struct Case {
  std::string name;
  Config config;
  bool attention_bias = false, classifier_bias = false;
  float dropout = 0.0f;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  auto add = [&](std::string name, auto change, bool biases = false, float dropout = 0.0f) {
    Config c = small_config();
    change(c);
    all.push_back({std::move(name), c, biases, biases, dropout});
  };
  add("everything on, untied", [](Config&) {});
  add(
      "tied classifier, biases", [](Config& c) { c.tied_classifier = true; }, true);
  add("no positions", [](Config& c) { c.positional = Positional::kNone; });
  add("sinusoidal positions", [](Config& c) { c.positional = Positional::kSinusoidal; });
  add("no norm", [](Config& c) { c.norm = Norm::kNone; });
  add("relu", [](Config& c) { c.activation = Activation::kRelu; });
  add("no residual", [](Config& c) { c.residual = false; });
  add("not causal", [](Config& c) { c.causal = false; });
  add("no scale", [](Config& c) { c.scale = Scale::kNone; });
  add("no feedforward", [](Config& c) { c.d_ff = 0; });
  add(
      "no layers", [](Config& c) { c.n_layers = 0; }, true);
  add("one layer, one head", [](Config& c) { c.n_layers = 1, c.n_heads = 1; });
  add(
      "dropout", [](Config&) {}, true, 0.3f);
  // Rotary positions turn pairs of columns: d_k even.
  add("rotary positions",
      [](Config& c) { c.positional = Positional::kRope, c.rope_theta = 50, c.d_k = 4; });
  add("rotary positions on halves, with factors", [](Config& c) {
    c.positional = Positional::kRope, c.rope_theta = 50, c.d_k = 4, c.rope_halves = true;
    c.rope_factors = {0.5f, 3.0f};
  });
  add("rmsnorm", [](Config& c) { c.norm = Norm::kRmsNorm; });
  add("swiglu", [](Config& c) { c.activation = Activation::kSwiglu; });
  add(
      "rope, rmsnorm and swiglu, with biases and dropout",
      [](Config& c) {
        c.positional = Positional::kRope, c.norm = Norm::kRmsNorm, c.d_k = 4;
        c.activation = Activation::kSwiglu;
      },
      true, 0.2f);
  // Grouped-query attention: 4 query heads on 2 key/value heads, with rotary
  // positions (which turn K's 2 heads) and biases.
  add(
      "grouped-query attention",
      [](Config& c) {
        c.n_heads = 4, c.n_kv_heads = 2, c.d_k = 4, c.positional = Positional::kRope;
      },
      true, 0.2f);
  add(
      "dropout, no norm, no residual", [](Config& c) { c.norm = Norm::kNone, c.residual = false; },
      false, 0.2f);
  return all;
}

double loss_of(const Model& m, Activations& s, const std::vector<int>& ids,
               const std::vector<int>& targets, int B, int T, float dropout) {
  forward(m, s, ids.data(), B, T, Dropout{dropout, 42});
  return loss_forward_backward(m, s, targets.data());
}

}  // namespace

TEST_CASE("backward matches finite differences for every config option", "[gradient]") {
  for (const Case& test : cases()) {
    SECTION(test.name) {
      Model m = random_model(test.config, test.attention_bias, test.classifier_bias, 7);
      const int B = 2, T = m.config.max_len, V = m.config.vocab_size;
      std::vector<int> ids, targets;
      for (int i = 0; i < B * T; ++i) {
        ids.push_back((i * 7 + 3) % V);
        targets.push_back((i * 5 + 1) % V);
      }
      Activations s;
      GradState g;
      const auto n = static_cast<size_t>(m.weights.parameter_count());
      std::vector<float> grads(n, 0.0f);
      loss_of(m, s, ids, targets, B, T, test.dropout);
      backward(m, s, g, grads.data());

      // Central differences on every parameter.
      // ReLU has a kink at 0: a wide step crosses it for some parameters, so
      // its check takes a narrow one.
      const float h = test.config.activation == Activation::kRelu ? 2e-4f : 3e-3f;
      float* p = m.weights.values();
      double diff2 = 0, norm2 = 0, worst = 0;
      for (size_t i = 0; i < n; ++i) {
        const float saved = p[i];
        p[i] = saved + h;
        const double up = loss_of(m, s, ids, targets, B, T, test.dropout);
        p[i] = saved - h;
        const double down = loss_of(m, s, ids, targets, B, T, test.dropout);
        p[i] = saved;
        const double numeric = (up - down) / (2.0 * h);
        diff2 += (numeric - grads[i]) * (numeric - grads[i]);
        norm2 += numeric * numeric;
        worst = std::max(worst, std::abs(numeric - grads[i]));
      }
      INFO("parameters " << n << ", worst element error " << worst);
      CHECK(norm2 > 1e-4);  // the gradient is not trivially zero
      CHECK(std::sqrt(diff2 / norm2) < 2e-3);
    }
  }
}

TEST_CASE("backward refuses activations it cannot use", "[gradient]") {
  const Model m = random_model(small_config(), false, false, 3);
  const int B = 2, T = m.config.max_len, V = m.config.vocab_size;
  std::vector<int> ids, targets;
  for (int i = 0; i < B * T; ++i) {
    ids.push_back((i * 3 + 2) % V);
    targets.push_back((i * 7 + 1) % V);
  }
  std::vector<float> grads(static_cast<size_t>(m.weights.parameter_count()), 0.0f);
  GradState g;
  Activations a;
  auto message = [&] {
    try {
      backward(m, a, g, grads.data());
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Never run forward.
  CHECK(message() == "backward: needs a forward pass over B >= 1 windows of one length T");
  // Forward, but the logits are still logits, not d loss / d logits.
  forward(m, a, ids.data(), B, T, Dropout{});
  CHECK(message() ==
        "backward: run loss_forward_backward first: the logits are not d loss / d logits");
  // A forward pass of another model (one layer fewer).
  Config one_layer = small_config();
  one_layer.n_layers = 1;
  const Model other = random_model(one_layer, false, false, 3);
  forward(other, a, ids.data(), B, T, Dropout{});
  loss_forward_backward(other, a, targets.data());
  CHECK(message() == "backward: the activations are not of a forward pass of this model");
  // Everything in order: no error, and the gradient is not zero.
  forward(m, a, ids.data(), B, T, Dropout{});
  loss_forward_backward(m, a, targets.data());
  CHECK(message() == "no error");
  double norm = 0;
  for (float x : grads) norm += static_cast<double>(x) * x;
  CHECK(norm > 0);
}
