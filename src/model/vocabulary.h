// The vocabulary: token id <-> word, read from vocab.json (format v1).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nextword {

class Vocabulary {
 public:
  Vocabulary() = default;
  explicit Vocabulary(std::vector<std::string> words, const std::string& file = "vocab.json");

  // vocab.json is either ["w0", "w1", ...] or {"w0": 0, "w1": 1, ...}.
  static Vocabulary from_json(const nlohmann::json& vocab, const std::string& file);

  int size() const { return static_cast<int>(words_.size()); }
  const std::string& word(int id) const { return words_[static_cast<size_t>(id)]; }
  int find(std::string_view word) const;  // -1 when absent
  const std::vector<std::string>& words() const { return words_; }

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, int> ids_;
};

// Words as ids; unknown words, and words spelled like the special tokens,
// become unk_id (the rule prediction uses).
std::vector<int> to_ids(const std::vector<std::string>& words, const Vocabulary& vocab, int unk_id,
                        int bos_id);

}  // namespace nextword
