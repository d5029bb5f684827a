// Number text into float32: the values nlohmann reads (double, then
// static_cast<float>), the nearest float32 by std::from_chars, and where
// read_floats stops on an array that breaks its shape.
#include "format/float_text.h"

#include <catch2/catch.hpp>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "weight_bits.h"

using namespace nextword;
using float_text::Failure;
using Why = Failure::Why;
using testing::bits_of;

namespace {

// True when every number was read.
bool reads(std::string_view array, const std::vector<int64_t>& shape, float* out) {
  return !float_text::read_floats(array, shape, out).has_value();
}

// Where reading `array` as `shape` stops (it must stop).
Failure failure_of(std::string_view array, const std::vector<int64_t>& shape) {
  std::vector<float> out(64);
  const std::optional<Failure> failure = float_text::read_floats(array, shape, out.data());
  REQUIRE(failure.has_value());
  return *failure;
}

float parsed(const std::string& text) {
  float value = 0;
  const char* next = nullptr;
  REQUIRE(float_text::parse_float(text.data(), text.data() + text.size(), &value, &next));
  CHECK(next == text.data() + text.size());
  return value;
}

}  // namespace

TEST_CASE("numbers are read into float32 exactly as nlohmann reads them", "[weights][json]") {
  float out[6] = {};
  CHECK(reads("[0.1, -0, 1e-45, 3.4028234e38, 1E2, 5]", {6}, out));
  CHECK(out[0] == 0.1f);
  CHECK(std::signbit(out[1]));
  CHECK(out[2] == std::numeric_limits<float>::denorm_min());
  CHECK(out[3] == FLT_MAX);
  CHECK(out[4] == 100.0f);
  CHECK(reads("[[1,2,3],[4,5,6]]", {2, 3}, out));
  CHECK(out[5] == 6.0f);
  CHECK(reads("[1e-50]", {1}, out));  // underflow rounds to 0, as in the DOM
  CHECK(out[0] == 0.0f);
  CHECK_FALSE(reads("[1e39]", {1}, out));  // beyond float32
  CHECK_FALSE(reads("[1,2]", {3}, out));
  CHECK_FALSE(reads("[1,2,3,4]", {3}, out));
  CHECK_FALSE(reads("[[1,2],[3,4,5]]", {2, 3}, out));
  CHECK_FALSE(reads("[[1,2,3]]", {2, 3}, out));
  CHECK_FALSE(reads("[1,\"2\",3]", {3}, out));
  CHECK_FALSE(reads("[1,null,3]", {3}, out));
  CHECK_FALSE(reads("{}", {1}, out));
}

TEST_CASE("every number is the nearest float32, as std::from_chars rounds it", "[weights][json]") {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> exponent(-60, 45), digits(1, 19);
  for (int trial = 0; trial < 20000; ++trial) {
    // A decimal of up to 19 significant digits (past the fast path's exact
    // mantissa sometimes) and an exponent around float32's range.
    std::string text = trial % 3 == 0 ? "-" : "";
    const int n = digits(rng);
    text += static_cast<char>('1' + rng() % 9);
    if (n > 1) text += '.';
    for (int i = 1; i < n; ++i) text += static_cast<char>('0' + rng() % 10);
    text += 'e' + std::to_string(exponent(rng));
    INFO(text);
    float expected = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), expected);
    if (result.ec != std::errc()) continue;  // beyond float32: the nlohmann case below
    CHECK(bits_of(parsed(text)) == bits_of(expected));
  }
}

TEST_CASE("shortest float32 text reads back as nlohmann's double cast to float",
          "[weights][json]") {
  std::mt19937 rng(12);
  int compared = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    uint32_t b = rng();
    float x = 0;
    std::memcpy(&x, &b, 4);
    if (!std::isfinite(x)) continue;
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;
    const std::string text(buffer, end);
    INFO(text);
    const auto theirs = static_cast<float>(nlohmann::json::parse(text).get<double>());
    CHECK(bits_of(parsed(text)) == bits_of(theirs));
    CHECK(bits_of(parsed(text)) == bits_of(x));
    ++compared;
  }
  CHECK(compared > 19000);
  // Beyond float32 either way, as nlohmann then static_cast<float>.
  CHECK(parsed("1e-50") == 0.0f);
  CHECK(std::isinf(parsed("1e39")));
  CHECK(std::isinf(parsed("-1e39")));
  CHECK(std::signbit(parsed("-1e39")));
}

TEST_CASE("read_floats says where it stopped, the array's length first", "[weights][json]") {
  Failure f = failure_of("{}", {1});
  CHECK(f.why == Why::kNotAnArray);
  CHECK(f.where.empty());

  f = failure_of("[1,2]", {3});
  CHECK(f.why == Why::kLength);
  CHECK(f.length == 2);
  CHECK(f.where.empty());
  // The length of the whole comes before the element that is not a number.
  f = failure_of("[1,\"x\",3,{\"a\":[1,2]}]", {3});
  CHECK(f.why == Why::kLength);
  CHECK(f.length == 4);
  f = failure_of("[1,[2],3]", {3});
  CHECK(f.why == Why::kNotNumber);
  CHECK(f.where == "[1]");
  CHECK(f.value == "[2]");
  f = failure_of("[1, 2, 3e39]", {3});
  CHECK(f.why == Why::kNotFinite);
  CHECK(f.where == "[2]");
  CHECK(f.value == "3e39");
  // Flat data for a matrix is read as flat.
  f = failure_of("[1,2,3,4,5]", {2, 3});
  CHECK(f.why == Why::kLength);
  CHECK(f.length == 5);

  // Nested: each array's length before anything inside it.
  f = failure_of("[[1,2],[3,4,5]]", {2, 3});
  CHECK(f.why == Why::kShape);
  CHECK(f.where == "[0]");
  CHECK(f.depth == 1);
  CHECK(f.length == 2);
  f = failure_of("[[1,\"x\",3]]", {2, 3});
  CHECK(f.why == Why::kShape);
  CHECK(f.where.empty());
  CHECK(f.depth == 0);
  CHECK(f.length == 1);
  f = failure_of("[[1,2,3],[4,5,6],[7,8,9]]", {2, 3});
  CHECK(f.why == Why::kShape);
  CHECK(f.where.empty());
  CHECK(f.length == 3);
  f = failure_of("[[1,2,3],4]", {2, 3});
  CHECK(f.why == Why::kShape);
  CHECK(f.where == "[1]");
  CHECK(f.depth == 1);
  f = failure_of("[[1,2,3],[4,null,6]]", {2, 3});
  CHECK(f.why == Why::kNotNumber);
  CHECK(f.where == "[1][1]");
  CHECK(f.value == "null");
  f = failure_of("[[[1],[2]],[[3],[4e39]]]", {2, 2, 1});
  CHECK(f.why == Why::kNotFinite);
  CHECK(f.where == "[1][1][0]");
  CHECK(f.value == "4e39");
  // The first fault wins; what follows it is skipped, strings and all.
  f = failure_of("[[1,\"a\\\"],\",3],[4,5,\"]\"]]", {2, 3});
  CHECK(f.why == Why::kNotNumber);
  CHECK(f.where == "[0][1]");
  CHECK(f.value == "\"a\\\"],\"");
}
