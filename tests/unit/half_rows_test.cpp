// Half-precision rows widened at first use (model/half_rows.h): an adaptive
// model with a tied classifier read from F16 and BF16 safetensors keeps its
// embedding's rows past the head in the file until a pass reads them, and
// predicts the same bits as with every row widened at load; whole-tensor
// readers see every row; threads widening the same rows agree; a NaN in a
// deferred row is still refused at load, naming its element.
#include "model/half_rows.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "encoded_input.h"
#include "math/layers.h"
#include "model/half_float.h"
#include "model/weights_file.h"
#include "predict/predictor.h"
#include "temp_dir.h"
#include "test_models.h"

using namespace nextword;

namespace {

// 24 words: a head of 8, clusters [8, 16) and [16, 24); the classifier tied.
Config adaptive_config() {
  Config c = testing::small_config();
  c.vocab_size = 24;
  c.adaptive_cutoffs = {8, 16};
  c.adaptive_div = 2.0f;
  c.tied_classifier = true;
  return c;
}

// `m`'s weights written in `dtype` and read back, as a model.
Model reloaded(const Model& m, TensorDtype dtype, testing::TempDir& d) {
  WeightsFile w =
      read_weights(d.write("w.safetensors", weights_safetensors(m.config, m.weights, dtype)));
  return Model{ModelPaths{}, 0, 0, w.config, m.vocab, std::move(w.weights), 0, m.bos_id};
}

uint32_t bits_of(float x) { return std::bit_cast<uint32_t>(x); }

}  // namespace

TEST_CASE("an adaptive model's half embedding widens row by row, with the same bits", "[weights]") {
  const Model m = testing::random_model(adaptive_config(), false, false, 5);
  const int d = m.config.d_model;
  for (const TensorDtype dtype : {TensorDtype::kF16, TensorDtype::kBF16}) {
    INFO(dtype_name(dtype));
    testing::TempDir dir;
    const Model lazy = reloaded(m, dtype, dir);
    const Model eager = reloaded(m, dtype, dir);
    REQUIRE(lazy.weights.tensors()[0].name == "embedding");
    const float* E = lazy.weights.embedding;
    auto widened = [&](int row) {
      const float x = m.weights.embedding[area(row, d)];
      return dtype == TensorDtype::kF16 ? f16_to_float(float_to_f16(x))
                                        : bf16_to_float(float_to_bf16(x));
    };
    // The head's rows at load; a row past it not until read.
    CHECK(bits_of(E[area(3, d)]) == bits_of(widened(3)));
    REQUIRE(widened(20) != 0.0f);
    CHECK(E[area(20, d)] == 0.0f);
    // The eager copy: every row now, through the whole-tensor reader.
    const float* all = eager.weights.data(0);
    for (int row = 0; row < m.config.vocab_size; ++row) {
      REQUIRE(bits_of(all[area(row, d)]) == bits_of(widened(row)));
    }
    // A pass over words from both clusters: the same logits, bit for bit.
    const std::vector<int> ids{1, 20, 9, 3, 17};
    Predictor a(lazy), b(eager);
    a.predict(testing::encoded(lazy, ids), 5);
    b.predict(testing::encoded(eager, ids), 5);
    const auto la = a.logits(), lb = b.logits();
    REQUIRE(la.size() == lb.size());
    CHECK(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)) == 0);
    CHECK(bits_of(E[area(20, d)]) == bits_of(widened(20)));
    CHECK(E[area(21, d)] == 0.0f);  // never read
    // Writing the model again widens the rest and gives the same file.
    CHECK(weights_safetensors(lazy.config, lazy.weights, dtype) ==
          weights_safetensors(eager.config, eager.weights, dtype));
  }
}

TEST_CASE("a model without an adaptive softmax widens its embedding at load", "[weights]") {
  const Model m = testing::random_model(testing::small_config(), false, false, 6);
  testing::TempDir dir;
  const Model h = reloaded(m, TensorDtype::kF16, dir);
  const int last = m.config.vocab_size - 1, d = m.config.d_model;
  CHECK(h.weights.embedding[area(last, d)] ==
        f16_to_float(float_to_f16(m.weights.embedding[area(last, d)])));
}

TEST_CASE("threads widening the same rows agree", "[weights]") {
  const int rows = 4096, width = 16;
  std::vector<uint16_t> halves(rows * width);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(0x3c00 + i % 977);
  std::vector<float> out(halves.size(), 0.0f);
  HalfRows h(reinterpret_cast<const char*>(halves.data()), false, rows, width, out.data(), 100,
             nullptr);
  CHECK(out[area(99, width)] == f16_to_float(halves[area(99, width)]));
  CHECK(out[area(100, width)] == 0.0f);
  std::vector<int> ids(rows);
  for (int i = 0; i < rows; ++i) ids[static_cast<size_t>(i)] = (i * 7) % rows;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h, &ids, t] {
      for (size_t i = static_cast<size_t>(t); i < ids.size(); i += 2) h.widen(&ids[i], 1);
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < halves.size(); ++i) REQUIRE(out[i] == f16_to_float(halves[i]));
  const int outside[] = {-1, rows};
  h.widen(outside, 2);  // left to the caller's checks: no effect, no crash
  h.widen_all();
}

TEST_CASE("halves_finite tests every value's exponent", "[weights]") {
  std::vector<uint16_t> h(37, 0x3c00);
  CHECK(halves_finite(reinterpret_cast<const char*>(h.data()), false, h.size()));
  CHECK(halves_finite(reinterpret_cast<const char*>(h.data()), true, h.size()));
  h[36] = 0x7c00;  // F16 inf; as BF16 a finite 2^121
  CHECK_FALSE(halves_finite(reinterpret_cast<const char*>(h.data()), false, h.size()));
  CHECK(halves_finite(reinterpret_cast<const char*>(h.data()), true, h.size()));
  h[0] = 0xff81;  // a NaN in both
  CHECK_FALSE(halves_finite(reinterpret_cast<const char*>(h.data()), true, h.size()));
  CHECK(halves_finite(reinterpret_cast<const char*>(h.data()), false, 0));
}

TEST_CASE("a NaN in a deferred row is refused at load, naming its element", "[weights]") {
  const Model m = testing::random_model(adaptive_config(), false, false, 7);
  std::string bytes = weights_safetensors(m.config, m.weights, TensorDtype::kF16);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  // The embedding is first in the data: element 20 * d + 3 of it.
  const size_t element = area(20, m.config.d_model) + 3;
  const uint16_t nan = 0x7e00;
  std::memcpy(bytes.data() + 8 + n + 2 * element, &nan, 2);
  testing::TempDir dir;
  const std::string path = dir.write("w.safetensors", bytes);
  const std::string message = testing::model_error_of([&] { read_weights(path); });
  CHECK(message == path + ": embedding: element " + std::to_string(element) + " is not finite");
}
