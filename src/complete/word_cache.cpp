#include "complete/word_cache.h"

#include <cmath>

namespace nextword {

void WordCache::add(const std::string& key, std::string_view form) {
  ++time_;
  total_ = total_ * decay_ + 1;
  Entry& e = entries_[key];
  e.weight = e.weight * std::pow(decay_, static_cast<double>(time_ - e.time)) + 1;
  e.time = time_;
  if (!form.empty()) e.form = form;
}

double WordCache::probability(const Entry& entry) const {
  if (total_ <= 0) return 0;
  return entry.weight * std::pow(decay_, static_cast<double>(time_ - entry.time)) / total_;
}

double WordCache::probability(const std::string& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? 0 : probability(it->second);
}

std::string_view WordCache::form(const std::string& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? std::string_view() : std::string_view(it->second.form);
}

}  // namespace nextword
