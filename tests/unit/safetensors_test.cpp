// weights.safetensors: mapped in place when aligned, copied when not, and
// every header field checked before anything is mapped or used; F16 and BF16
// tensors widened to float32 at load, and written rounded to nearest even.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "base/error.h"
#include "base/half_float.h"
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

// A safetensors file of a small_config model, its header and data edited by `edit`.
std::string edited_safetensors(const std::function<void(json&, std::string&)>& edit) {
  const Model m = testing::random_model(testing::small_config(), false, false, 3);
  const std::string bytes = weights_safetensors(m.config, m.weights);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  json header = json::parse(bytes.substr(8, n));
  std::string data = bytes.substr(8 + n);
  edit(header, data);
  return safetensors_with(header.dump(), data);
}

std::string safetensors_error(const std::function<void(json&, std::string&)>& edit) {
  TempDir d;
  const std::string path = d.write("weights.safetensors", edited_safetensors(edit));
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
  CHECK_THAT(safetensors_error([](json& h, std::string&) { h["embedding"]["dtype"] = "F64"; }),
             Catch::Contains("embedding.dtype: must be \"F32\", \"F16\" or \"BF16\"") &&
                 Catch::Contains("got \"F64\""));
  CHECK_THAT(safetensors_error([](json& h, std::string&) { h["embedding"].erase("dtype"); }),
             Catch::Contains("embedding.dtype: must be") && Catch::Contains("got nothing"));
  // An F16 tensor holds 2 bytes a value: float32's byte count is wrong for it.
  CHECK_THAT(safetensors_error([](json& h, std::string&) { h["embedding"]["dtype"] = "F16"; }),
             Catch::Contains("embedding.data_offsets: holds 352 bytes, shape [11,8] needs 176"));
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

namespace {

float f16(uint16_t h) { return f16_to_float(h); }
uint32_t float_bits(float x) { return std::bit_cast<uint32_t>(x); }

// The value of an F16 bit pattern computed another way: sign, exponent and
// mantissa by the IEEE 754 definition, in double.
double f16_by_definition(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

}  // namespace

TEST_CASE("f16 and bf16 widen exactly and narrow to nearest even", "[weights]") {
  // Worked by hand: sign, 5 exponent bits (bias 15), 10 mantissa bits.
  CHECK(f16(0x3c00) == 1.0f);
  CHECK(f16(0xc100) == -2.5f);  // 1 10000 0100000000: -(1 + 1/4) * 2
  CHECK(f16(0x7bff) == 65504.0f);
  CHECK(f16(0x0001) == 0x1p-24f);  // the smallest subnormal
  CHECK(f16(0x03ff) == 1023 * 0x1p-24f);
  CHECK(f16(0x0400) == 0x1p-14f);                 // the smallest normal
  CHECK(float_bits(f16(0x8000)) == 0x80000000u);  // -0
  CHECK(float_bits(f16(0x8001)) == float_bits(-0x1p-24f));
  CHECK(f16(0x7c00) == std::numeric_limits<float>::infinity());
  CHECK(f16(0xfc00) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(f16(0x7e00)));
  CHECK(bf16_to_float(0x3f80) == 1.0f);
  CHECK(bf16_to_float(0xc020) == -2.5f);
  CHECK(float_bits(bf16_to_float(0x8001)) == 0x80010000u);  // a float32 subnormal, kept

  CHECK(float_to_f16(1.0f) == 0x3c00);
  CHECK(float_to_f16(-2.5f) == 0xc100);
  CHECK(float_to_f16(65504.0f) == 0x7bff);
  CHECK(float_to_f16(65519.0f) == 0x7bff);  // below the midpoint to 65536
  CHECK(float_to_f16(65520.0f) == 0x7c00);  // the midpoint: ties to even, which is inf
  CHECK(float_to_f16(-1e6f) == 0xfc00);
  CHECK(float_to_f16(0x1p-24f) == 0x0001);
  CHECK(float_to_f16(-0.0f) == 0x8000);
  CHECK(float_to_f16(0x1p-25f) == 0x0000);                 // half the smallest subnormal: ties to 0
  CHECK(float_to_f16(0x1.8p-25f) == 0x0001);               // above the midpoint
  CHECK(float_to_f16(3 * 0x1p-25f) == 0x0002);             // 1.5 subnormal steps: ties to even 2
  CHECK(float_to_f16(1 + 0x1p-11f) == 0x3c00);             // halfway 1 .. 1 + 2^-10: even 1
  CHECK(float_to_f16(1 + 3 * 0x1p-11f) == 0x3c02);         // halfway to 0x3c01 .. 0x3c02: even
  CHECK(float_to_f16(1 + 0x1p-11f + 0x1p-23f) == 0x3c01);  // just above halfway
  CHECK(float_to_f16(0x1.ff8p-15f) == 0x03ff);             // the largest subnormal, 1023 * 2^-24
  CHECK(float_to_f16(0x1.ffbp-15f) == 0x03ff);             // below the midpoint to 2^-14
  CHECK(float_to_f16(0x1.ffcp-15f) == 0x0400);  // the midpoint: even, the smallest normal
  CHECK((float_to_f16(std::numeric_limits<float>::quiet_NaN()) & 0x7e00) == 0x7e00);
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(float_to_bf16(1.0f / 3) == 0x3eab);  // 0x3eaaaaab: the dropped 0xaaab is above half
  CHECK(bf16_to_float(float_to_bf16(1.0f / 3)) == 0.333984375f);
  CHECK(float_to_bf16(1 + 0x1p-8f) == 0x3f80);                        // a tie: even
  CHECK(float_to_bf16(1 + 3 * 0x1p-8f) == 0x3f82);                    // a tie: even
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // beyond bf16: inf
  CHECK(is_inf_bf16(float_to_bf16(std::numeric_limits<float>::max())));

  // Every one of the 65,536 halves: the definition's value, and back to itself.
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto half = static_cast<uint16_t>(h);
    const float x = f16(half);
    if (std::isnan(x)) {
      CHECK((h & 0x7c00) == 0x7c00);
      continue;
    }
    if (!std::isinf(x)) REQUIRE(static_cast<double>(x) == f16_by_definition(half));
    REQUIRE(float_to_f16(x) == half);
    const uint32_t bf = std::isnan(bf16_to_float(half)) ? h | 0x40 : h;  // NaN: quiet
    REQUIRE(float_to_bf16(bf16_to_float(half)) == bf);
  }

  // Random float32s: nearest means within half a unit in the last place (2^-11
  // relative for normal halves, 2^-25 absolute for subnormals; bf16: 2^-8).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> exponent(-27.0f, 15.0f), mantissa(1.0f, 2.0f);
  double worst_f16 = 0, worst_bf16 = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x =
        std::ldexp(mantissa(rng), static_cast<int>(exponent(rng))) * (i % 2 != 0 ? -1.0f : 1.0f);
    const double back = f16(float_to_f16(x)), error = std::abs(back - x);
    REQUIRE(error <= std::max(std::abs(static_cast<double>(x)) * 0x1p-11, 0x1p-25));
    if (std::abs(x) >= 0x1p-14f) worst_f16 = std::max(worst_f16, error / std::abs(x));
    const double bf = bf16_to_float(float_to_bf16(x));
    worst_bf16 = std::max(worst_bf16, std::abs(bf - x) / std::abs(x));
  }
  CHECK(worst_f16 <= 0x1p-11);
  CHECK(worst_f16 > 0x1p-12);  // the bound is tight
  CHECK(worst_bf16 <= 0x1p-8);
}

TEST_CASE("safetensors of F16 and BF16 load as the rounded float32s", "[weights]") {
  const Model m = testing::random_model(testing::small_config(), true, true, 4);
  TempDir d;
  for (const TensorDtype dtype : {TensorDtype::kF16, TensorDtype::kBF16}) {
    const std::string bytes = weights_safetensors(m.config, m.weights, dtype);
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    const json header = json::parse(bytes.substr(8, n));
    CHECK(header["embedding"]["dtype"] == dtype_name(dtype));
    CHECK(header["embedding"]["data_offsets"] == json{0, 11 * 8 * 2});
    CHECK(bytes.size() - 8 - n == static_cast<size_t>(m.weights.parameter_count()) * 2);
    const WeightsFile w = read_weights(d.write("h.safetensors", bytes));
    CHECK(w.weights.owns_storage());  // converted once, into float32 storage of its own
    REQUIRE(w.weights.tensors().size() == m.weights.tensors().size());
    for (size_t t = 0; t < m.weights.tensors().size(); ++t) {
      for (int64_t i = 0; i < m.weights.tensors()[t].size(); ++i) {
        const float x = m.weights.data(t)[i];
        const float rounded =
            dtype == TensorDtype::kF16 ? f16(float_to_f16(x)) : bf16_to_float(float_to_bf16(x));
        REQUIRE(float_bits(w.weights.data(t)[i]) == float_bits(rounded));
      }
    }
    // Writing the loaded halves again gives the same file, byte for byte.
    CHECK(weights_safetensors(w.config, w.weights, dtype) == bytes);
  }
}

TEST_CASE("safetensors may mix F32, F16 and BF16, at any alignment", "[weights]") {
  const Model m = testing::random_model(testing::small_config(), false, false, 5);
  const std::string f16_file = weights_safetensors(m.config, m.weights, TensorDtype::kF16);
  uint64_t n = 0;
  std::memcpy(&n, f16_file.data(), 8);
  json header = json::parse(f16_file.substr(8, n));
  std::string data = f16_file.substr(8 + n);
  // The embedding back to float32 (its bytes appended, the offsets moved), one
  // matrix as bf16 (same size as f16: its halves rewritten in place).
  const auto e0 = header["embedding"]["data_offsets"][0].get<uint64_t>();
  const auto e1 = header["embedding"]["data_offsets"][1].get<uint64_t>();
  const std::string f32_embedding(reinterpret_cast<const char*>(m.weights.data(0)), 2 * (e1 - e0));
  data.erase(e0, e1 - e0);
  for (auto& [name, t] : header.items()) {
    if (name == "__metadata__" || name == "embedding") continue;
    t["data_offsets"] = {t["data_offsets"][0].get<uint64_t>() - (e1 - e0),
                         t["data_offsets"][1].get<uint64_t>() - (e1 - e0)};
  }
  header["embedding"] = {{"dtype", "F32"},
                         {"shape", {11, 8}},
                         {"data_offsets", {data.size(), data.size() + f32_embedding.size()}}};
  data += f32_embedding;
  const auto q0 = header["layers.1.attn.w_q"]["data_offsets"][0].get<uint64_t>();
  header["layers.1.attn.w_q"]["dtype"] = "BF16";
  size_t w_q = 0;
  while (m.weights.tensors()[w_q].name != "layers.1.attn.w_q") ++w_q;
  floats_to_bf16(m.weights.data(w_q), static_cast<size_t>(m.weights.tensors()[w_q].size()),
                 data.data() + q0);
  TempDir d;
  for (const char* pad : {"", " "}) {  // aligned, and one byte off
    const WeightsFile w =
        read_weights(d.write("mixed.safetensors", safetensors_with(header.dump() + pad, data)));
    CHECK(w.weights.owns_storage());
    CHECK(std::memcmp(w.weights.data(0), m.weights.data(0), f32_embedding.size()) == 0);
    CHECK(w.weights.data(w_q)[3] == bf16_to_float(float_to_bf16(m.weights.data(w_q)[3])));
    CHECK(w.weights.data(1)[2] == f16(float_to_f16(m.weights.data(1)[2])));
  }
}

TEST_CASE("half-precision infinities and NaNs are refused, and values beyond f16", "[weights]") {
  // The classifier as 88 halves (the first half of its float32 bytes), its
  // element 5 set to `value`.
  auto half_classifier = [](const char* dtype, uint16_t value) {
    return [=](json& h, std::string& data) {
      const auto begin = h["classifier"]["data_offsets"][0].get<uint64_t>();
      const uint64_t cut = (h["classifier"]["data_offsets"][1].get<uint64_t>() - begin) / 2;
      data.erase(begin + cut, cut);
      std::memcpy(data.data() + begin + 2 * 5, &value, 2);
      for (auto& [name, t] : h.items()) {
        if (name != "__metadata__" && t["data_offsets"][0].get<uint64_t>() > begin) {
          t["data_offsets"] = {t["data_offsets"][0].get<uint64_t>() - cut,
                               t["data_offsets"][1].get<uint64_t>() - cut};
        }
      }
      h["classifier"]["dtype"] = dtype;
      h["classifier"]["data_offsets"][1] = begin + cut;
    };
  };
  auto half_error = [&](const char* dtype, uint16_t value) {
    return safetensors_error(half_classifier(dtype, value));
  };
  TempDir d;
  const WeightsFile ok =
      read_weights(d.write("ok.safetensors", edited_safetensors(half_classifier("F16", 0xc100))));
  size_t classifier = 0;
  while (ok.weights.tensors()[classifier].name != "classifier") ++classifier;
  CHECK(ok.weights.data(classifier)[5] == -2.5f);
  CHECK_THAT(half_error("F16", 0x7c00), Catch::Contains("classifier: element 5 is not finite"));
  CHECK_THAT(half_error("F16", 0xfe00), Catch::Contains("classifier: element 5 is not finite"));
  CHECK_THAT(half_error("BF16", 0xff80), Catch::Contains("classifier: element 5 is not finite"));
  CHECK_THAT(half_error("BF16", 0x7fc1), Catch::Contains("classifier: element 5 is not finite"));

  Model m = testing::random_model(testing::small_config(), false, false, 6);
  m.weights.mutable_data(1)[4] = 65520.0f;  // rounds to inf as an F16
  try {
    weights_safetensors(m.config, m.weights, TensorDtype::kF16);
    FAIL("wrote 65520 as an F16");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kUsage);
    CHECK(e.message() ==
          "position: element 4 is 65520, beyond F16's range (largest 65504); --dtype bf16 or "
          "f32 holds it");
  }
  CHECK_NOTHROW(weights_safetensors(m.config, m.weights, TensorDtype::kBF16));
  m.weights.mutable_data(1)[4] = 65519.0f;  // still the largest half, 65504
  CHECK_NOTHROW(weights_safetensors(m.config, m.weights, TensorDtype::kF16));
}
