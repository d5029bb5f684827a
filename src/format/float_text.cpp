#include "format/float_text.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace nextword::float_text {
namespace {

using json_scan::is_digit;
using json_scan::is_space;
using json_scan::kProgressEvery;

// 10^0 .. 10^22, every one exact in double.
constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Eight ASCII digits at p as one number (SWAR: a few multiplications instead
// of eight dependent ones); false when they are not all digits.
bool eight_digits(const char* p, uint64_t* value) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);  // little-endian: p[0] is the low byte
  const uint64_t high = v & 0xF0F0F0F0F0F0F0F0u;
  if ((high | (((v + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) >> 4)) != 0x3333333333333333u) {
    return false;
  }
  v = (v & 0x0F0F0F0F0F0F0F0Fu) * 2561 >> 8;
  v = (v & 0x00FF00FF00FF00FFu) * 6553601 >> 16;
  *value = (v & 0x0000FFFF0000FFFFu) * 42949672960001u >> 32;
  return true;
}

// Appends the digits at p to *mantissa (counting them in *count), eight at a
// time where it can; *exact turns false once they no longer fit.
const char* digits_into(const char* p, const char* end, uint64_t* mantissa, int* count,
                        bool* exact) {
  constexpr uint64_t kRoomForEight = 100'000'000'000;  // * 10^8 stays below 2^64
  constexpr uint64_t kRoomForOne = 1'000'000'000'000'000'000;
  uint64_t eight = 0;
  while (end - p >= 8 && *mantissa < kRoomForEight && eight_digits(p, &eight)) {
    *mantissa = *mantissa * 100'000'000 + eight;
    *count += 8;
    p += 8;
  }
  for (; p < end && is_digit(*p); ++p, ++*count) {
    if (*mantissa >= kRoomForOne) *exact = false;
    if (*exact) *mantissa = *mantissa * 10 + static_cast<uint64_t>(*p - '0');
  }
  return p;
}

}  // namespace

bool parse_float(const char* p, const char* end, float* out, const char** next) {
  const char* start = p;
  const bool negative = *p == '-';
  if (negative) ++p;
  uint64_t mantissa = 0;
  int integer_digits = 0, fraction_digits = 0, exponent = 0;
  bool exact = true;
  p = digits_into(p, end, &mantissa, &integer_digits, &exact);
  if (p < end && *p == '.') {
    p = digits_into(p + 1, end, &mantissa, &fraction_digits, &exact);
    exponent = -fraction_digits;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool minus = *p == '-';
    if (*p == '-' || *p == '+') ++p;
    int e = 0;
    for (; p < end && is_digit(*p); ++p) e = e < 10000 ? e * 10 + (*p - '0') : e;
    exponent += minus ? -e : e;
  }
  *next = p;
  // Clinger's fast path: with the mantissa and 10^|exponent| exact in
  // double, one division or multiplication rounds correctly to double. The
  // double then rounds correctly to float unless it sits exactly halfway
  // between two floats, where the first rounding may have decided the tie.
  constexpr uint64_t kExactInDouble = uint64_t{1} << 53;
  if (exact && mantissa <= kExactInDouble && exponent >= -22 && exponent <= 22) {
    double value = static_cast<double>(mantissa);
    value = exponent < 0 ? value / kPowersOfTen[-exponent] : value * kPowersOfTen[exponent];
    const auto bits = std::bit_cast<uint64_t>(value);
    const bool halfway = (bits & 0x1FFFFFFF) == 0x10000000;
    const bool normal = value == 0.0 || (value >= 0x1p-126 && value < 0x1p127);
    if (!halfway && normal) {
      *out = static_cast<float>(negative ? -value : value);
      return true;
    }
  }
  float value = 0;
  const auto result = std::from_chars(start, end, value);
  *next = result.ptr;
  if (result.ec == std::errc::result_out_of_range) {
    // Beyond float32: overflow is refused by read_floats; underflow rounds
    // to zero, as nlohmann's double then static_cast<float> does.
    const std::string text(start, result.ptr);
    value = static_cast<float>(std::strtod(text.c_str(), nullptr));
  } else if (result.ec != std::errc()) {
    return false;
  }
  *out = value;
  return true;
}

namespace {

// Reads scanned, valid array text into float32s, stopping at the first fault.
class FloatReader {
 public:
  FloatReader(std::string_view text, const std::vector<int64_t>& shape, float* out,
              const Progress& progress)
      : p_(text.data()),
        end_(text.data() + text.size()),
        shape_(shape),
        out_(out),
        progress_(progress) {
    for (int64_t dim : shape) count_ *= static_cast<size_t>(dim);
  }

  std::optional<Failure> read() {
    if (p_ == end_ || *p_ != '[') return Failure{Failure::Why::kNotAnArray, "", 0, 0, {}};
    // Either flat, or nested exactly as the shape says.
    if (shape_.size() > 1 && first_element_is_array()) {
      std::string where;
      nested(0, where);
    } else {
      flat();
    }
    return failure_;
  }

 private:
  void space() {
    while (p_ < end_ && is_space(*p_)) ++p_;
  }

  bool first_element_is_array() const {
    const char* p = p_ + 1;
    while (p < end_ && is_space(*p)) ++p;
    return p < end_ && *p == '[';
  }

  // The elements of the array at p_ (its '['): `element(i)` reads each one,
  // or skips it once a fault was found. Returns how many there are.
  template <class Element>
  size_t elements(Element element) {
    ++p_;
    space();
    size_t n = 0;
    if (*p_ == ']') {
      ++p_;
      return 0;
    }
    for (;;) {
      if (failure_) {
        skip_value();
      } else {
        element(n);
      }
      ++n;
      space();
      if (*p_++ == ']') return n;
      space();  // past ','
    }
  }

  void flat() {
    const size_t n = elements([this](size_t i) { number(i, nullptr); });
    // A wrong length is found before any element by a reader of the whole.
    if (n != count_) failure_ = Failure{Failure::Why::kLength, "", 0, n, {}};
  }

  // The array at `where`, of shape_[depth] elements, nested down to numbers.
  void nested(size_t depth, std::string& where) {
    const auto expected = static_cast<size_t>(shape_[depth]);
    space();
    if (*p_ != '[') {
      skip_value();
      failure_ = Failure{Failure::Why::kShape, where, depth, 0, {}};
      return;
    }
    const bool leaf = depth + 1 == shape_.size();
    const size_t n = elements([&](size_t i) {
      if (i >= expected) {
        skip_value();  // too many: the length below says so
      } else if (leaf) {
        number(i, &where);
      } else {
        const size_t size = where.size();
        append_index(where, i);
        nested(depth + 1, where);
        where.resize(size);
      }
    });
    // This array's length comes before any fault inside it.
    if (n != expected) failure_ = Failure{Failure::Why::kShape, where, depth, n, {}};
  }

  // Element i of an array at *where (null: of the flat array).
  void number(size_t i, const std::string* where) {
    const char* begin = p_;
    float value = 0;
    const char* next = nullptr;
    const bool is_number = *p_ == '-' || is_digit(*p_);
    if (is_number && written_ < count_ && parse_float(p_, end_, &value, &next) &&
        std::isfinite(value)) {
      p_ = next;
      out_[written_++] = value;
      if (written_ % kProgressEvery == 0 && progress_) progress_(p_);
      return;
    }
    skip_value();
    if (!is_number || written_ < count_) {
      std::string at = where != nullptr ? *where : std::string();
      append_index(at, i);
      failure_ = Failure{is_number ? Failure::Why::kNotFinite : Failure::Why::kNotNumber,
                         std::move(at),
                         0,
                         0,
                         {begin, static_cast<size_t>(p_ - begin)}};
    }
  }

  static void append_index(std::string& where, size_t i) {
    where += '[';
    where += std::to_string(i);
    where += ']';
  }

  // Past one value of valid JSON.
  void skip_value() {
    int depth = 0;
    do {
      const char c = *p_;
      if (c == '"') {
        for (++p_; *p_ != '"'; ++p_) p_ += *p_ == '\\' ? 1 : 0;
        ++p_;
      } else if (c == '[' || c == '{') {
        ++depth, ++p_;
      } else if (c == ']' || c == '}') {
        --depth, ++p_;
      } else if (depth == 0) {  // a number or a literal
        while (p_ < end_ && *p_ != ',' && *p_ != ']' && *p_ != '}' && !is_space(*p_)) ++p_;
      } else {
        ++p_;
      }
    } while (depth > 0);
  }

  const char* p_;
  const char* end_;
  const std::vector<int64_t>& shape_;
  float* out_;
  const Progress& progress_;
  size_t count_ = 1;
  size_t written_ = 0;
  std::optional<Failure> failure_;
};

}  // namespace

std::optional<Failure> read_floats(std::string_view array, const std::vector<int64_t>& shape,
                                   float* out, const Progress& progress) {
  return FloatReader(array, shape, out, progress).read();
}

}  // namespace nextword::float_text
