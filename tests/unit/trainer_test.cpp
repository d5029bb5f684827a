// Whole training runs on tiny synthetic text: the loss falls, and the model
// written is one `predict` and `eval` load. (Stopping and resuming:
// checkpoint_test.cpp.)
#include "train/trainer.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "eval/evaluate.h"
#include "model/model_file.h"
#include "predict/predictor.h"
#include "temp_dir.h"
#include "test_models.h"
#include "tiny_run.h"
#include "train/training_step.h"

using namespace nextword;
using namespace nextword::testing;

TEST_CASE("a short run on tiny text learns it", "[train]") {
  const TinyText text;
  const std::string& dir = text.dir;
  const TrainSummary s = train(tiny_options(text.path, dir + "/model"), {});
  // 9 words + <unk> + <bos>; uniform guessing would score ln 11 = 2.40.
  CHECK(s.vocab_size == 11);
  CHECK(s.steps_done == 150);
  REQUIRE(s.val_loss);
  // The text's own entropy is 3 ln 2 / 7 = 0.30 nats per token; a model
  // that learned the grammar is close to it.
  CHECK(*s.val_loss < 0.45);

  const Model m = load_model(ModelPaths::in_directory(dir + "/model"));
  Predictor predictor(m);
  CHECK(m.vocab.word(predictor.predict("the cat sat on the", 1).top[0].id) != "the");
  CHECK(m.vocab.word(predictor.predict("the dog slept", 1).top[0].id) == "on");
  const Prediction p = predictor.predict("the cat sat on the", 2);
  CHECK(p.top[0].probability + p.top[1].probability > 0.9);  // mat or rug

  const EvalResult r = evaluate(m, read_documents({text.path}, m.config.tokenizer));
  CHECK(r.documents == 60);
  CHECK(r.tokens == 60 * 42);
  CHECK(r.unknown == 0);
  CHECK(r.top5_accuracy() > 0.99);  // never more than two choices
  CHECK(r.top1_accuracy() > 0.7);   // 4/7 certain + 3/7 coin flips = 0.79
  CHECK(r.cross_entropy < 0.45);
}

TEST_CASE("worker threads split the batch and add up to its gradient", "[train]") {
  // Without dropout the gradient of the batch's mean loss is the same
  // whatever the split: W workers' weighted gradients against one pass.
  Config c = small_config();
  const int B = 7, T = c.max_len, V = c.vocab_size;
  std::vector<int> inputs, targets;
  for (int i = 0; i < B * T; ++i) {
    inputs.push_back((i * 7 + 3) % V);
    targets.push_back((i * 5 + 1) % V);
  }
  TrainOptions o;
  o.dropout = 0;
  Model m = random_model(c, true, true, 3);
  TrainingState one(m.weights, 1);
  const double loss = one.gradients(m, o, inputs.data(), targets.data(), B, T, 0, 0);
  // (Not 8 as well: LLVM's libomp, in the sanitizer build, leaks 4 KiB when
  // one process grows its team from 3 threads to 8, which LeakSanitizer reports.)
  for (int W : {2, 3}) {
    INFO(W << " workers");
    TrainingState split(m.weights, W);
    const double split_loss = split.gradients(m, o, inputs.data(), targets.data(), B, T, 0, 0);
    CHECK(split_loss == Approx(loss).epsilon(1e-6));
    double diff2 = 0, norm2 = 0;
    for (size_t i = 0; i < one.parameters; ++i) {
      diff2 += (split.grads[i] - one.grads[i]) * (split.grads[i] - one.grads[i]);
      norm2 += one.grads[i] * one.grads[i];
    }
    CHECK(norm2 > 0);
    CHECK(std::sqrt(diff2 / norm2) < 1e-6);
    // The same bits again at the same W, dropout included.
    o.dropout = 0.3f;
    split.gradients(m, o, inputs.data(), targets.data(), B, T, 5, 0);
    const std::vector<float> first(split.grads);
    split.gradients(m, o, inputs.data(), targets.data(), B, T, 5, 0);
    CHECK(first == split.grads);
    o.dropout = 0;
  }
}
