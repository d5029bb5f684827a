// The three forms of the weights file: the DOM-free JSON scanner against
// nlohmann's parser, lossless round trips between the forms, and the checks
// a safetensors file must pass before anything is mapped or used.
#include "model/weights_file.h"

#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "base/error.h"
#include "model/json_scan.h"
#include "temp_dir.h"
#include "test_models.h"

using namespace nextword;
using nlohmann::json;

namespace {

using testing::TempDir;

// nlohmann's verdict on the syntax, or nullopt when it stopped at a number
// beyond double's range (out_of_range.406) before reaching the end: such a
// number is valid JSON, which our reader refuses later as a number that is
// not a finite float32.
std::optional<bool> nlohmann_accepts(const std::string& text) {
  try {
    const json parsed = json::parse(text);
    return true;
  } catch (const json::out_of_range&) {
    return std::nullopt;
  } catch (const json::parse_error&) {
    return false;
  }
}

bool scans(const std::string& text) {
  size_t offset = 0;
  return json_scan::scan(text, &offset).has_value();
}

// The floats of every tensor, bit for bit.
std::vector<uint32_t> bits(const Weights& w) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    for (int64_t j = 0; j < w.tensors()[i].size(); ++j) {
      uint32_t b = 0;
      std::memcpy(&b, w.data(i) + j, 4);
      out.push_back(b);
    }
  }
  return out;
}

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

std::string safetensors_with(const std::string& header, const std::string& data) {
  const uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

// A safetensors file for small_weights-like config: one tensor set edited by `edit`.
std::string safetensors_error(const std::function<void(json&, std::string&)>& edit) {
  const Model m = testing::random_model(testing::small_config(), false, false, 3);
  const std::string bytes = weights_safetensors(m.config, m.weights);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  json header = json::parse(bytes.substr(8, n));
  std::string data = bytes.substr(8 + n);
  edit(header, data);
  TempDir d;
  const std::string path = d.write("weights.safetensors", safetensors_with(header.dump(), data));
  return testing::model_error_of([&] { read_weights(path); });
}

}  // namespace

TEST_CASE("the scanner accepts exactly the JSON nlohmann accepts", "[weights][json]") {
  const std::vector<std::string> cases = {"0",
                                          "-0",
                                          "01",
                                          "1.",
                                          ".5",
                                          "-",
                                          "1e",
                                          "1e+",
                                          "1E+5",
                                          "-1.5e-300",
                                          "2.",
                                          "[-00]",
                                          "[]",
                                          "[1,]",
                                          "[,1]",
                                          "[1 2]",
                                          "[[1],[2,3]]",
                                          " [ 1 , 2 ] ",
                                          "{}",
                                          "{\"a\":1,}",
                                          "{\"a\" 1}",
                                          "{a:1}",
                                          "{\"a\":1}x",
                                          "\"\"",
                                          "\"\\u00e9\"",
                                          "\"\\uD83D\\uDE00\"",
                                          "\"\\uD83D\"",
                                          "\"\\uDE00\"",
                                          "\"\\x\"",
                                          "\"\t\"",
                                          "\"\xc3\xa9\"",
                                          "\"\xc3\"",
                                          "\"\xed\xa0\x80\"",
                                          "\"\xf4\x90\x80\x80\"",
                                          "\"\xc0\xaf\"",
                                          "true",
                                          "tru",
                                          "nul",
                                          "null",
                                          "falsee",
                                          "",
                                          "   ",
                                          "[true,false,null,{\"x\":[\"y\"]}]"};
  for (const std::string& text : cases) {
    INFO(text);
    CHECK(std::optional<bool>(scans(text)) == nlohmann_accepts(text));
  }
  CHECK(scans("[1e400]"));  // JSON, though beyond double (and float32)
  // Random byte edits of a real weights file, against nlohmann as the oracle.
  const Model m = testing::random_model(testing::small_config(), true, true, 1);
  std::mt19937 rng(5);
  const std::string alphabet = "{}[]\",:.-+eE0123456789 \\tfnu\x80\xff";
  int valid = 0, compared = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = weights_json(m.config, m.weights, trial % 2 == 0);
    for (int edits = 1 + trial % 3; edits > 0; --edits) {
      text[rng() % text.size()] = alphabet[rng() % alphabet.size()];
    }
    const std::optional<bool> theirs = nlohmann_accepts(text);
    if (!theirs) continue;
    INFO(text);
    REQUIRE(scans(text) == *theirs);
    ++compared;
    valid += *theirs ? 1 : 0;
  }
  CHECK(compared > 2900);
  CHECK(valid > 100);  // the edits leave some documents valid
}

TEST_CASE("numbers are read into float32 exactly as nlohmann reads them", "[weights][json]") {
  float out[6] = {};
  CHECK(json_scan::read_floats("[0.1, -0, 1e-45, 3.4028234e38, 1E2, 5]", {6}, out));
  CHECK(out[0] == 0.1f);
  CHECK(std::signbit(out[1]));
  CHECK(out[2] == std::numeric_limits<float>::denorm_min());
  CHECK(out[3] == FLT_MAX);
  CHECK(out[4] == 100.0f);
  CHECK(json_scan::read_floats("[[1,2,3],[4,5,6]]", {2, 3}, out));
  CHECK(out[5] == 6.0f);
  CHECK(json_scan::read_floats("[1e-50]", {1}, out));  // underflow rounds to 0, as in the DOM
  CHECK(out[0] == 0.0f);
  CHECK_FALSE(json_scan::read_floats("[1e39]", {1}, out));  // beyond float32
  CHECK_FALSE(json_scan::read_floats("[1,2]", {3}, out));
  CHECK_FALSE(json_scan::read_floats("[1,2,3,4]", {3}, out));
  CHECK_FALSE(json_scan::read_floats("[[1,2],[3,4,5]]", {2, 3}, out));
  CHECK_FALSE(json_scan::read_floats("[[1,2,3]]", {2, 3}, out));
  CHECK_FALSE(json_scan::read_floats("[1,\"2\",3]", {3}, out));
  CHECK_FALSE(json_scan::read_floats("[1,null,3]", {3}, out));
  CHECK_FALSE(json_scan::read_floats("{}", {1}, out));
}

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

TEST_CASE("safetensors is mapped in place, and copied only when misaligned", "[weights]") {
  const Model m = testing::random_model(testing::small_config(), true, false, 2);
  TempDir d;
  const std::string bytes = weights_safetensors(m.config, m.weights);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK((8 + n) % 8 == 0);  // the header is padded so the data is aligned
  const WeightsFile mapped = read_weights(d.write("a.safetensors", bytes));
  CHECK_FALSE(mapped.weights.owns_storage());
  CHECK(bits(mapped.weights) == bits(m.weights));

  // One more byte of header shifts the data off 4-byte alignment.
  const std::string header = bytes.substr(8, n) + " ";
  const WeightsFile copied =
      read_weights(d.write("b.safetensors", safetensors_with(header, bytes.substr(8 + n))));
  CHECK(copied.weights.owns_storage());
  CHECK(bits(copied.weights) == bits(m.weights));
}

TEST_CASE("safetensors files are checked before use", "[weights]") {
  TempDir d;
  auto error_of = [&d](const std::string& bytes) -> std::string {
    try {
      read_weights(d.write("w.safetensors", bytes));
    } catch (const Error& e) {
      return e.what();
    }
    return "loaded";
  };
  CHECK_THAT(error_of("abc"), Catch::Contains("w.safetensors: too short for safetensors"));
  CHECK_THAT(error_of(safetensors_with("{}", "").substr(0, 9)),
             Catch::Contains("header length 2 does not fit the file (9 bytes)"));
  CHECK_THAT(error_of(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10)),
             Catch::Contains("does not fit the file"));
  CHECK_THAT(
      error_of(safetensors_with("{nope", "")),
      Catch::Contains("w.safetensors: header: not valid JSON: parse error at line 1, column 3"));
  CHECK_THAT(error_of(safetensors_with("[]", "")), Catch::Contains("header must be a JSON object"));
  CHECK_THAT(error_of(safetensors_with("{}", "")), Catch::Contains("__metadata__: missing"));

  CHECK_THAT(safetensors_error([](json& h, std::string&) { h["__metadata__"]["version"] = "2"; }),
             Catch::Contains("__metadata__.version: unsupported version \"2\""));
  CHECK_THAT(safetensors_error(
                 [](json& h, std::string&) { h["__metadata__"]["config"] = "{\"d_model\": 0}"; }),
             Catch::Contains("weights.safetensors: config.vocab_size: missing"));
  CHECK_THAT(safetensors_error([](json& h, std::string&) { h["embedding"]["dtype"] = "F16"; }),
             Catch::Contains("embedding.dtype: must be \"F32\"") && Catch::Contains("\"F16\""));
  CHECK_THAT(safetensors_error([](json& h, std::string&) {
               h["embedding"]["shape"] = {11, 7};
             }),
             Catch::Contains("embedding: shape [11,7], config needs [11,8]"));
  CHECK_THAT(safetensors_error([](json& h, std::string&) {
               h["layers.0.attn.wq"] = h["layers.0.attn.w_q"];
               h.erase("layers.0.attn.w_q");
             }),
             Catch::Contains("layers.0.attn.wq: unknown tensor for this config (did you mean "
                             "\"layers.0.attn.w_q\"?)"));
  CHECK_THAT(safetensors_error([](json& h, std::string&) { h.erase("classifier"); }),
             Catch::Contains("classifier: missing (config needs shape [11,8])"));
  CHECK_THAT(safetensors_error(
                 [](json& h, std::string&) { h["embedding"]["data_offsets"][1] = 1u << 30; }),
             Catch::Contains("embedding.data_offsets: [0, 1073741824] is not within the"));
  CHECK_THAT(safetensors_error([](json& h, std::string&) { h["embedding"]["data_offsets"] = "x"; }),
             Catch::Contains("embedding.data_offsets: must be [begin, end]"));
  CHECK_THAT(safetensors_error([](json& h, std::string&) {
               h["position"]["data_offsets"] = h["embedding"]["data_offsets"];
               h["position"]["shape"] = {6, 8};
             }),
             Catch::Contains("data_offsets: holds 352 bytes, shape [6,8] needs 192"));
  CHECK_THAT(safetensors_error([](json& h, std::string&) {
               // position takes embedding's bytes: an overlap (and a gap where it was).
               const uint64_t begin = h["embedding"]["data_offsets"][0];
               h["position"]["data_offsets"] = {begin, begin + 192};
             }),
             Catch::Contains("overlaps another tensor"));
  CHECK_THAT(safetensors_error([](json&, std::string& data) { data += "abcd"; }),
             Catch::Contains("4 bytes after the last tensor"));
  CHECK_THAT(safetensors_error([](json& h, std::string& data) {
               const uint64_t begin = h["classifier"]["data_offsets"][0];
               const float nan = std::numeric_limits<float>::quiet_NaN();
               std::memcpy(data.data() + begin + 8, &nan, 4);
             }),
             Catch::Contains("classifier: element 2 is not finite"));
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
