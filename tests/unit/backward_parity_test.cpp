// The C++ backward pass and optimizer against PyTorch autograd and
// torch.optim.AdamW (tests/reference/train_ref.py): for every fixture model,
// the loss and every tensor's gradient on a batch, and the losses of 10 AdamW
// steps. NEXTWORD_TRAINING_FIXTURES points the test at freshly generated
// models instead (tests/reference/live_training_parity.py).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/model_file.h"
#include "train/trainer.h"
#include "train/training_step.h"
#include "transformer/backward.h"
#include "transformer/transformer.h"

using namespace nextword;
using nlohmann::json;

namespace {

constexpr double kTolerance = 1e-4;

std::string fixture_root() {
  const char* live = std::getenv("NEXTWORD_TRAINING_FIXTURES");
  return live != nullptr ? live : NEXTWORD_FIXTURE_DIR "/parity";
}

std::vector<int> flat(const json& windows) {
  std::vector<int> out;
  for (const json& window : windows) {
    for (const json& id : window) out.push_back(id.get<int>());
  }
  return out;
}

}  // namespace

TEST_CASE("gradients and AdamW steps match PyTorch autograd", "[training-parity]") {
  int models = 0;
  double worst_gradient = 0, worst_loss = 0;
  for (const auto& entry : std::filesystem::directory_iterator(fixture_root())) {
    const std::string dir = entry.path().string();
    std::ifstream in(dir + "/training.json");
    if (!in) continue;
    const json want = json::parse(in);
    Model model = load_model(ModelPaths::in_directory(dir));
    const std::vector<int> inputs = flat(want["inputs"]), targets = flat(want["targets"]);
    const int B = static_cast<int>(want["inputs"].size());
    const int T = static_cast<int>(want["inputs"][0].size());
    INFO(dir);
    ++models;

    // Loss and gradients.
    Activations state;
    GradState grad_state;
    forward(model, state, inputs.data(), B, T, Dropout{});
    const double loss = loss_forward_backward(model, state, targets.data());
    CHECK(std::abs(loss - want["loss"].get<double>()) <=
          kTolerance * std::abs(want["loss"].get<double>()));
    worst_loss = std::max(worst_loss, std::abs(loss / want["loss"].get<double>() - 1));
    std::vector<float> grads(static_cast<size_t>(model.weights.parameter_count()), 0.0f);
    backward(model, state, grad_state, grads.data());
    // Norm-wise: each tensor's error on the scale of the whole gradient, so a
    // tensor whose true gradient is ~0 is judged on a meaningful scale.
    double largest = 0;
    for (const auto& [name, values] : want["grads"].items()) {
      for (const json& g : values) largest = std::max(largest, std::abs(g.get<double>()));
    }
    const Weights& w = model.weights;
    for (size_t t = 0; t < w.tensors().size(); ++t) {
      const std::string& name = w.tensors()[t].name;
      INFO(name);
      REQUIRE(want["grads"].contains(name));
      const json& g = want["grads"][name];
      const float* got = grads.data() + (w.data(t) - w.values());
      REQUIRE(static_cast<int64_t>(g.size()) == w.tensors()[t].size());
      double error = 0;
      for (size_t i = 0; i < g.size(); ++i) {
        error = std::max(error, std::abs(got[i] - g[i].get<double>()));
      }
      CHECK(error <= kTolerance * largest);
      worst_gradient = std::max(worst_gradient, error / largest);
    }

    // 10 AdamW steps on the same batch, no dropout.
    const json& a = want["adamw"];
    TrainOptions o;
    o.steps = a["steps"];
    o.warmup = a["warmup"];
    o.lr = a["lr"];
    o.min_lr = a["min_lr"];
    o.weight_decay = a["weight_decay"];
    o.adamw.beta1 = a["beta1"];
    o.adamw.beta2 = a["beta2"];
    o.adamw.eps = a["eps"];
    o.clip = a["clip"];
    o.dropout = 0;
    TrainingState training(model.weights);
    const json& losses = want["adamw_losses"];
    for (int s = 0; s < o.steps; ++s) {
      const double l = train_step(model, training, o, s, inputs.data(), targets.data(), B, T);
      const double expected = losses[static_cast<size_t>(s)].get<double>();
      INFO("step " << s);
      CHECK(std::abs(l - expected) <= kTolerance * std::abs(expected));
      worst_loss = std::max(worst_loss, std::abs(l / expected - 1));
    }
    forward(model, state, inputs.data(), B, T, Dropout{});
    const double final_loss = loss_forward_backward(model, state, targets.data());
    const double expected = losses.back().get<double>();
    CHECK(std::abs(final_loss - expected) <= kTolerance * std::abs(expected));
    worst_loss = std::max(worst_loss, std::abs(final_loss / expected - 1));
  }
  WARN("training parity: " << models << " models, worst gradient error " << worst_gradient
                           << ", worst loss error " << worst_loss);
  CHECK(models > 0);
}
