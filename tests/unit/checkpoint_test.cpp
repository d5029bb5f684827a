// Checkpoints (train/checkpoint.h): a stopped-then-resumed run ends with
// exactly the weights of an uninterrupted one, and a checkpoint that is
// missing or does not fit its model is refused with the file and field named.
#include "train/checkpoint.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "format/base64.h"
#include "model/model_file.h"
#include "temp_dir.h"
#include "tiny_run.h"
#include "train/trainer.h"

using namespace nextword;
using namespace nextword::testing;

TEST_CASE("a resumed run ends with the weights of an uninterrupted one", "[train]") {
  const TinyText text;
  const std::string& dir = text.dir;
  TrainOptions o = tiny_options(text.path, dir + "/whole");
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

TEST_CASE("a missing or damaged checkpoint is refused, naming the file and field", "[train]") {
  TempDir tmp;
  const std::string none = (tmp.dir / "none").string();
  std::filesystem::create_directories(none);
  try {
    resume_training(none, {}, std::nullopt);
    FAIL("resumed without a checkpoint");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kIo);
    CHECK(e.message() == none + "/checkpoint.json: cannot open: no checkpoint to resume from");
  }

  TrainOptions o =
      tiny_options(write_text((tmp.dir / "text").string()), (tmp.dir / "run").string());
  o.steps = 2;
  train(o, {});
  const std::string file = o.out_dir + "/checkpoint.json";
  const nlohmann::json good = nlohmann::json::parse(slurp(file));
  const Checkpoint read(o.out_dir);
  CHECK(read.record.step == 2);
  CHECK(read.record.options.out_dir == o.out_dir);
  CHECK(read.record.options.steps == 2);
  CHECK(read.vocab.size() == 11);

  // Parameters of a model one float smaller: 4 bytes short.
  nlohmann::json j = good;
  const size_t n = static_cast<size_t>(
      load_model(ModelPaths::in_directory(o.out_dir)).weights.parameter_count());
  const std::vector<float> short_params(n - 1, 0.5f);
  j["params"] = base64_encode(
      {reinterpret_cast<const char*>(short_params.data()), short_params.size() * sizeof(float)});
  tmp.write("run/checkpoint.json", j.dump());
  CHECK(model_error_of([&] { resume_training(o.out_dir, {}, std::nullopt); }) ==
        file + ": params: holds " + std::to_string(n - 1) + " float32 values, its options need " +
            std::to_string(n));

  j = good;
  j["version"] = 2;
  tmp.write("run/checkpoint.json", j.dump());
  CHECK(model_error_of([&] { Checkpoint{o.out_dir}; }) ==
        file + ": format: not a nextword checkpoint of version 1");

  // Integers that are not integers, or beyond their field's range: refused
  // by name (4.4e48 into an int was a conversion the sanitizer flagged).
  const std::string range = "must be an integer from -2147483648 to 2147483647, got ";
  j = good;
  j["step"] = 4.44444e48;
  tmp.write("run/checkpoint.json", j.dump());
  CHECK(model_error_of([&] { Checkpoint{o.out_dir}; }) ==
        file + ": step: " + range + "4.44444e+48");
  j = good;
  j["options"]["batch"] = 2.5;
  tmp.write("run/checkpoint.json", j.dump());
  CHECK(model_error_of([&] { Checkpoint{o.out_dir}; }) ==
        file + ": options.batch: " + range + "2.5");
  j = good;
  j["ranks"] = 4294967296LL;
  tmp.write("run/checkpoint.json", j.dump());
  CHECK(model_error_of([&] { Checkpoint{o.out_dir}; }) ==
        file + ": ranks: " + range + "4294967296");
  j = good;
  j["options"]["seed"] = -1;
  tmp.write("run/checkpoint.json", j.dump());
  CHECK(model_error_of([&] { Checkpoint{o.out_dir}; }) ==
        file + ": options.seed: must be an integer from 0 to 18446744073709551615, got -1");
  j = good;
  j["corpus_bytes"] = {1e30};
  tmp.write("run/checkpoint.json", j.dump());
  CHECK_THAT(model_error_of([&] { Checkpoint{o.out_dir}; }),
             Catch::StartsWith(file + ": corpus_bytes: must be an integer from "));

  j = good;
  j.erase("elapsed_seconds");
  tmp.write("run/checkpoint.json", j.dump());
  CHECK_THAT(model_error_of([&] { Checkpoint{o.out_dir}; }),
             Catch::StartsWith(file + ": not a valid checkpoint: "));
}

TEST_CASE("a checkpoint written before the newer training options resumes with their defaults",
          "[train]") {
  const TinyText text;
  TrainOptions o = tiny_options(text.path, text.dir + "/old");
  o.steps = 3;
  train(o, {});
  // Its options as an older nextword wrote them: without the ones below.
  const std::string path = text.dir + "/old/checkpoint.json";
  nlohmann::json j = nlohmann::json::parse(slurp(path));
  nlohmann::json& options = j.contains("options") ? j["options"] : j;
  for (const char* name : {"schedule", "decay_fraction", "init_from", "optimizer", "muon_lr",
                           "muon_momentum", "zero_init_projections"}) {
    REQUIRE(options.contains(name));
    options.erase(name);
  }
  {
    std::ofstream out(path);
    out << j.dump();
  }
  const TrainSummary resumed = resume_training(text.dir + "/old", {}, std::nullopt, 5);
  CHECK(resumed.steps_done == 5);
}
