// Whole training runs on tiny synthetic text: the loss falls, the model
// written is one `predict` loads, and a stopped-then-resumed run ends with
// exactly the weights of an uninterrupted one.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "model/model_file.h"
#include "predict/evaluate.h"
#include "predict/predictor.h"
#include "train/trainer.h"

using namespace nextword;

namespace {

// Sentences of a tiny grammar, "the cat sat on the mat ." and its variations,
// paragraphs separated by blank lines: 60 documents of 42 tokens. The next
// word is certain at 4 of 7 positions and one of two at the other 3.
std::string write_text(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/text.txt";
  std::ofstream out(path);
  std::mt19937 rng(3);
  const char* animals[] = {"cat", "dog"};
  const char* verbs[] = {"sat", "slept"};
  const char* things[] = {"mat", "rug"};
  for (int paragraph = 0; paragraph < 60; ++paragraph) {
    for (int sentence = 0; sentence < 6; ++sentence) {
      out << "The " << animals[rng() % 2] << " " << verbs[rng() % 2] << " on the "
          << things[rng() % 2] << ". ";
    }
    out << "\n\n";
  }
  return path;
}

TrainOptions tiny_options(const std::string& text, const std::string& out) {
  TrainOptions o;
  o.corpus = {text};
  o.out_dir = out;
  o.vocab_size = 64;
  o.model.d_model = 16;
  o.model.n_layers = 1;
  o.model.n_heads = 2;
  o.model.d_k = 8;
  o.model.d_v = 8;
  o.model.d_ff = 32;
  o.model.max_len = 12;
  o.model.positional = Positional::kLearned;
  o.model.norm = Norm::kLayerNorm;
  o.model.tied_classifier = true;
  o.model.bos_token = "<bos>";
  o.batch = 8;
  o.steps = 150;
  o.warmup = 10;
  o.lr = 1e-2f;
  o.min_lr = 1e-3f;
  o.dropout = 0.0f;
  o.val_fraction = 0.1;
  o.eval_every = 0;
  o.checkpoint_every = 0;
  o.threads = 1;
  return o;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a short run on tiny text learns it", "[train]") {
  const std::string dir = std::filesystem::temp_directory_path() / "nextword-train-test";
  std::filesystem::remove_all(dir);
  const std::string text = write_text(dir);
  const TrainSummary s = train(tiny_options(text, dir + "/model"), {});
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

  const EvalResult r = evaluate(m, read_documents({text}, m.config.tokenizer));
  CHECK(r.documents == 60);
  CHECK(r.tokens == 60 * 42);
  CHECK(r.unknown == 0);
  CHECK(r.top5_accuracy() > 0.99);  // never more than two choices
  CHECK(r.top1_accuracy() > 0.7);   // 4/7 certain + 3/7 coin flips = 0.79
  CHECK(r.cross_entropy < 0.45);
}

TEST_CASE("a resumed run ends with the weights of an uninterrupted one", "[train]") {
  const std::string dir = std::filesystem::temp_directory_path() / "nextword-resume-test";
  std::filesystem::remove_all(dir);
  const std::string text = write_text(dir);
  TrainOptions o = tiny_options(text, dir + "/whole");
  o.steps = 40;
  o.dropout = 0.1f;  // the masks too must continue where they stopped
  o.checkpoint_every = 15;
  train(o, {});

  o.out_dir = dir + "/stopped";
  int steps = 0;
  TrainHooks stop_at_23;
  stop_at_23.should_stop = [&steps] { return ++steps == 23; };
  const TrainSummary first = train(o, stop_at_23);
  CHECK(first.stopped);
  CHECK(first.steps_done == 23);
  // What was saved at the stop is a model that loads.
  CHECK(load_model(ModelPaths::in_directory(o.out_dir)).config.d_model == 16);
  const TrainSummary second = resume_training(o.out_dir, {}, std::nullopt);
  CHECK(!second.stopped);
  CHECK(second.steps_done == 40);

  CHECK(slurp(dir + "/whole/weights.json") == slurp(dir + "/stopped/weights.json"));
  CHECK(slurp(dir + "/whole/vocab.json") == slurp(dir + "/stopped/vocab.json"));
}
