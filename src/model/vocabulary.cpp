#include "model/vocabulary.h"

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace nextword {

namespace {

// The packed form of `words`.
Vocabulary::Packed packed(const std::vector<std::string>& words) {
  Vocabulary::Packed p;
  p.ends.reserve(words.size());
  for (const std::string& w : words) {
    p.chars += w;
    p.ends.push_back(static_cast<uint32_t>(p.chars.size()));
  }
  return p;
}

}  // namespace

Vocabulary::Vocabulary(const std::vector<std::string>& words, const std::string& file)
    : Vocabulary(packed(words), file) {}

Vocabulary::Vocabulary(Packed words, const std::string& file)
    : chars_(std::move(words.chars)), ends_(std::move(words.ends)) {
  size_t slots = 2;
  while (slots < 2 * ends_.size()) slots *= 2;
  ids_.assign(slots, -1);
  for (int i = 0; i < size(); ++i) {
    int& id = ids_[slot_of(word(i))];
    if (id >= 0) {
      throw model_error(
          file, "[" + std::to_string(i) + "]",
          "duplicate word \"" + std::string(word(i)) + "\" (also id " + std::to_string(id) + ")");
    }
    id = i;
  }
}

size_t Vocabulary::slot_of(std::string_view word) const {
  const size_t mask = ids_.size() - 1;
  size_t slot = std::hash<std::string_view>{}(word)&mask;
  while (ids_[slot] >= 0 && this->word(ids_[slot]) != word) slot = (slot + 1) & mask;
  return slot;
}

Vocabulary Vocabulary::from_words(const std::vector<std::string>& words, const std::string& file) {
  if (words.empty()) throw model_error(file, "", "the vocabulary is empty");
  return Vocabulary(words, file);
}

Vocabulary Vocabulary::from_packed(Packed words, const std::string& file) {
  if (words.ends.empty()) throw model_error(file, "", "the vocabulary is empty");
  return Vocabulary(std::move(words), file);
}

std::vector<std::string> Vocabulary::words() const {
  std::vector<std::string> all;
  all.reserve(ends_.size());
  for (int id = 0; id < size(); ++id) all.emplace_back(word(id));
  return all;
}

Vocabulary Vocabulary::from_json(const nlohmann::json& vocab, const std::string& file) {
  std::vector<std::string> words;
  if (vocab.is_array()) {
    words.reserve(vocab.size());
    for (size_t i = 0; i < vocab.size(); ++i) {
      if (!vocab[i].is_string()) {
        throw model_error(file, "[" + std::to_string(i) + "]",
                          "must be a string, got " + vocab[i].dump());
      }
      words.push_back(vocab[i].get<std::string>());
    }
  } else if (vocab.is_object()) {
    words.resize(vocab.size());
    std::vector<bool> assigned(vocab.size(), false);
    for (const auto& [word, id] : vocab.items()) {
      const bool in_range = id.is_number_integer() && id.get<int64_t>() >= 0 &&
                            id.get<uint64_t>() < static_cast<uint64_t>(vocab.size());
      if (!in_range) {
        throw model_error(file, word,
                          "id must be an integer from 0 to " + std::to_string(vocab.size() - 1) +
                              ", got " + id.dump());
      }
      const auto slot = id.get<size_t>();
      if (assigned[slot]) {
        throw model_error(
            file, word, "id " + std::to_string(slot) + " is also used by \"" + words[slot] + "\"");
      }
      assigned[slot] = true;
      words[slot] = word;
    }
  } else {
    throw model_error(file, "", "must be a JSON array of words or an object {\"word\": id}");
  }
  return from_words(words, file);
}

int Vocabulary::find(std::string_view word) const {
  if (ids_.empty()) return -1;
  return ids_[slot_of(word)];
}

std::vector<int> to_ids(const std::vector<std::string>& words, const Vocabulary& vocab, int unk_id,
                        int bos_id) {
  std::vector<int> ids;
  ids.reserve(words.size());
  for (const std::string& word : words) {
    const int id = vocab.find(word);
    ids.push_back(id < 0 || id == unk_id || id == bos_id ? unk_id : id);
  }
  return ids;
}

}  // namespace nextword
