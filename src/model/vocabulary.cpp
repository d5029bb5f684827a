#include "model/vocabulary.h"

#include <cstring>
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

uint64_t word_hash(std::string_view word) {
  constexpr uint64_t kOdd = 0x9e3779b97f4a7c15ULL;
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i = 0;
  for (; i + 8 <= word.size(); i += 8) {
    uint64_t chunk;
    std::memcpy(&chunk, word.data() + i, 8);
    h = (h ^ chunk) * kOdd;
    h ^= h >> 29;
  }
  uint64_t tail = 0;  // the last 1 to 7 bytes, little-endian
  for (size_t k = word.size(); k > i; --k)
    tail = (tail << 8) | static_cast<unsigned char>(word[k - 1]);
  h = (h ^ tail ^ (static_cast<uint64_t>(word.size()) << 56)) * kOdd;
  // splitmix64's finalizer: every input bit reaches the low bits a table uses.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

Vocabulary::Vocabulary(const std::vector<std::string>& words, const std::string& file)
    : Vocabulary(packed(words), file) {}

Vocabulary::Vocabulary(Packed words, const std::string& file) {
  struct Store {
    Packed words;
    std::vector<int32_t> ids;
  };
  auto store = std::make_shared<Store>(Store{std::move(words), {}});
  size_t slots = 2;
  while (slots < 2 * store->words.ends.size()) slots *= 2;
  store->ids.assign(slots, -1);
  chars_ = store->words.chars;
  ends_ = store->words.ends;
  ids_ = store->ids;
  for (int i = 0; i < size(); ++i) {
    int32_t& id = store->ids[slot_of(word(i))];
    if (id >= 0) {
      throw model_error(
          file, "[" + std::to_string(i) + "]",
          "duplicate word \"" + std::string(word(i)) + "\" (also id " + std::to_string(id) + ")");
    }
    id = i;
  }
  owner_ = std::move(store);
}

Vocabulary Vocabulary::from_table(std::shared_ptr<const void> owner, std::string_view chars,
                                  std::span<const uint32_t> ends, std::span<const int32_t> ids) {
  Vocabulary v;
  v.owner_ = std::move(owner);
  v.chars_ = chars;
  v.ends_ = ends;
  v.ids_ = ids;
  return v;
}

size_t Vocabulary::slot_of(std::string_view word) const {
  const size_t mask = ids_.size() - 1;
  size_t slot = static_cast<size_t>(word_hash(word)) & mask;
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
