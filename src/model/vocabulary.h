// The vocabulary: token id <-> word, read from vocab.json (format v1).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace nextword {

class Vocabulary {
 public:
  Vocabulary() = default;
  explicit Vocabulary(std::vector<std::string> words, const std::string& file = "vocab.json");

  // vocab.json is either ["w0", "w1", ...] or {"w0": 0, "w1": 1, ...}.
  static Vocabulary from_json(const nlohmann::json& vocab, const std::string& file);
  // The words of a vocab.json, which must not be empty.
  static Vocabulary from_words(std::vector<std::string> words, const std::string& file);

  int size() const { return static_cast<int>(words_.size()); }
  const std::string& word(int id) const { return words_[static_cast<size_t>(id)]; }
  int find(std::string_view word) const;  // -1 when absent
  const std::vector<std::string>& words() const { return words_; }

 private:
  // Which slot of ids_ a word's id sits in, or would.
  size_t slot_of(std::string_view word) const;

  std::vector<std::string> words_;
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
