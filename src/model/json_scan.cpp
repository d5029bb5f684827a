#include "model/json_scan.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "base/error.h"
#include "text/utf8.h"

namespace nextword::json_scan {
namespace {

// Deeper nesting than any model file needs; it bounds the recursion.
constexpr int kMaxDepth = 512;
// How many array elements go by between calls to `progress`.
constexpr size_t kProgressEvery = size_t{1} << 16;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// True when none of the eight bytes at p needs a closer look inside a
// string: no quote, backslash, control character or non-ASCII byte (SWAR).
bool plain_eight(const char* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);
  constexpr uint64_t kOnes = 0x0101010101010101u, kHigh = 0x8080808080808080u;
  auto has_zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t below_space = (v - kOnes * 0x20) & ~v & kHigh;  // exact once no high bit is set
  return ((v & kHigh) | has_zero_byte(v ^ (kOnes * '"')) | has_zero_byte(v ^ (kOnes * '\\')) |
          below_space) == 0;
}

class Scanner {
 public:
  Scanner(std::string_view text, const Progress& progress)
      : start_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        progress_(progress) {}

  std::optional<Node> document(size_t* error_offset) {
    Node root;
    if (value(&root)) {
      space();
      if (p_ == end_) return root;
    }
    *error_offset = static_cast<size_t>(p_ - start_);
    return std::nullopt;
  }

 private:
  // The hot loops work on a local copy of p_: a store to p_ may alias the
  // text as far as the compiler knows, so it would be written back per byte.
  void space() {
    const char* p = p_;
    while (p < end_ && is_space(*p)) ++p;
    p_ = p;
  }

  // One value; its skeleton goes to `node` unless that is null (array
  // elements, which the loader reads from the array's text).
  bool value(Node* node) {
    space();
    if (p_ == end_) return false;
    const char* begin = p_;
    bool ok = false;
    switch (*p_) {
      case '{': ok = object(node); break;
      case '[': ok = array(); break;
      case '"': ok = string(); break;
      case 't': ok = literal("true"); break;
      case 'f': ok = literal("false"); break;
      case 'n': ok = literal("null"); break;
      default: ok = number(); break;
    }
    if (ok && node != nullptr) node->text = {begin, static_cast<size_t>(p_ - begin)};
    return ok;
  }

  bool object(Node* node) {
    if (++depth_ > kMaxDepth) return false;
    ++p_;
    space();
    if (p_ < end_ && *p_ == '}') return close();
    for (;;) {
      space();
      if (p_ == end_ || *p_ != '"') return false;
      const char* key = p_;
      if (!string()) return false;
      const std::string_view key_text(key, static_cast<size_t>(p_ - key));
      space();
      if (p_ == end_ || *p_ != ':') return false;
      ++p_;
      Node child;
      if (!value(node != nullptr ? &child : nullptr)) return false;
      if (node != nullptr) node->members.push_back(Member{decode_key(key_text), std::move(child)});
      space();
      if (p_ == end_) return false;
      if (*p_ == '}') return close();
      if (*p_++ != ',') return false;
    }
  }

  bool array() {
    if (++depth_ > kMaxDepth) return false;
    ++p_;
    space();
    if (p_ < end_ && *p_ == ']') return close();
    for (;;) {
      space();
      // Numbers first: the arrays of a weights file hold millions of them.
      if (p_ < end_ && (*p_ == '-' || is_digit(*p_))) {
        if (!number()) return false;
      } else if (!value(nullptr)) {
        return false;
      }
      space();
      if (p_ == end_) return false;
      if (*p_ == ']') return close();
      if (*p_++ != ',') return false;
      if (++elements_ % kProgressEvery == 0 && progress_) progress_(p_);
    }
  }

  bool close() {
    ++p_;
    --depth_;
    return true;
  }

  bool string() {
    ++p_;
    while (p_ < end_) {
      while (end_ - p_ >= 8 && plain_eight(p_)) p_ += 8;  // base64 goes by in blocks
      if (p_ == end_) break;
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (!escape()) return false;
      } else if (c < 0x80) {
        ++p_;  // ASCII: all of base64
      } else {
        const size_t n = utf8_sequence_length(p_, end_);
        if (n == 0) return false;
        p_ += n;
      }
    }
    return false;
  }

  // After a backslash; a \u escape of a UTF-16 surrogate must come in a pair.
  bool escape() {
    ++p_;
    if (p_ == end_) return false;
    if (*p_ != 'u') {
      const bool known = std::string_view("\"\\/bfnrt").find(*p_) != std::string_view::npos;
      ++p_;
      return known;
    }
    const int unit = hex4();
    if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return false;
    if (unit < 0xD800 || unit > 0xDBFF) return true;
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
    ++p_;
    const int low = hex4();
    return low >= 0xDC00 && low <= 0xDFFF;
  }

  // At the 'u' of \uXXXX: the code unit, or -1.
  int hex4() {
    ++p_;
    if (end_ - p_ < 4) return -1;
    int unit = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      if (!is_hex(*p_)) return -1;
      unit = unit * 16 + (is_digit(*p_) ? *p_ - '0' : (*p_ | 0x20) - 'a' + 10);
    }
    return unit;
  }

  bool digits() {
    const char* p = p_;
    if (p == end_ || !is_digit(*p)) return false;
    while (p < end_ && is_digit(*p)) ++p;
    p_ = p;
    return true;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number() {
    if (*p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    return true;
  }

  bool literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  static std::string decode_key(std::string_view text) {
    if (auto plain = plain_string(text)) return std::string(*plain);
    return nlohmann::json::parse(text).get<std::string>();  // valid: scanned above
  }

  const char* start_;
  const char* p_;
  const char* end_;
  const Progress& progress_;
  int depth_ = 0;
  size_t elements_ = 0;  // array elements so far, in all arrays
};

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

// A valid JSON number at p, rounded to the nearest float32: the common case
// (an exact mantissa, a modest exponent) in a few operations, the rest by
// std::from_chars. Sets *next past the number; false when it is beyond float32.
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
    // Beyond float32: overflow is refused by the caller; underflow rounds to
    // zero, as the DOM reader (double, then float) does.
    const std::string text(start, result.ptr);
    value = static_cast<float>(std::strtod(text.c_str(), nullptr));
  } else if (result.ec != std::errc()) {
    return false;
  }
  *out = value;
  return true;
}

// Reads scanned, valid array text into float32s.
class FloatReader {
 public:
  FloatReader(std::string_view text, float* out, size_t count, const Progress& progress)
      : p_(text.data()),
        end_(text.data() + text.size()),
        out_(out),
        count_(count),
        progress_(progress) {}

  bool flat() { return array(nullptr, 0) && written_ == count_; }
  bool nested(const std::vector<int64_t>& shape) { return array(&shape, 0) && written_ == count_; }
  bool first_element_is_array() {
    const char* p = p_ + 1;
    while (p < end_ && is_space(*p)) ++p;
    return p < end_ && *p == '[';
  }

 private:
  void space() {
    while (p_ < end_ && is_space(*p_)) ++p_;
  }

  // An array of numbers, or (with a shape) of exactly shape[depth] elements,
  // nested down to the last dimension.
  bool array(const std::vector<int64_t>* shape, size_t depth) {
    space();
    if (p_ == end_ || *p_ != '[') return false;
    ++p_;
    const bool leaf = shape == nullptr || depth + 1 == shape->size();
    const int64_t expected = shape == nullptr ? -1 : (*shape)[depth];
    int64_t n = 0;
    space();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return expected <= 0;
    }
    for (;;) {
      if (!(leaf ? element() : array(shape, depth + 1))) return false;
      ++n;
      space();
      if (p_ == end_) return false;
      if (*p_ == ']') {
        ++p_;
        return expected < 0 || n == expected;
      }
      ++p_;  // ','
      if (expected >= 0 && n >= expected) return false;
    }
  }

  bool element() {
    space();
    if (p_ == end_ || (*p_ != '-' && !is_digit(*p_)) || written_ == count_) return false;
    float value = 0;
    const char* next = nullptr;
    if (!parse_float(p_, end_, &value, &next) || !std::isfinite(value)) return false;
    p_ = next;
    out_[written_++] = value;
    if (written_ % kProgressEvery == 0 && progress_) progress_(p_);
    return true;
  }

  const char* p_;
  const char* end_;
  float* out_;
  size_t count_;
  const Progress& progress_;
  size_t written_ = 0;
};

}  // namespace

const Node* Node::find(std::string_view key) const {
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (it->first == key) return &it->second;
  }
  return nullptr;
}

std::optional<Node> scan(std::string_view text, size_t* error_offset, const Progress& progress) {
  return Scanner(text, progress).document(error_offset);
}

std::optional<std::string> first_duplicate(const Node& node) {
  std::unordered_set<std::string_view> seen;
  for (const auto& [key, value] : node.members) {
    if (!seen.insert(key).second) return key;
  }
  for (const auto& [key, value] : node.members) {
    if (std::optional<std::string> inner = first_duplicate(value)) return key + "." + *inner;
  }
  return std::nullopt;
}

nlohmann::json parse_small(std::string_view text, const std::string& file, const std::string& field,
                           size_t max_bytes) {
  if (text.size() > max_bytes) {
    throw model_error(file, field,
                      "is " + std::to_string(text.size()) + " bytes of JSON, more than the " +
                          std::to_string(max_bytes) + " it may take");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    std::string what = e.what();
    if (const size_t end = what.find("] "); end != std::string::npos) what.erase(0, end + 2);
    if (const auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
      what = "not valid JSON: " + what + " (byte " + std::to_string(parse->byte) + ")";
    }
    throw model_error(file, field, what);
  }
}

std::optional<std::string_view> plain_string(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::nullopt;
  const std::string_view inner = text.substr(1, text.size() - 2);
  if (inner.find('\\') != std::string_view::npos) return std::nullopt;
  return inner;
}

bool read_floats(std::string_view array, const std::vector<int64_t>& shape, float* out,
                 const Progress& progress) {
  size_t count = 1;
  for (int64_t dim : shape) count *= static_cast<size_t>(dim);
  FloatReader reader(array, out, count, progress);
  // Either flat, or nested exactly as the shape says (see data/FORMAT.md).
  if (shape.size() > 1 && reader.first_element_is_array()) return reader.nested(shape);
  return reader.flat();
}

}  // namespace nextword::json_scan
