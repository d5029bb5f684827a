// weights.safetensors: mapped in place when aligned, copied when not, and
// every header field checked before anything is mapped or used.
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "model/weights_file.h"
#include "temp_dir.h"
#include "test_models.h"
#include "weight_bits.h"

using namespace nextword;
using nlohmann::json;

namespace {

using testing::bits;
using testing::TempDir;

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
