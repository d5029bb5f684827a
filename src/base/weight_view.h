// A tensor of the model as the math reads it: its floats, and, when the
// weights file holds it another way, the file's own elements too.
//
// A matrix is [in, out] to the math (y = x W). Three other layouts are read
// in place: IEEE halves (F16) in that same layout (a weights.safetensors);
// a GGUF file's rows of outputs ([out, in], y_o = the dot product of x and
// row o, every projection); and a GGUF file's rows of words (the
// embedding's and the classifier's [V, d], the math's own layout, whose
// rows the embedding copies and the classifier's transposed product reads),
// those two in float32, F16, BF16 or ggml's blocks (base/weight_elements.h). The
// products of prediction (math/row_products.h) read those elements and
// widen them in registers, and the embedding widens the rows it copies:
// nothing widened or copied at load (widening a large model at every start
// would be a large share of a one-phrase process). Everything else that
// reads the tensor (a norm, a bias, the lens, attribution, training) reads
// floats in the math's layout: converting a view to `const float*` widens
// the whole tensor first, once (a Widening, which the weights own), and
// turns rows of outputs into [in, out], so a reader written for floats
// stays correct.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nextword {

// Fills a tensor's floats (in the math's layout) from the file's elements,
// once, on first call, from any thread, and gives the first.
class Widening {
 public:
  virtual ~Widening() = default;
  virtual const float* floats() const = 0;
};

// How a view's elements are stored in the file, when not as the floats:
// float32, IEEE halves, bfloat16, or one of ggml's quantized blocks
// (base/quant_blocks.h, docs/blocks.md).
enum class WeightType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kQ8_0,
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ4_K,
  kQ5_K,
  kQ6_K
};

class WeightView {
 public:
  constexpr WeightView() = default;
  // Floats only (owned storage, a mapped F32 file, activations).
  constexpr WeightView(const float* floats) : floats_(floats) {}  // NOLINT: implicit by design
  // Floats filled by `widening` (or by the caller, when null) and the
  // halves they come from, element for element.
  constexpr WeightView(const float* floats, const uint16_t* halves, const Widening* widening)
      : floats_(floats), raw_(halves), widening_(widening), type_(WeightType::kF16) {}
  // A matrix [in, out] stored as rows of outputs: `out` rows of `in`
  // elements of `type` at `rows`, the floats given by `widening`.
  static constexpr WeightView rows_of_outputs(const void* rows, WeightType type, int64_t in,
                                              const Widening* widening) {
    WeightView v;
    v.raw_ = rows;
    v.widening_ = widening;
    v.type_ = type;
    v.row_length_ = in;
    return v;
  }
  // A matrix [rows, in] (or a vector, one row) stored in the math's layout:
  // rows of `in` elements of `type` at `rows`, the floats given by `widening`.
  static constexpr WeightView rows_of_words(const void* rows, WeightType type, int64_t in,
                                            const Widening* widening) {
    WeightView v = rows_of_outputs(rows, type, in, widening);
    v.words_ = true;
    return v;
  }

  // The floats in the math's layout, widened first when they are not yet.
  operator const float*() const {  // NOLINT: implicit by design
    if (widening_ == nullptr) return floats_;
    const float* widened = widening_->floats();
    return floats_ != nullptr ? floats_ : widened;  // a view of halves may be n elements on
  }
  // The halves the products read, in the math's layout, or null.
  const uint16_t* halves() const {
    return row_length_ == 0 && type_ == WeightType::kF16 ? static_cast<const uint16_t*>(raw_)
                                                         : nullptr;
  }
  // Rows of outputs or of words: the file's rows, their type and their
  // length (the matrix's `in`); row_length() is 0 for any other view.
  const void* rows() const { return row_length_ > 0 ? raw_ : nullptr; }
  // Whether rows() are the math's columns (rows of outputs), not its rows.
  bool output_rows() const { return row_length_ > 0 && !words_; }
  WeightType type() const { return type_; }
  int64_t row_length() const { return row_length_; }
  // The view `n` elements on in the math's layout (a row of a matrix, a
  // slice of the classifier). Of rows of outputs or words, the floats' (widened).
  WeightView operator+(size_t n) const {
    if (row_length_ > 0) return WeightView(static_cast<const float*>(*this) + n);
    return {floats_ + n, raw_ != nullptr ? static_cast<const uint16_t*>(raw_) + n : nullptr,
            widening_};
  }
  // Absent (an optional tensor a file does not hold), without widening anything.
  friend constexpr bool operator==(const WeightView& v, std::nullptr_t) {
    return v.floats_ == nullptr && v.raw_ == nullptr && v.widening_ == nullptr;
  }

 private:
  const float* floats_ = nullptr;
  const void* raw_ = nullptr;
  const Widening* widening_ = nullptr;
  WeightType type_ = WeightType::kF32;
  bool words_ = false;  // rows of words, not of outputs
  int64_t row_length_ = 0;
};

}  // namespace nextword
