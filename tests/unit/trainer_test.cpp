// Whole training runs on tiny synthetic text: the loss falls, and the model
// written is one `predict` and `eval` load. (Stopping and resuming:
// checkpoint_test.cpp.)
#include "train/trainer.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "model/model_file.h"
#include "predict/evaluate.h"
#include "predict/predictor.h"
#include "temp_dir.h"
#include "tiny_run.h"

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
