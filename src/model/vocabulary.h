// The vocabulary: token id <-> word, read from vocab.json (format v1).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextword {

class Vocabulary {
 public:
  Vocabulary() = default;
  explicit Vocabulary(const std::vector<std::string>& words,
                      const std::string& file = "vocab.json");

  // vocab.json is either ["w0", "w1", ...] or {"w0": 0, "w1": 1, ...}.
  static Vocabulary from_json(const nlohmann::json& vocab, const std::string& file);
  // The words of a vocab.json, which must not be empty.
  static Vocabulary from_words(const std::vector<std::string>& words, const std::string& file);
  // Words end to end: word i is chars[ends[i - 1], ends[i]) (from 0 for i = 0).
  struct Packed {
    std::string chars;
    std::vector<uint32_t> ends;
  };
  // The same, packed.
  static Vocabulary from_packed(Packed words, const std::string& file);

  int size() const { return static_cast<int>(ends_.size()); }
  std::string_view word(int id) const {
    const auto i = static_cast<size_t>(id);
    const uint32_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(chars_).substr(begin, ends_[i] - begin);
  }
  int find(std::string_view word) const;  // -1 when absent
  std::vector<std::string> words() const;

 private:
  Vocabulary(Packed words, const std::string& file);
  // Which slot of ids_ a word's id sits in, or would.
  size_t slot_of(std::string_view word) const;

  // The words end to end, not a string each: reading a 65,536-word
  // vocabulary made as many strings, a tenth of a one-phrase process.
  std::string chars_;
  std::vector<uint32_t> ends_;
  // Open addressing (linear probing) over ids, -1 for an empty slot, at
  // most half full: no node or string copy per word, which for a 65,536-word
  // vocabulary was a fifth of a one-phrase process.
  std::vector<int> ids_;
};

// Words as ids; unknown words, and words spelled like the special tokens,
// become unk_id (the rule prediction uses).
std::vector<int> to_ids(const std::vector<std::string>& words, const Vocabulary& vocab, int unk_id,
                        int bos_id);

}  // namespace nextword
