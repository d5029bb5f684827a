// weights.json and the three forms of the weights file: lossless round
// trips between them, and a tensor's fault reported where the reader
// stopped, in the order a reader of the whole tensor meets the faults.
#include "model/weights_file.h"

#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "temp_dir.h"
#include "test_models.h"
#include "weight_bits.h"

using namespace nextword;
using nlohmann::json;

namespace {

using testing::bits;
using testing::TempDir;

// A model whose values include the awkward floats: -0, the smallest
// subnormal, the largest float, and decimals with no exact binary form.
Model awkward_model() {
  Model m = testing::random_model(testing::small_config(), true, true, 7);
  const float specials[] = {-0.0f,         std::numeric_limits<float>::denorm_min(),
                            FLT_MAX,       -FLT_MAX,
                            0.1f,          1e-38f,
                            3.4028234e38f, 16777217.0f};
  float* x = m.weights.mutable_data(0);
  for (size_t i = 0; i < std::size(specials); ++i) x[i] = specials[i];
  return m;
}

// The message reading `text` as weights.json fails with, from the file's
// name on (the directory is a temporary one).
std::string tensor_error_in(const std::string& text) {
  TempDir d;
  const std::string path = d.write("weights.json", text);
  const std::string message = testing::model_error_of([&] { read_weights(path); });
  return message.substr(path.size() - std::string("weights.json").size());
}

// The message reading the small model's weights.json fails with, once `edit`
// changed the tensors' JSON.
std::string tensor_error(const std::function<void(json&)>& edit) {
  const Model m = testing::random_model(testing::small_config(), false, false, 4);
  json w = json::parse(weights_json(m.config, m.weights, false));
  edit(w["tensors"]);
  TempDir d;
  return tensor_error_in(w.dump());
}

}  // namespace

TEST_CASE("every form holds the same floats, bit for bit", "[weights]") {
  const Model m = awkward_model();
  const std::vector<uint32_t> expected = bits(m.weights);
  TempDir d;
  for (const auto& [name, format] : std::vector<std::pair<std::string, WeightsFormat>>{
           {"numbers.json", WeightsFormat::kJsonNumbers},
           {"b64.json", WeightsFormat::kJsonBase64},
           {"w.safetensors", WeightsFormat::kSafetensors}}) {
    INFO(name);
    const std::string bytes = encode_weights(m.config, m.weights, format);
    const WeightsFile back = read_weights(d.write(name, bytes));
    CHECK(bits(back.weights) == expected);
    CHECK(config_to_json(back.config) == config_to_json(m.config));
    CHECK(back.bytes == static_cast<int64_t>(bytes.size()));
    // Writing what was read gives the same bytes again.
    CHECK(encode_weights(back.config, back.weights, format) == bytes);
    for (const WeightsFormat other :
         {WeightsFormat::kJsonNumbers, WeightsFormat::kJsonBase64, WeightsFormat::kSafetensors}) {
      CHECK(encode_weights(back.config, back.weights, other) ==
            encode_weights(m.config, m.weights, other));
    }
  }
}

TEST_CASE("a number beyond double's range is a model error naming the tensor", "[weights]") {
  const Model m = testing::random_model(testing::small_config(), false, false, 4);
  std::string text = weights_json(m.config, m.weights, false);
  const size_t at = text.find("\"data\":[", text.find("\"embedding\"")) + 8;
  text.replace(at, text.find(',', at) - at, "1e400");  // the first number
  TempDir d;
  const std::string path = d.write("weights.json", text);
  CHECK_THROWS_WITH(read_weights(path), Catch::Contains("weights.json: tensors.embedding: ") &&
                                            Catch::Contains("number overflow"));
}

TEST_CASE("a tensor's fault is named where the reader stopped", "[weights]") {
  const std::string at = "weights.json: tensors.embedding";
  // Unknown fields in name order, before anything else.
  CHECK(tensor_error([](json& t) {
          t["embedding"]["zeta"] = 1;
          t["embedding"]["alpha"] = 1;
          t["embedding"]["shape"] = "x";
        }) == at + ".alpha: unknown tensor field (expected shape, data or dtype + b64)");
  CHECK(tensor_error([](json& t) {
          t["embedding"]["shape"] = {11, -8};
        }) == at + ".shape: must be an array of non-negative integers, got [11,-8]");
  CHECK(tensor_error([](json& t) { t["embedding"].erase("shape"); }) == at + ": missing \"shape\"");
  CHECK(tensor_error([](json& t) { t["embedding"]["b64"] = ""; }) ==
        at + ": needs exactly one of \"data\" or \"b64\"");
  CHECK(tensor_error([](json& t) { t["embedding"] = json::array(); }) ==
        at + ": must be an object with \"shape\" and \"data\"");
  CHECK(tensor_error([](json& t) {
          t["embedding"]["data"] = {{"rows", 11}};
        }) == at + ".data: must be an array of numbers");
  // The length of the whole before an element inside it.
  CHECK(tensor_error([](json& t) {
          t["embedding"]["data"][3] = "x";
          t["embedding"]["data"].push_back(1);
        }) == at + ".data: has 89 numbers, shape [11,8] needs 88");
  CHECK(tensor_error([](json& t) { t["embedding"]["data"][87] = json::array({1}); }) ==
        at + ".data[87]: must be a number, got [1]");
  // Nested: an array's length before anything inside it.
  auto nested = [](json& t) {
    json rows = json::array();
    for (int r = 0; r < 11; ++r) rows.push_back(json::array({1, 2, 3, 4, 5, 6, 7, 8}));
    t["embedding"]["data"] = rows;
  };
  CHECK(tensor_error([&](json& t) {
          nested(t);
          t["embedding"]["data"][2][5] = nullptr;
          t["embedding"]["data"].erase(10);
        }) == at + ".data: must be an array of 11 arrays to match shape [11,8]");
  CHECK(tensor_error([&](json& t) {
          nested(t);
          t["embedding"]["data"][2][5] = nullptr;
          t["embedding"]["data"][4].erase(0);
        }) == at + ".data[2][5]: must be a number, got null");
  CHECK(tensor_error([&](json& t) {
          nested(t);
          t["embedding"]["data"][4].erase(0);
        }) == at + ".data[4]: must be an array of 8 numbers to match shape [11,8]");
  // A number beyond double's range anywhere in the tensor comes first.
  const Model m = testing::random_model(testing::small_config(), false, false, 4);
  std::string text = weights_json(m.config, m.weights, false);
  const size_t shape = text.find("[11,8]", text.find("\"embedding\""));
  text.replace(shape, 6, "[11,8e999],\"x\":1");
  CHECK(tensor_error_in(text) == at + ": number overflow parsing '8e999'");
}

TEST_CASE("escaped spellings of dtype and base64 read the same floats", "[weights]") {
  const Model m = testing::random_model(testing::small_config(), false, false, 5);
  std::string text = weights_json(m.config, m.weights, true);
  // "f32" as "f\u0033\u0032", and every 'A' of the base64 as "\u0041".
  for (size_t at = text.find("\"f32\""); at != std::string::npos;
       at = text.find("\"f32\"", at + 1)) {
    text.replace(at, 5, "\"f\\u0033\\u0032\"");
  }
  std::string escaped;
  size_t done = 0;
  for (size_t begin = text.find("\"b64\":\""); begin != std::string::npos;
       begin = text.find("\"b64\":\"", done)) {
    begin += 7;
    const size_t end = text.find('"', begin);
    escaped += text.substr(done, begin - done);
    for (size_t i = begin; i < end; ++i) {
      escaped += text[i] == 'A' ? std::string("\\u0041") : std::string(1, text[i]);
    }
    done = end;
  }
  escaped += text.substr(done);
  REQUIRE(escaped.find("\\u0041") != std::string::npos);
  TempDir d;
  const WeightsFile back = read_weights(d.write("weights.json", escaped));
  CHECK(bits(back.weights) == bits(m.weights));
}
