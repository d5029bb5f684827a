#include "predict/repetition.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "predict/word_search.h"

namespace nextword {
namespace {

void sort_unique(std::vector<int>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// A piece's text as a word is compared: less the white space it starts
// with, its curly quotes and apostrophes straight, as the tokenizer reads
// them (text/tokenizer.h), so that "didn’t" repeats "didn't".
std::string compared(std::string text) {
  text.erase(text.begin(), std::find_if_not(text.begin(), text.end(), is_space));
  for (const auto& [curly, straight] : {std::pair{"\u2018", "'"}, std::pair{"\u2019", "'"},
                                        std::pair{"\u201C", "\""}, std::pair{"\u201D", "\""}}) {
    for (size_t at = text.find(curly); at != std::string::npos; at = text.find(curly, at + 1)) {
      text.replace(at, 3, straight);
    }
  }
  return text;
}

}  // namespace

Repetition::Repetition(const RepetitionGuard& guard, std::vector<bool> begins,
                       std::vector<std::string> texts)
    : guard_(guard), begins_(std::move(begins)), texts_(std::move(texts)) {
  std::unordered_map<std::string_view, int> first;  // a text -> the first piece that writes it
  spelling_.reserve(texts_.size());
  for (size_t id = 0; id < texts_.size(); ++id) {
    spelling_.push_back(texts_[id].empty()
                            ? -1
                            : first.try_emplace(texts_[id], static_cast<int>(id)).first->second);
  }
}

Repetition Repetition::of(const RepetitionGuard& guard, const Model& model) {
  // Words are tokens, and the penalty counts tokens: nothing to work out.
  if (!model.subword || guard.ngram <= 0) return Repetition(guard);
  const auto V = static_cast<size_t>(model.config.vocab_size);
  std::vector<bool> begins = word_beginnings(model);
  std::vector<std::string> texts(V);
  for (size_t id = 0; id < V; ++id) {
    if (model.subword->is_control(static_cast<int>(id))) continue;  // no word
    texts[id] = compared(model.subword->text(static_cast<int>(id)));
    // A curly quote begins a word as the straight one does.
    if (!texts[id].empty() && (texts[id][0] == '\'' || texts[id][0] == '"')) begins[id] = true;
  }
  return Repetition(guard, std::move(begins), std::move(texts));
}

void Repetition::look(std::span<const int> text) {
  banned_.clear();
  banned_begin_ = true;
  penalized_.clear();
  const auto window = static_cast<size_t>(std::max(guard_.window, 0));
  const std::span<const int> seen = text.subspan(text.size() > window ? text.size() - window : 0);
  if (guard_.penalty > 0.0f) {
    penalized_.assign(seen.begin(), seen.end());
    sort_unique(penalized_);
  }
  if (guard_.ngram > 0) ban_repeats(seen);
}

void Repetition::ban_repeats(std::span<const int> seen) {
  // The window's words, from its first piece that begins one; a word of
  // white space alone gives way to the next.
  keys_.clear();
  starts_.clear();
  for (const int id : seen) {
    if (begins(id) && (starts_.empty() || keys_.size() > starts_.back())) {
      starts_.push_back(keys_.size());
    }
    if (!starts_.empty() && spelling(id) >= 0) keys_.push_back(spelling(id));
  }
  // The text's last word may be white space so far: then the next piece
  // with letters, whether it begins a word or not, writes the next word's.
  banned_begin_ = !starts_.empty() && keys_.size() > starts_.back();
  if (!banned_begin_ && !starts_.empty()) starts_.pop_back();
  const size_t words = starts_.size();
  const auto n = static_cast<size_t>(guard_.ngram);
  if (words + 1 < n) return;  // fewer than n - 1 words so far
  // Each word a number, the same for the same text (a model of words: its
  // one token's id).
  words_.clear();
  if (texts_.empty()) {
    for (const size_t start : starts_) words_.push_back(keys_[start]);
  } else {
    std::unordered_map<std::string, int> numbers;
    std::string text;
    for (size_t w = 0; w < words; ++w) {
      text.clear();
      const size_t end = w + 1 < words ? starts_[w + 1] : keys_.size();
      for (size_t k = starts_[w]; k < end; ++k) text += texts_[static_cast<size_t>(keys_[k])];
      words_.push_back(numbers.try_emplace(text, static_cast<int>(numbers.size())).first->second);
    }
  }
  // The last n - 1 words (none for n = 1: then every word is banned), each
  // earlier place they stand, and the first spelling of the word after it.
  const auto from = words_.begin() + static_cast<long>(words + 1 - n);
  for (size_t j = 0; j + n <= words; ++j) {
    if (std::equal(from, words_.end(), words_.begin() + static_cast<long>(j))) {
      banned_.push_back(keys_[starts_[j + n - 1]]);
    }
  }
  sort_unique(banned_);
}

bool Repetition::banned(int id) const {
  if (banned_.empty() || (banned_begin_ && !begins(id))) return false;
  const int s = spelling(id);
  return s >= 0 && std::binary_search(banned_.begin(), banned_.end(), s);
}

bool Repetition::penalized(int id) const {
  return std::binary_search(penalized_.begin(), penalized_.end(), id);
}

void Repetition::apply(std::span<float> logits) const {
  for (const int id : penalized_) logits[static_cast<size_t>(id)] -= guard_.penalty;
  constexpr float kBanned = -std::numeric_limits<float>::infinity();
  if (spelling_.empty()) {
    for (const int id : banned_) logits[static_cast<size_t>(id)] = kBanned;  // spellings are ids
  } else if (!banned_.empty()) {
    for (size_t id = 0; id < logits.size(); ++id) {
      if (banned(static_cast<int>(id))) logits[id] = kBanned;
    }
  }
}

}  // namespace nextword
