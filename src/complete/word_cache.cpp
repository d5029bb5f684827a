#include "complete/word_cache.h"

#include <cmath>

namespace nextword {

size_t WordCache::add(const std::string& key, std::string_view form) {
  ++time_;
  total_ = total_ * decay_ + 1;
  const auto [at, added] = index_.emplace(key, entries_.size());
  if (added) entries_.emplace_back();
  Entry& e = entries_[at->second];
  e.weight = e.weight * std::pow(decay_, static_cast<double>(time_ - e.time)) + 1;
  e.time = time_;
  if (!form.empty()) e.form = form;
  return at->second;
}

double WordCache::probability(const Entry& entry) const {
  if (total_ <= 0) return 0;
  return entry.weight * std::pow(decay_, static_cast<double>(time_ - entry.time)) / total_;
}

double WordCache::probability(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? 0 : probability(entries_[it->second]);
}

std::string_view WordCache::form(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? std::string_view() : std::string_view(entries_[it->second].form);
}

}  // namespace nextword
