// A validating JSON scanner that builds only the skeleton of a document.
//
// Objects are split into their members; every other value is kept as its
// text. The weights loader uses it to find each tensor, whose numbers
// float_text.h then reads straight into float32 storage: building nlohmann's
// DOM of millions of numbers is several times slower and takes many times
// the memory of the floats (`nextword bench` measures both). Small values (the config, a
// shape) are still handed to nlohmann, from their text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextword::json_scan {

struct Member;

struct Node {
  std::string_view text;        // the value's JSON text
  std::vector<Member> members;  // objects only, in file order

  bool is_object() const { return !text.empty() && text.front() == '{'; }
  // The member named `key` (the last one, should it repeat), or null.
  const Node* find(std::string_view key) const;
};

struct Member {
  std::string first;  // the key
  Node second;        // the value
};

// Called now and then with the position reached in the text: every
// kProgressEvery array elements, by the scanner and by float_text's readers.
using Progress = std::function<void(const char*)>;
constexpr size_t kProgressEvery = size_t{1} << 16;

// JSON's whitespace and digits (RFC 8259), for every reader of its text.
constexpr bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Validates `text` as one JSON value (RFC 8259; strings must be UTF-8) and
// returns its skeleton, or nullopt with *error_offset set to where it stops
// being JSON.
std::optional<Node> scan(std::string_view text, size_t* error_offset,
                         const Progress& progress = nullptr);

// The path ("config.d_model", "tensors.embedding.shape") of the first key
// that an object of the skeleton repeats, or nullopt. JSON leaves repeated
// names to the reader; nextword refuses them rather than pick one silently.
std::optional<std::string> first_duplicate(const Node& node);

// Small JSON text (a config, a header, a vocabulary) parsed by nlohmann;
// throws model_error(file, field, ...) with nlohmann's reason and the byte
// offset, for text that is not JSON and for numbers beyond double's range.
// Text longer than max_bytes is refused unparsed: a DOM takes many times the
// text's size, and a hostile file must not take the machine's memory.
constexpr size_t kMaxSmallJson = size_t{64} << 20;
nlohmann::json parse_small(std::string_view text, const std::string& file, const std::string& field,
                           size_t max_bytes = kMaxSmallJson);

// Throws what parse_small throws for `text`, without keeping a DOM: for
// scanned text, that is a number beyond double's range, or nothing.
void check_small(std::string_view text, const std::string& file, const std::string& field);

// A string value's characters when it has no escapes (the common case for
// keys and base64), else nullopt.
std::optional<std::string_view> plain_string(std::string_view text);

}  // namespace nextword::json_scan
