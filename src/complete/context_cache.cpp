#include "complete/context_cache.h"

#include <algorithm>
#include <cmath>

#include "math/layers.h"

namespace nextword {
namespace {

// h / |h| into out (zeros for h = 0).
void unit_of(std::span<const float> h, float* out) {
  double sum = 0;
  for (const float x : h) sum += static_cast<double>(x) * x;
  const double scale = sum > 0 ? 1 / std::sqrt(sum) : 0;
  for (size_t j = 0; j < h.size(); ++j) out[j] = static_cast<float>(h[j] * scale);
}

}  // namespace

void ContextCache::add(std::span<const float> h, int word) {
  if (capacity_ == 0 || h.empty()) return;
  size_t slot = words_.size();
  if (slot == capacity_) {
    slot = oldest_;
    oldest_ = (oldest_ + 1) % capacity_;
  } else {
    words_.push_back(word);
    unit_.resize(unit_.size() + h.size());
  }
  words_[slot] = word;
  unit_of(h, unit_.data() + slot * h.size());
}

void ContextCache::add_probabilities(std::span<const float> h, double weight,
                                     std::span<double> p) const {
  if (words_.empty() || h.empty()) return;
  const int d = static_cast<int>(h.size()), n = static_cast<int>(words_.size());
  h_unit_.resize(h.size());
  unit_of(h, h_unit_.data());
  // cos(h, h_i) for every use at once: the classifier's product, with the
  // uses as its rows.
  cosines_.resize(words_.size());
  classifier_forward(cosines_.data(), h_unit_.data(), unit_.data(), nullptr, 1, d, n);
  const double best = *std::max_element(cosines_.begin(), cosines_.end());
  weights_.resize(words_.size());
  double total = 0;
  for (size_t i = 0; i < words_.size(); ++i) {
    total += weights_[i] = std::exp(theta_ * (cosines_[i] - best));
  }
  for (size_t i = 0; i < words_.size(); ++i) {
    p[static_cast<size_t>(words_[i])] += weight * weights_[i] / total;
  }
}

}  // namespace nextword
