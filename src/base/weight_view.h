// A tensor of the model as the math reads it: its floats, and, when the
// weights file holds it in IEEE halves (F16), those halves too.
//
// The products of prediction (math/row_products.h) read the halves and
// widen them in registers: half the bytes of every weight to read, and
// nothing widened at load (widening a large model at every start would be
// a large share of a one-phrase process). Everything else that reads the tensor (a norm,
// a bias, the lens, training) reads floats: converting a view to
// `const float*` widens the whole tensor first, once (a Widening, which the
// weights own), so a reader that was written for floats stays correct.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nextword {

// Fills a tensor's floats from its halves, once, on first call, from any thread.
class Widening {
 public:
  virtual ~Widening() = default;
  virtual void ensure() const = 0;
};

class WeightView {
 public:
  constexpr WeightView() = default;
  // Floats only (owned storage, a mapped F32 file, activations).
  constexpr WeightView(const float* floats) : floats_(floats) {}  // NOLINT: implicit by design
  // Floats filled by `widening` (or by the caller, when null) and the
  // halves they come from, element for element.
  constexpr WeightView(const float* floats, const uint16_t* halves, const Widening* widening)
      : floats_(floats), halves_(halves), widening_(widening) {}

  // The floats, widened first when they are not yet.
  operator const float*() const {  // NOLINT: implicit by design
    if (widening_ != nullptr) widening_->ensure();
    return floats_;
  }
  // The halves the products read, or null (floats only).
  const uint16_t* halves() const { return halves_; }
  // The view `n` elements on (a row of a matrix, a slice of the classifier).
  WeightView operator+(size_t n) const {
    return {floats_ + n, halves_ != nullptr ? halves_ + n : nullptr, widening_};
  }
  // Absent (an optional tensor a file does not hold), without widening anything.
  friend constexpr bool operator==(const WeightView& v, std::nullptr_t) {
    return v.floats_ == nullptr;
  }

 private:
  const float* floats_ = nullptr;
  const uint16_t* halves_ = nullptr;
  const Widening* widening_ = nullptr;
};

}  // namespace nextword
