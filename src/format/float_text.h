// JSON number text into float32, for the tensors of weights.json.
//
// The loader reads millions of numbers; going through nlohmann's DOM (a
// double per number, then static_cast<float>) is several times slower and
// takes many times the memory of the floats (`nextword bench` measures
// both). These readers
// take the numbers straight from the text into float32 storage.
//
// Guarantee: every number becomes the float32 nearest to its decimal value
// (ties to even), with underflow to zero (or a subnormal) and overflow to
// infinity, which read_floats refuses. That is the float nlohmann's double
// followed by static_cast<float> gives, except where that double rounding
// errs: a decimal within half a double ulp of the point halfway between two
// floats, without being on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/json_scan.h"

namespace nextword::float_text {

// The valid JSON number starting at p (text up to end), rounded to the
// nearest float32: the common case (an exact mantissa, a modest exponent) in
// a few operations, the rest by std::from_chars. Sets *next past the number;
// false only for text that is not a number.
bool parse_float(const char* p, const char* end, float* out, const char** next);

using Progress = json_scan::Progress;

// Why read_floats stopped, and where: the first fault in the order a reader
// of the whole value meets them (an array's length before its elements).
struct Failure {
  enum class Why {
    kNotAnArray,  // flat: the value itself is not an array
    kLength,      // flat: `length` elements, not the product of the shape
    kShape,       // nested: the value at `where` is not an array of shape[depth] elements
    kNotNumber,   // the element at `where` is not a number
    kNotFinite,   // the element at `where` is beyond float32
  };
  Why why = Why::kNotAnArray;
  std::string where;       // "" for the whole value, "[1]" or "[1][0]" below it
  size_t depth = 0;        // kShape: the dimension of the array at `where`
  size_t length = 0;       // kLength: how many elements the array has
  std::string_view value;  // kNotNumber, kNotFinite: the element's text
};

// Reads the numbers of scanned (valid JSON) array text into out[0 .. product
// of shape): either flat or nested exactly as `shape` says (data/FORMAT.md).
// Returns nullopt when every number was read, else where it failed, with
// `out` partly written.
std::optional<Failure> read_floats(std::string_view array, const std::vector<int64_t>& shape,
                                   float* out, const Progress& progress = nullptr);

}  // namespace nextword::float_text
