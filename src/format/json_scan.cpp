#include "format/json_scan.h"

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "base/error.h"
#include "text/utf8.h"

namespace nextword::json_scan {
namespace {

// Deeper nesting than any model file needs; it bounds the recursion.
constexpr int kMaxDepth = 512;
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

namespace {

// Runs nlohmann's `parse`; its exception becomes model_error(file, field, ...)
// with nlohmann's reason and the byte offset.
template <class Parse>
auto nlohmann_parse(std::string_view text, const std::string& file, const std::string& field,
                    size_t max_bytes, Parse parse) {
  if (text.size() > max_bytes) {
    throw model_error(file, field,
                      "is " + std::to_string(text.size()) + " bytes of JSON, more than the " +
                          std::to_string(max_bytes) + " it may take");
  }
  try {
    return parse();
  } catch (const nlohmann::json::exception& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    std::string what = e.what();
    if (const size_t end = what.find("] "); end != std::string::npos) what.erase(0, end + 2);
    if (const auto* parse_error = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
      what = "not valid JSON: " + what + " (byte " + std::to_string(parse_error->byte) + ")";
    }
    throw model_error(file, field, what);
  }
}

}  // namespace

nlohmann::json parse_small(std::string_view text, const std::string& file, const std::string& field,
                           size_t max_bytes) {
  return nlohmann_parse(text, file, field, max_bytes,
                        [text] { return nlohmann::json::parse(text); });
}

void check_small(std::string_view text, const std::string& file, const std::string& field) {
  nlohmann_parse(text, file, field, kMaxSmallJson, [text] {
    // Every value is dropped as soon as it is read: no DOM is kept.
    return nlohmann::json::parse(
        text, [](int, nlohmann::json::parse_event_t, nlohmann::json&) { return false; });
  });
}

std::optional<std::string_view> plain_string(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::nullopt;
  const std::string_view inner = text.substr(1, text.size() - 2);
  if (inner.find('\\') != std::string_view::npos) return std::nullopt;
  return inner;
}

}  // namespace nextword::json_scan
