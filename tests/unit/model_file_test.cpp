// Loading format-v1 files: the accepted forms, and the one-line errors that
// name the file and field for each way a file can be wrong.
#include "model/model_file.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "format/base64.h"
#include "temp_dir.h"

using namespace nextword;
using nlohmann::json;

namespace {

// A valid 1-layer model: V = 3, d = 2, one head with d_k = d_v = 2.
json small_weights() {
  auto matrix = [](int rows, int cols) {
    json data = json::array();
    for (int i = 0; i < rows * cols; ++i) data.push_back(0.25 * (i % 5) - 0.5);
    return json{{"shape", {rows, cols}}, {"data", data}};
  };
  return {{"format", "nextword"},
          {"version", 1},
          {"config",
           {{"vocab_size", 3},
            {"d_model", 2},
            {"n_layers", 1},
            {"n_heads", 1},
            {"d_k", 2},
            {"d_v", 2},
            {"max_len", 4}}},
          {"tensors",
           {{"embedding", matrix(3, 2)},
            {"layers.0.attn.w_q", matrix(2, 2)},
            {"layers.0.attn.w_k", matrix(2, 2)},
            {"layers.0.attn.w_v", matrix(2, 2)},
            {"layers.0.attn.w_o", matrix(2, 2)},
            {"classifier", matrix(3, 2)}}}};
}

struct TempModel : testing::TempDir {
  Model load(const json& weights, const json& vocab = json{"<unk>", "a", "b"}) const {
    write("weights.json", weights.dump());
    write("vocab.json", vocab.dump());
    return load_model(ModelPaths::in_directory(dir.string()));
  }
};

// The message the load fails with; fails the test if it loads.
std::string load_error(const json& weights, const json& vocab = json{"<unk>", "a", "b"}) {
  TempModel m;
  return testing::model_error_of([&] { m.load(weights, vocab); });
}

}  // namespace

TEST_CASE("a valid model loads, in every accepted form", "[model]") {
  TempModel m;
  const Model plain = m.load(small_weights());
  CHECK(plain.weights.parameter_count() == 3 * 2 + 4 * 4 + 3 * 2);
  CHECK(plain.unk_id == 0);
  CHECK(plain.bos_id == -1);
  CHECK(plain.config.causal);
  CHECK(plain.config.scale == Scale::kSqrtDk);
  CHECK(plain.config.activation == Activation::kGelu);

  // Nested data, b64 data and an object vocabulary read the same numbers.
  json w = small_weights();
  w["tensors"]["embedding"]["data"] = {{-0.5, -0.25}, {0.0, 0.25}, {0.5, -0.5}};
  const float floats[] = {-0.5f, -0.25f, 0.0f, 0.25f, 0.5f, -0.5f};
  w["tensors"]["classifier"] = {
      {"shape", {3, 2}},
      {"dtype", "f32"},
      {"b64", base64_encode(std::string(reinterpret_cast<const char*>(floats), sizeof floats))}};
  const Model other = m.load(w, json{{"b", 2}, {"<unk>", 0}, {"a", 1}});
  for (int i = 0; i < 6; ++i) {
    CHECK(other.weights.embedding[i] == plain.weights.embedding[i]);
    CHECK(other.weights.classifier[i] == plain.weights.classifier[i]);
  }
  CHECK(other.vocab.word(2) == "b");
}

TEST_CASE("errors name the file and the field", "[model]") {
  json w = small_weights();
  w["tensors"]["layers.0.attn.w_q"]["shape"] = {2, 3};
  CHECK_THAT(load_error(w), Catch::Contains("weights.json: tensors.layers.0.attn.w_q: shape [2,3], "
                                            "config needs [2,2]"));

  w = small_weights();
  w["tensors"]["layers.0.attn.w_q"]["data"] = {1, 2, 3};
  CHECK_THAT(load_error(w), Catch::Contains("tensors.layers.0.attn.w_q.data: has 3 numbers"));

  w = small_weights();
  w["tensors"]["layers.0.attn.w_q"]["data"][2] = "x";
  CHECK_THAT(load_error(w), Catch::Contains("tensors.layers.0.attn.w_q.data[2]: must be a number"));

  w = small_weights();
  w["tensors"]["embedding"]["data"] = {{1, 2}, {3}, {4, 5}};
  CHECK_THAT(load_error(w), Catch::Contains("tensors.embedding.data[1]: must be an array of 2"));

  w = small_weights();
  w["tensors"]["embedding"]["data"][0] = 1e39;
  CHECK_THAT(load_error(w),
             Catch::Contains("tensors.embedding.data[0]: value 1e+39 is not a finite"));

  w = small_weights();
  w["tensors"].erase("layers.0.attn.w_o");
  CHECK_THAT(load_error(w),
             Catch::Contains("tensors.layers.0.attn.w_o: missing (config needs shape [2,2])"));

  w = small_weights();
  w["tensors"]["layers.0.attn.wq"] = w["tensors"]["layers.0.attn.w_q"];
  CHECK_THAT(load_error(w), Catch::Contains("tensors.layers.0.attn.wq: unknown tensor for this "
                                            "config (did you mean \"layers.0.attn.w_q\"?)"));

  w = small_weights();
  w["tensors"]["classifier"] = {{"shape", {3, 2}}, {"dtype", "f32"}, {"b64", "AAAA"}};
  CHECK_THAT(load_error(w), Catch::Contains("tensors.classifier.b64: decodes to 3 bytes"));
  w["tensors"]["classifier"]["b64"] = "not base64!";
  CHECK_THAT(load_error(w), Catch::Contains("tensors.classifier.b64: is not valid base64"));
  w["tensors"]["classifier"]["dtype"] = "f16";
  CHECK_THAT(load_error(w), Catch::Contains("tensors.classifier.dtype: must be \"f32\""));

  w = small_weights();
  w["config"]["d_model"] = 0;
  CHECK_THAT(load_error(w), Catch::Contains("config.d_model: must be between 1 and"));
  w["config"]["d_model"] = 1000000000000;
  CHECK_THAT(load_error(w), Catch::Contains("config.d_model: must be between 1 and"));
  // A valid size (14 d parameters), but not in a file this small.
  w["config"]["d_model"] = 1 << 20;
  CHECK_THAT(load_error(w), Catch::Contains("weights.json: config: needs 14680064 parameters, "
                                            "more than a"));
  w["config"]["d_model"] = 2;
  w["config"]["n_heads"] = 1 << 20;
  CHECK_THAT(load_error(w), Catch::Contains("config.n_heads: n_heads * d_k and n_heads * d_v"));
  w["config"]["n_heads"] = 1;
  w["config"]["d_model"] = 2.5;
  CHECK_THAT(load_error(w), Catch::Contains("config.d_model: must be an integer"));
  w["config"].erase("d_model");
  CHECK_THAT(load_error(w), Catch::Contains("config.d_model: missing"));

  w = small_weights();
  w["config"]["dropout"] = 0.1;
  CHECK_THAT(load_error(w), Catch::Contains("config.dropout: unknown config field"));
  w = small_weights();
  w["config"]["norm"] = "batchnorm";
  CHECK_THAT(load_error(w), Catch::Contains("config.norm: must be one of \"none\", \"layernorm\", "
                                            "\"rmsnorm\", got \"batchnorm\""));
  w = small_weights();
  w["config"]["rope_theta"] = 500.0;
  CHECK_THAT(load_error(w),
             Catch::Contains("config.rope_theta: only with \"positional\": \"rope\""));
  w["config"]["positional"] = "rope";
  w["config"]["rope_theta"] = -1;
  CHECK_THAT(load_error(w), Catch::Contains("config.rope_theta: must be a positive number"));
  w = small_weights();
  w["config"]["positional"] = "rope";
  w["config"]["d_k"] = 3;
  CHECK_THAT(load_error(w),
             Catch::Contains("config.d_k: a head's width d_k must be even with \"positional\": "
                             "\"rope\", got 3"));
  w = small_weights();
  w["config"]["rope_pairs"] = "halves";
  CHECK_THAT(load_error(w),
             Catch::Contains("config.rope_pairs: only with \"positional\": \"rope\""));
  w["config"]["positional"] = "rope";
  w["config"]["d_k"] = 4;
  w["config"]["rope_pairs"] = "neox";
  CHECK_THAT(load_error(w), Catch::Contains("config.rope_pairs: must be one of \"adjacent\", "
                                            "\"halves\", got \"neox\""));
  w["config"].erase("rope_pairs");
  w["config"]["rope_factors"] = {1.0, 2.0, 3.0};
  CHECK_THAT(load_error(w),
             Catch::Contains("config.rope_factors: must be d_k / 2 = 2 numbers, got 3"));
  w["config"]["rope_factors"] = {1.0, 0.0};
  CHECK_THAT(load_error(w), Catch::Contains("config.rope_factors[1]: must be a positive number"));
  w = small_weights();
  w["config"]["n_kv_heads"] = 2;
  CHECK_THAT(load_error(w), Catch::Contains("config.n_kv_heads: must divide n_heads = 1, got 2"));
  w["config"]["n_kv_heads"] = 0;
  CHECK_THAT(load_error(w), Catch::Contains("config.n_kv_heads: must be between 1 and"));
  w = small_weights();
  w["config"]["tokenizer"] = {{"kind", "bpe"}};
  CHECK_THAT(load_error(w), Catch::Contains("config.tokenizer.kind: must be one of \"words\", "
                                            "\"sentencepiece\", got \"bpe\""));
  w["config"]["tokenizer"] = {{"kind", "sentencepiece"}, {"lowercase", false}};
  CHECK_THAT(load_error(w), Catch::Contains("config.tokenizer.lowercase: only with \"kind\": "
                                            "\"words\""));
  w["config"]["tokenizer"] = {{"kind", "sentencepiece"}};
  CHECK_THAT(load_error(w), Catch::Contains("tensors.piece_scores: missing (config needs shape"));
  w = small_weights();
  w["config"]["tokenizer"] = {{"lowercase", "yes"}};
  CHECK_THAT(load_error(w), Catch::Contains("config.tokenizer.lowercase: must be true or false"));

  w = small_weights();
  w["version"] = 2;
  CHECK_THAT(load_error(w), Catch::Contains("weights.json: version: unsupported version 2"));
  w = small_weights();
  w["format"] = "gguf";
  CHECK_THAT(load_error(w), Catch::Contains("weights.json: format: must be \"nextword\""));
}

TEST_CASE("vocabulary errors", "[model]") {
  const json w = small_weights();
  CHECK_THAT(load_error(w, {"<unk>", "a"}),
             Catch::Contains("vocab.json: has 2 words, ") && Catch::Contains("vocab_size is 3"));
  CHECK_THAT(load_error(w, {"<unk>", "a", "a"}),
             Catch::Contains("vocab.json: [2]: duplicate word \"a\" (also id 1)"));
  CHECK_THAT(load_error(w, {"<unk>", "a", 3}),
             Catch::Contains("vocab.json: [2]: must be a string"));
  CHECK_THAT(load_error(w, {"x", "a", "b"}),
             Catch::Contains("has no entry for unk_token \"<unk>\""));
  CHECK_THAT(load_error(w, {{"<unk>", 0}, {"a", 1}, {"b", 3}}),
             Catch::Contains("vocab.json: b: id must be an integer from 0 to 2, got 3"));
  CHECK_THAT(load_error(w, {{"<unk>", 0}, {"a", 1}, {"b", 1}}),
             Catch::Contains("id 1 is also used by"));
  json with_bos = w;
  with_bos["config"]["bos_token"] = "<s>";
  CHECK_THAT(load_error(with_bos), Catch::Contains("has no entry for bos_token \"<s>\""));
}

TEST_CASE("a vocabulary reads the same words through either reader", "[model]") {
  // Plain strings with \" and \\ take the fast reader; \u or \n escapes,
  // odd spacing and the object form take nlohmann's DOM: the same words.
  TempModel m;
  m.write("weights.json", small_weights().dump());
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {R"(["<unk>","\"","a\\b"])", {"<unk>", "\"", "a\\b"}},
      {" [ \"<unk>\" ,\n\"\\\"\\\"\",\t\"\" ] ", {"<unk>", "\"\"", ""}},
      {R"(["<unk>","\u00e9t\u00e9","x\ny"])", {"<unk>", "\u00e9t\u00e9", "x\ny"}},
      {R"(["<unk>","\"","\/"])", {"<unk>", "\"", "/"}},
      {"[\"<unk>\",\"\u00e9t\u00e9\",\"\x7f\"]", {"<unk>", "\u00e9t\u00e9", "\x7f"}},
      {R"({"<unk>":0,"b\"":2,"a":1})", {"<unk>", "a", "b\""}}};
  for (const auto& [text, words] : cases) {
    INFO(text);
    m.write("vocab.json", text);
    const Model loaded = load_model(ModelPaths::in_directory(m.dir.string()));
    CHECK(loaded.vocab.words() == words);
    for (int id = 0; id < 3; ++id) CHECK(loaded.vocab.find(words[static_cast<size_t>(id)]) == id);
    CHECK(loaded.vocab.find("absent") == -1);
  }
  // Duplicates and an empty array are refused by both.
  CHECK_THAT(load_error(small_weights(), json::parse(R"(["<unk>","\"","\""])")),
             Catch::Contains("[2]: duplicate word \"\"\" (also id 1)"));
  m.write("vocab.json", "[]");
  CHECK_THAT(testing::model_error_of([&] { load_model(ModelPaths::in_directory(m.dir.string())); }),
             Catch::Contains("vocab.json: the vocabulary is empty"));
  // What the fast reader must not take: the full readers refuse each.
  for (const std::string bad :
       {"[] \"a\"", "[]\"a\"", "[\"<unk>\",\"a\",\"b\"] x", "[\"<unk>\",\"a\",\"b\",]",
        "[\"<unk>\",\"a\tb\",\"c\"]", "[\"<unk>\",\"\xff\",\"b\"]", "[\"<unk>\",1,\"b\"]",
        "[\"<unk>\",\"a\",\"b\"", "[\"<unk>\",\"a\" \"b\"]", "[\"<unk>\",\"a\",\"b"}) {
    INFO(bad);
    m.write("vocab.json", bad);
    CHECK_THAT(
        testing::model_error_of([&] { load_model(ModelPaths::in_directory(m.dir.string())); }),
        Catch::Contains("vocab.json: "));
  }
}

TEST_CASE("files that are not JSON, empty or missing", "[model]") {
  TempModel m;
  m.write("vocab.json", "[\"<unk>\", \"a\", \"b\"]");
  const std::string text = small_weights().dump();
  for (const size_t cut : {size_t{0}, size_t{1}, text.size() / 2, text.size() - 1}) {
    m.write("weights.json", text.substr(0, cut));
    try {
      load_model(ModelPaths::in_directory(m.dir.string()));
      FAIL("loaded a truncated file");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::kModel);
      CHECK_THAT(e.what(), Catch::Contains("weights.json: ") &&
                               (Catch::Contains("not valid JSON") || Catch::Contains("empty")));
    }
  }
  std::filesystem::create_directory(m.dir / "dir");
  CHECK_THROWS_WITH(load_model({(m.dir / "vocab.json").string(), (m.dir / "dir").string(), ""}),
                    Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(load_model(ModelPaths::in_directory((m.dir / "absent").string())),
                    Catch::Contains("weights.json: cannot open: No such file or directory"));
}
