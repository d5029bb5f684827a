// The vocabulary: token id <-> word, read from vocab.json (format v1), or
// mapped from the vocab.bin made from it (model/vocab_index.h).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nextword {

// The hash that places a word in the vocabulary's table, the same on every
// machine and build because vocab.bin stores the table (data/FORMAT.md,
// "vocab.bin"): 8 bytes at a time, then a final mix.
uint64_t word_hash(std::string_view word);

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
  // The words and their table as they lie in memory that `owner` keeps
  // alive (a mapped vocab.bin), already checked: `ends` rising to
  // chars.size(), `ids` a power of two at least twice the words, each id
  // in exactly one slot.
  static Vocabulary from_table(std::shared_ptr<const void> owner, std::string_view chars,
                               std::span<const uint32_t> ends, std::span<const int32_t> ids);

  int size() const { return static_cast<int>(ends_.size()); }
  std::string_view word(int id) const {
    const auto i = static_cast<size_t>(id);
    const uint32_t begin = i == 0 ? 0 : ends_[i - 1];
    return chars_.substr(begin, ends_[i] - begin);
  }
  int find(std::string_view word) const;  // -1 when absent
  std::vector<std::string> words() const;

  // What vocab.bin stores (model/vocab_index.h).
  std::string_view chars() const { return chars_; }
  std::span<const uint32_t> ends() const { return ends_; }
  std::span<const int32_t> table() const { return ids_; }

 private:
  Vocabulary(Packed words, const std::string& file);
  // Which slot of ids_ a word's id sits in, or would.
  size_t slot_of(std::string_view word) const;

  // What the views below point into: the packed words and their table, or a
  // mapped vocab.bin (no copy at load).
  std::shared_ptr<const void> owner_;
  // The words end to end, not a string each: a string a word would make
  // loading a large vocabulary a visible share of a one-phrase process.
  std::string_view chars_;
  std::span<const uint32_t> ends_;
  // Open addressing (linear probing) over ids, -1 for an empty slot, at
  // most half full: no node or string copy per word.
  std::span<const int32_t> ids_;
};

// Words as ids; unknown words, and words spelled like the special tokens,
// become unk_id (the rule prediction uses).
std::vector<int> to_ids(const std::vector<std::string>& words, const Vocabulary& vocab, int unk_id,
                        int bos_id);

}  // namespace nextword
