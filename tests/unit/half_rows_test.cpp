// Half-precision rows widened at first use (format/half_rows.h): an adaptive
// model with a tied classifier read from F16 and BF16 safetensors keeps its
// embedding's rows past the head in the file until a pass reads them, and
// predicts the same bits as with every row widened at load; whole-tensor
// readers see every row; threads widening the same rows agree; a NaN in a
// deferred row is refused when the row is first read (in a head row: at
// load), naming its element.
#include "format/half_rows.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/half_float.h"
#include "encoded_input.h"
#include "math/layers.h"
#include "model/weights_file.h"
#include "predict/predictor.h"
#include "temp_dir.h"
#include "test_models.h"
#include "weight_bits.h"

using namespace nextword;
using testing::bits_of;

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
  return Model{ModelPaths{}, 0,       0,       w.config, m.vocab, std::move(w.weights), 0,
               m.bos_id,     nullptr, nullptr, nullptr};
}

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
    // F16: no row at load (the products read the head's halves), the
    // head's rows when the classifier's floats are asked for. BF16: the
    // head's rows at load. A row past the head not until read.
    REQUIRE(widened(3) != 0.0f);
    if (dtype == TensorDtype::kF16) {
      CHECK(E[area(3, d)] == 0.0f);
      REQUIRE(lazy.weights.classifier.halves() != nullptr);
      const float* C = lazy.weights.classifier;
      CHECK(C == E);
    }
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
             nullptr, "weights.safetensors", "embedding");
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

TEST_CASE("widening halves tells whether every value is finite", "[weights]") {
  std::vector<uint16_t> h(37, 0x3c00);
  std::vector<float> out(h.size());
  const char* bytes = reinterpret_cast<const char*>(h.data());
  CHECK(f16_to_floats(bytes, h.size(), out.data()));
  CHECK(out[36] == 1.0f);
  CHECK(bf16_to_floats(bytes, h.size(), out.data()));
  h[36] = 0x7c00;  // F16 inf; as BF16 a finite 2^121
  CHECK_FALSE(f16_to_floats(bytes, h.size(), out.data()));
  CHECK(std::isinf(out[36]));
  CHECK(bf16_to_floats(bytes, h.size(), out.data()));
  CHECK(out[36] == 0x1p121f);
  h[0] = 0xff81;  // a NaN in both
  CHECK_FALSE(halves_to_floats(bytes, true, h.size(), out.data()));
  CHECK_FALSE(halves_to_floats(bytes, false, h.size(), out.data()));
  h[0] = 0x7bff;   // F16's largest finite, 65504; as BF16 about 2.65e36
  h[36] = 0x7f7f;  // BF16's largest finite; as F16 a NaN
  CHECK_FALSE(f16_to_floats(bytes, h.size(), out.data()));
  CHECK(bf16_to_floats(bytes, h.size(), out.data()));
  CHECK(f16_to_floats(bytes, 36, out.data()));
  CHECK(out[0] == 65504.0f);
  CHECK(f16_to_floats(bytes, 0, out.data()));
}

namespace {

// An F16 file of an adaptive tied model whose embedding element `element`
// is a NaN.
std::string with_nan(const Model& m, size_t element, testing::TempDir& dir) {
  std::string bytes = weights_safetensors(m.config, m.weights, TensorDtype::kF16);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  const uint16_t nan = 0x7e00;
  std::memcpy(bytes.data() + 8 + n + 2 * element, &nan, 2);  // the embedding is first in the data
  return dir.write("w.safetensors", bytes);
}

}  // namespace

TEST_CASE("a NaN in a deferred row is refused when the row is read, naming its element",
          "[weights]") {
  const Model m = testing::random_model(adaptive_config(), false, false, 7);
  const size_t element = area(20, m.config.d_model) + 3;
  testing::TempDir dir;
  const std::string path = with_nan(m, element, dir);
  const std::string expected =
      path + ": embedding: element " + std::to_string(element) + " is not finite";
  WeightsFile w = read_weights(path);  // row 20 is past the head: not read yet
  const int fine[] = {2, 19, 21};
  w.weights.embedding_rows(fine, 3);
  const int bad[] = {5, 20};
  CHECK(testing::model_error_of([&] { w.weights.embedding_rows(bad, 2); }) == expected);
  // Still refused, and never widened: the next reader is told too.
  CHECK(testing::model_error_of([&] { w.weights.embedding_rows(bad + 1, 1); }) == expected);
  CHECK(testing::model_error_of([&] { (void)w.weights.data(0); }) == expected);
}

TEST_CASE("a NaN in a head row of a deferred embedding is refused at load", "[weights]") {
  const Model m = testing::random_model(adaptive_config(), false, false, 7);
  const size_t element = area(7, m.config.d_model) + 1;  // the head is rows 0..7
  testing::TempDir dir;
  const std::string path = with_nan(m, element, dir);
  CHECK(testing::model_error_of([&] { read_weights(path); }) ==
        path + ": embedding: element " + std::to_string(element) + " is not finite");
}

namespace {

// Sets the command's choice of HalfWeights while in scope.
struct HalfWeightsScope {
  explicit HalfWeightsScope(HalfWeights mode) { set_half_weights(mode); }
  ~HalfWeightsScope() { set_half_weights(HalfWeights::kRead); }
};

}  // namespace

TEST_CASE("an F16 model read in place gives the logits of the model widened at load", "[weights]") {
  // kRead: the products read the layers', clusters' and classifier's halves;
  // kWiden: all of it widened at load, as before. The same bits, adaptive
  // or not; a tensor's floats, when asked for, are its halves widened.
  for (const bool adaptive : {false, true}) {
    INFO((adaptive ? "adaptive" : "plain softmax"));
    const Model m = testing::random_model(adaptive ? adaptive_config() : testing::small_config(),
                                          false, false, 11);
    testing::TempDir dir;
    const Model read = reloaded(m, TensorDtype::kF16, dir);
    Model widened = [&] {
      const HalfWeightsScope scope(HalfWeights::kWiden);
      return reloaded(m, TensorDtype::kF16, dir);
    }();
    const WeightView w_q = read.weights.layers[0].w_q;
    REQUIRE(w_q.halves() != nullptr);
    CHECK(widened.weights.layers[0].w_q.halves() == nullptr);
    const std::vector<int> ids{1, 20 % m.config.vocab_size, 9, 3, 17 % m.config.vocab_size};
    Predictor a(read), b(widened);
    a.predict(testing::encoded(read, ids), 5);
    b.predict(testing::encoded(widened, ids), 5);
    const auto la = a.logits(), lb = b.logits();
    REQUIRE(la.size() == lb.size());
    CHECK(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)) == 0);
    const size_t n =
        static_cast<size_t>(m.config.d_model) * static_cast<size_t>(m.config.q_width());
    const float* q = w_q;  // widened now
    CHECK(std::memcmp(q, static_cast<const float*>(widened.weights.layers[0].w_q),
                      n * sizeof(float)) == 0);
    // Writing either gives the same file.
    CHECK(weights_safetensors(read.config, read.weights, TensorDtype::kF16) ==
          weights_safetensors(widened.config, widened.weights, TensorDtype::kF16));
  }
}

TEST_CASE("a NaN in a layer's F16 weights is refused at load, read in place or widened",
          "[weights]") {
  const Model m = testing::random_model(testing::small_config(), false, false, 12);
  std::string bytes = weights_safetensors(m.config, m.weights, TensorDtype::kF16);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  // layers.0.attn.w_k's element 5, where the header puts it.
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  const auto at = header["layers.0.attn.w_k"]["data_offsets"][0].get<size_t>();
  const uint16_t nan = 0x7e00;
  std::memcpy(bytes.data() + 8 + n + at + 2 * 5, &nan, 2);
  testing::TempDir dir;
  const std::string path = dir.write("w.safetensors", bytes);
  for (const HalfWeights mode : {HalfWeights::kRead, HalfWeights::kWiden}) {
    const HalfWeightsScope scope(mode);
    CHECK(testing::model_error_of([&] { read_weights(path); }) ==
          path + ": layers.0.attn.w_k: element 5 is not finite");
  }
}
