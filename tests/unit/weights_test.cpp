// Weights held as a GGUF file holds them (model/weights.h's TensorSource):
// a llama model whose projections are rows of outputs and whose embedding,
// classifier and norms are rows of words, in BF16, or in Q8_0 with F16
// norms, read in place, predicts in every family the bits of the same rows
// widened to float32 first, a phrase alone or in a batch; and a reader of
// any tensor's floats gets those rows widened, projections turned to [in, out].
#include "model/weights.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/half_float.h"
#include "base/weight_elements.h"
#include "encoded_input.h"
#include "math/kernel_paths.h"
#include "predict/predictor.h"
#include "stored_weights.h"
#include "test_models.h"

using namespace nextword;

using testing::KernelPathScope;
using testing::stored_as;

namespace {

Config llama_config(bool tied) {
  Config c;
  c.vocab_size = 40;
  c.d_model = 64;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_k = c.d_v = 16;
  c.d_ff = 96;
  c.activation = Activation::kSwiglu;
  c.max_len = 16;
  c.positional = Positional::kRope;
  c.norm = Norm::kRmsNorm;
  c.tied_classifier = tied;
  c.bos_token = "<bos>";
  return c;
}

// The rows of a GGUF file: its stored elements, and the floats they widen to.
struct FileTensors {
  std::vector<std::vector<uint16_t>> stored;  // 2-byte aligned, as the loader requires
  std::vector<std::vector<float>> floats;
};

// `m`'s tensors as a GGUF file holds them: matrices in `matrices`, norms in
// `norms`, biases in F32; the model read in place (`in_place`) or from the
// widened floats in F32 rows; `file` keeps the rows.
Model as_file(const Model& m, WeightType matrices, WeightType norms, bool in_place,
              std::shared_ptr<FileTensors> file) {
  const Weights& w = m.weights;
  std::vector<Weights::TensorSource> sources;
  file->stored.clear();
  file->floats.clear();
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    const TensorSpec& spec = w.tensors()[i];
    const bool projection = spec.name.find(".w_") != std::string::npos;
    const float* x = w.data(i);
    std::vector<float> rows(x, x + spec.size());
    if (projection) {  // [in, out] as out rows of in
      const auto in = static_cast<size_t>(spec.shape[0]), out = static_cast<size_t>(spec.shape[1]);
      for (size_t o = 0; o < out; ++o) {
        for (size_t k = 0; k < in; ++k) rows[o * in + k] = x[k * out + o];
      }
    }
    const WeightType type = spec.shape.size() == 2           ? matrices
                            : spec.role == TensorRole::kGain ? norms
                                                             : WeightType::kF32;
    file->stored.push_back(stored_as(type, rows));
    file->floats.emplace_back(rows.size());
    REQUIRE(
        widen_elements(type, file->stored.back().data(), rows.size(), file->floats.back().data()));
    sources.push_back({in_place ? static_cast<const void*>(file->stored.back().data())
                                : file->floats.back().data(),
                       projection, in_place ? type : WeightType::kF32});
  }
  Weights weights(m.config, w.tensors(), std::move(sources), file);
  return Model{ModelPaths{}, 0,       0,       m.config, m.vocab, std::move(weights), 0,
               m.bos_id,     nullptr, nullptr, nullptr};
}

}  // namespace

TEST_CASE("a llama model in BF16 or Q8_0 rows predicts the bits of its rows widened first",
          "[weights]") {
  struct Case {
    WeightType matrices, norms;
  };
  for (const Case& file_types :
       {Case{WeightType::kBF16, WeightType::kBF16}, Case{WeightType::kQ8_0, WeightType::kF16}}) {
    for (const bool tied : {true, false}) {
      INFO("matrices " << static_cast<int>(file_types.matrices) << (tied ? ", tied" : ""));
      const Model m = testing::random_model(llama_config(tied), false, false, 60 + tied, 0.3f);
      auto rows = std::make_shared<FileTensors>(), wide = std::make_shared<FileTensors>();
      const Model read = as_file(m, file_types.matrices, file_types.norms, true, rows);
      const Model widened = as_file(m, file_types.matrices, file_types.norms, false, wide);
      REQUIRE(read.weights.layers[0].w_q.output_rows());
      REQUIRE(read.weights.embedding.rows() != nullptr);
      REQUIRE_FALSE(read.weights.embedding.output_rows());
      CHECK(read.weights.classifier.type() == file_types.matrices);
      CHECK(widened.weights.embedding.rows() == nullptr);  // F32 words: plain floats

      const std::vector<std::vector<int>> phrases{{1, 5, 9, 30}, {1}, {1, 39, 2, 2, 17, 8, 11}};
      for (const KernelPath path : available_kernel_paths()) {
        INFO(kernel_path_name(path));
        const KernelPathScope scope(path);
        Predictor a(read), b(widened);
        std::vector<Encoded> batch;
        for (const std::vector<int>& ids : phrases) {
          const auto la = a.next_logits(testing::encoded(read, ids));
          const std::vector<float> alone(la.begin(), la.end());
          const auto lb = b.next_logits(testing::encoded(widened, ids));
          REQUIRE(alone.size() == lb.size());
          CHECK(std::memcmp(alone.data(), lb.data(), alone.size() * sizeof(float)) == 0);
          batch.push_back(testing::encoded(read, ids));
        }
        const std::vector<Prediction> together = a.predict(batch, 5);
        for (size_t p = 0; p < phrases.size(); ++p) {
          const Prediction single = b.predict(testing::encoded(widened, phrases[p]), 5);
          REQUIRE(together[p].top.size() == single.top.size());
          for (size_t r = 0; r < single.top.size(); ++r) {
            CHECK(together[p].top[r].id == single.top[r].id);
            CHECK(together[p].top[r].logit == single.top[r].logit);
            CHECK(together[p].top[r].probability == single.top[r].probability);
          }
        }
      }
      // Every tensor's floats, asked for, are the rows widened in the math's
      // layout: projections [in, out], words and norms as they lie.
      for (size_t i = 0; i < read.weights.tensors().size(); ++i) {
        const TensorSpec& spec = read.weights.tensors()[i];
        INFO(spec.name);
        const auto n = static_cast<size_t>(spec.size());
        CHECK(std::memcmp(read.weights.data(i), widened.weights.data(i), n * sizeof(float)) == 0);
      }
    }
  }
}
