// Distillation's loss (train --teacher): against values worked by hand and
// against PyTorch autograd (tests/reference/make_distill_fixture.py), and a
// run that distills from a teacher.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "math/layers.h"

using namespace nextword;

TEST_CASE("distillation's loss by hand: two words", "[distill]") {
  // Logits [0, 0] (p = [.5, .5]), teacher [ln 3, 0] (q = [.75, .25]), tau 1, w .5, target 0:
  // CE = ln 2; KL(q || p) = .75 ln 1.5 + .25 ln .5; gradient .5 (p - onehot) + .5 (p - q).
  std::vector<float> logits = {0, 0};
  const std::vector<float> teacher = {std::log(3.0f), 0};
  const int target = 0;
  const double loss =
      distillation_forward_backward(logits.data(), teacher.data(), &target, 1, 2, 0.5f, 1.0f, 1);
  CHECK(loss == Approx(0.5 * std::log(2.0) + 0.5 * (0.75 * std::log(1.5) + 0.25 * std::log(0.5))));
  CHECK(logits[0] == Approx(0.5 * (0.5 - 1) + 0.5 * (0.5 - 0.75)));
  CHECK(logits[1] == Approx(0.5 * 0.5 + 0.5 * (0.5 - 0.25)));
  // w = 0 is cross-entropy alone, whatever the teacher says.
  std::vector<float> plain = {1, 2, 3}, distilled = {1, 2, 3};
  const std::vector<float> other = {9, -4, 0};
  const int t2 = 1;
  const double ce = crossentropy_forward_backward(plain.data(), &t2, 1, 3, 1);
  CHECK(distillation_forward_backward(distilled.data(), other.data(), &t2, 1, 3, 0, 3, 1) ==
        Approx(ce));
  for (int j = 0; j < 3; ++j) CHECK(distilled[j] == Approx(plain[j]));
}

TEST_CASE("distillation's loss and gradient match PyTorch autograd", "[distill]") {
  std::ifstream file(std::string(NEXTWORD_FIXTURE_DIR) + "/distill/cases.json");
  const nlohmann::json fixture = nlohmann::json::parse(file);
  REQUIRE(fixture["cases"].size() >= 5);
  for (const nlohmann::json& c : fixture["cases"]) {
    const int N = c["N"], V = c["V"];
    INFO("N " << N << ", V " << V << ", w " << c["weight"] << ", tau " << c["temperature"]);
    std::vector<float> logits = c["logits"].get<std::vector<float>>();
    const std::vector<float> teacher = c["teacher"].get<std::vector<float>>();
    const std::vector<int> targets = c["targets"].get<std::vector<int>>();
    const std::vector<double> want = c["gradient"].get<std::vector<double>>();
    const double loss =
        distillation_forward_backward(logits.data(), teacher.data(), targets.data(), N, V,
                                      c["weight"], c["temperature"], 1.0f / static_cast<float>(N)) /
        N;
    CHECK(loss == Approx(c["loss"].get<double>()).epsilon(1e-5));
    double largest = 0, worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      largest = std::max(largest, std::abs(want[i]));
      worst = std::max(worst, std::abs(logits[i] - want[i]));
    }
    CHECK(worst <= 1e-5 * largest);
  }
}
