// The words a writer has used, most recent weighing most: the cache that
// `--learn` interpolates with the transformer (docs/usage.md, "Every command
// and its options").
//
//   p_cache(w) = sum over w's uses of decay^age / sum over all uses of decay^age
//
// where age counts the words written since that use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nextword {

class WordCache {
 public:
  explicit WordCache(double decay) : decay_(decay) {}

  // One use of a word. `key` is its folded form (text/words.h), `form` how
  // the writer spelled it, or empty when its case says nothing (a word at
  // the start of a sentence), which keeps the form known before.
  // Returns the index of the word's entry: a new word's comes last.
  size_t add(const std::string& key, std::string_view form);

  // p_cache(key) now; 0 for a word never used.
  double probability(const std::string& key) const;
  // How the writer last spelled `key` mid-sentence, or empty.
  std::string_view form(const std::string& key) const;

  struct Entry {
    double weight = 0;  // sum of decay^(time - use), as of `time`
    int64_t time = 0;
    std::string form;
  };
  // Every word used, in the order of their first uses.
  const std::vector<Entry>& entries() const { return entries_; }
  // p_cache of an entry now.
  double probability(const Entry& entry) const;

 private:
  double decay_;
  int64_t time_ = 0;  // words added so far
  double total_ = 0;  // sum over all uses of decay^age
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;  // of entries_, by key
};

}  // namespace nextword
