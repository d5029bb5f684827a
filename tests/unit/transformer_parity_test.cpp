// Parity with the independent PyTorch reference (tests/reference): for every
// committed fixture model, the engine's tokens, ids, logits and attention
// must match what nextword_ref.py computed in float64.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <span>

#include "model/model_file.h"
#include "predict/predictor.h"

using namespace nextword;
using nlohmann::json;

namespace {

constexpr double kTolerance = 1e-4;

// The norm-wise relative error max|a - b| / max|b|: an element near zero is
// judged on the scale of its tensor (float32 cannot do better than that on a
// logit that is a cancellation of large terms).
double relative_error(std::span<const float> got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  double largest = 0.0, worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    largest = std::max(largest, std::abs(want[i]));
    worst = std::max(worst, std::abs(got[i] - want[i]));
  }
  return largest == 0.0 ? worst : worst / largest;
}

void flatten(const json& j, std::vector<double>& out) {
  if (j.is_array()) {
    for (const json& x : j) flatten(x, out);
  } else {
    out.push_back(j.get<double>());
  }
}

}  // namespace

TEST_CASE("logits and attention match the PyTorch reference on every fixture", "[parity]") {
  const std::filesystem::path root = std::string(NEXTWORD_FIXTURE_DIR) + "/parity";
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(root)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 30);

  double worst_logits = 0.0, worst_attention = 0.0;
  int cases = 0;
  for (const auto& dir : dirs) {
    INFO("fixture " << dir.filename().string());
    const Model model = load_model(ModelPaths::in_directory(dir.string()));
    Predictor predictor(model);
    const json expected = json::parse(std::ifstream(dir / "expected.json"));
    for (const json& c : expected["cases"]) {
      const std::string phrase = c["phrase"];
      INFO("phrase \"" << phrase << "\"");
      const Encoded input = encode(model, phrase);
      CHECK(input.tokens == c["tokens"].get<std::vector<std::string>>());
      CHECK(input.ids == c["ids"].get<std::vector<int>>());
      CHECK(input.unknown == c["unknown"].get<std::vector<std::string>>());
      CHECK(input.truncated == c["truncated"].get<bool>());

      const Prediction p = predictor.predict(input, 3, true);
      std::vector<double> logits, attention;
      flatten(c["logits"], logits);
      flatten(c["attention"], attention);
      const double e_logits = relative_error(predictor.logits(), logits);
      const double e_attention = attention.empty() ? 0.0 : relative_error(p.attention, attention);
      CHECK(e_logits <= kTolerance);
      CHECK(e_attention <= kTolerance);
      worst_logits = std::max(worst_logits, e_logits);
      worst_attention = std::max(worst_attention, e_attention);
      ++cases;
    }
  }
  std::cout << "parity: " << dirs.size() << " models, " << cases
            << " phrases; largest relative error: logits " << worst_logits << ", attention "
            << worst_attention << "\n";
}
