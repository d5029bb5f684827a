#include "model/json_scan.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

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
  void space() {
    while (p_ < end_ && is_space(*p_)) ++p_;
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
      if (node != nullptr) node->members.emplace_back(decode_key(key_text), std::move(child));
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
      if (!value(nullptr)) return false;
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
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (!escape()) return false;
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
    if (p_ == end_ || !is_digit(*p_)) return false;
    while (p_ < end_ && is_digit(*p_)) ++p_;
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
    const auto [next, ec] = std::from_chars(p_, end_, value);
    if (ec == std::errc::result_out_of_range) {
      // Beyond float32: overflow is refused below; underflow rounds to zero,
      // as the DOM reader (double, then float) does.
      const std::string digits(p_, next);
      value = static_cast<float>(std::strtod(digits.c_str(), nullptr));
    } else if (ec != std::errc()) {
      return false;
    }
    if (!std::isfinite(value)) return false;
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
