// The contexts a writer's words followed, as the model saw them: the
// continuous cache of Grave, Joulin and Usunier ("Improving Neural Language
// Models with a Continuous Cache", ICLR 2017), which `--learn` interpolates
// with the transformer and the word cache (docs/usage.md, "Every command
// and its options", --learn):
//
//   p_context(w | h) = sum over uses i of w of e^(theta cos(h, h_i))
//                      / sum over all uses i of e^(theta cos(h, h_i))
//
// where h is the context vector the classifier reads (the last position
// after final_norm) and h_i the one that use i followed. The word cache
// brings a word back because it was written; this one brings it back where
// the text calls for it again: a name the model cannot spell (it reads
// unk) after "said", the object of a story where its verb comes back.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace nextword {

class ContextCache {
 public:
  // Keeps the last `capacity` uses; `theta` is how much more a closer
  // context counts.
  ContextCache(size_t capacity, double theta) : capacity_(capacity), theta_(theta) {}

  // One use of word `word` (an index the caller keeps) after context h [d].
  void add(std::span<const float> h, int word);
  // p[w] += weight p_context(w | h) for every word w used (p must have room
  // for every index added). Adds nothing while no use is kept.
  void add_probabilities(std::span<const float> h, double weight, std::span<double> p) const;
  // The words of the uses kept (the indices add_probabilities writes).
  std::span<const int> words() const { return words_; }

 private:
  size_t capacity_;
  double theta_;
  size_t oldest_ = 0;        // the slot the next use replaces, once full
  std::vector<float> unit_;  // [uses, d] the contexts h_i / |h_i|
  std::vector<int> words_;   // [uses]
  mutable std::vector<float> h_unit_, cosines_;
  mutable std::vector<double> weights_;  // e^(theta (cos_i - max cos))
};

}  // namespace nextword
