// Rows of a half-precision tensor (F16 or BF16 in a mapped
// weights.safetensors) widened to float32 at their first use, not at load.
//
// A prediction on a model with an adaptive softmax and a tied classifier
// reads of its embedding [V, d] only the head's rows and the rows of the
// words in its context: on the English model 4,096 and a few of 65,536.
// Widening all of it at every start would fault in fresh memory for all of
// it, page by page, a large share of a one-phrase process. Here the head's rows are widened
// at load and every other row when something asks for it; whole-tensor
// readers (writers, training) ask for all of it first (Weights::data).
//
// A row's halves are checked finite when it is widened, not at load: the
// check of the whole tensor would be a large share of a one-phrase
// process. So a NaN or inf
// in a row past the head is refused at the first pass that reads the row
// (an Error naming the file, the tensor and the element, as at load), and
// at load only when it is in the head.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace nextword {

class HalfRows {
 public:
  // `halves`: rows x width halves (bf16: BF16, else F16) inside the mapping
  // `owner` keeps alive; `out`: rows x width floats of memory nothing has
  // touched yet (so untouched rows cost nothing); rows [0, eager) are
  // widened now. `file` and `field` name the tensor in errors.
  HalfRows(const char* halves, bool bf16, int64_t rows, int64_t width, float* out, int64_t eager,
           std::shared_ptr<const void> owner, std::string file, std::string field);

  // Widens rows ids[0..n) that are not yet; any thread may call it at any
  // time. Ids outside [0, rows) are left to the caller's own checks.
  // Throws model_error(file, field, "element N is not finite") for a row
  // that is not all finite, and leaves the row unwidened.
  void widen(const int* ids, size_t n);
  void widen_all();
  // Widens rows [0, n) that are not yet.
  void widen_first(int64_t n);

 private:
  void widen_row(int64_t row);  // under mutex_

  const char* halves_;
  bool bf16_;
  int64_t rows_, width_;
  float* out_;
  std::shared_ptr<const void> owner_;
  std::string file_, field_;
  std::unique_ptr<std::atomic<bool>[]> ready_;  // per row, set after its floats
  std::atomic<bool> all_ready_{false};
  std::mutex mutex_;
};

}  // namespace nextword
