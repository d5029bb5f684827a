// Rows of a half-precision tensor (F16 or BF16 in a mapped
// weights.safetensors) widened to float32 at their first use, not at load.
//
// A prediction on a model with an adaptive softmax and a tied classifier
// reads of its embedding [V, d] only the head's rows and the rows of the
// words in its context: on the English model 4,096 and a few of 65,536.
// Widening all of it at every start cost a third of a one-phrase process
// (50 MB of fresh memory, page by page). Here the head's rows are widened
// at load and every other row when something asks for it; whole-tensor
// readers (writers, training) ask for all of it first (Weights::data).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace nextword {

class HalfRows {
 public:
  // `halves`: rows x width halves (bf16: BF16, else F16) inside the mapping
  // `owner` keeps alive; `out`: rows x width floats of memory nothing has
  // touched yet (so untouched rows cost nothing); rows [0, eager) are
  // widened now.
  HalfRows(const char* halves, bool bf16, int64_t rows, int64_t width, float* out, int64_t eager,
           std::shared_ptr<const void> owner);

  // Widens rows ids[0..n) that are not yet; any thread may call it at any
  // time. Ids outside [0, rows) are left to the caller's own checks.
  void widen(const int* ids, size_t n);
  void widen_all();

 private:
  void widen_row(int64_t row);  // under mutex_

  const char* halves_;
  bool bf16_;
  int64_t rows_, width_;
  float* out_;
  std::shared_ptr<const void> owner_;
  std::unique_ptr<std::atomic<bool>[]> ready_;  // per row, set after its floats
  std::atomic<bool> all_ready_{false};
  std::mutex mutex_;
};

// Whether n halves are all finite (no inf, no NaN), as all_finite tests
// floats: every value's exponent bits, no early exit.
bool halves_finite(const char* halves, bool bf16, size_t n);

}  // namespace nextword
