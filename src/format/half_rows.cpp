#include "format/half_rows.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>

#include "base/error.h"
#include "base/finite.h"
#include "base/half_float.h"

namespace nextword {

HalfRows::HalfRows(const char* halves, bool bf16, int64_t rows, int64_t width, float* out,
                   int64_t eager, std::shared_ptr<const void> owner, std::string file,
                   std::string field)
    : halves_(halves),
      bf16_(bf16),
      rows_(rows),
      width_(width),
      out_(out),
      owner_(std::move(owner)),
      file_(std::move(file)),
      field_(std::move(field)),
      ready_(std::make_unique<std::atomic<bool>[]>(static_cast<size_t>(rows))) {
  // The deferred rows on small pages: on a huge page the first row a phrase
  // reads would clear 2 MB around it.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(out + eager * width);
  const auto end = reinterpret_cast<uintptr_t>(out + rows * width);
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_NOHUGEPAGE);
  const std::lock_guard<std::mutex> lock(mutex_);
  for (int64_t row = 0; row < eager && row < rows; ++row) widen_row(row);
}

void HalfRows::widen_row(int64_t row) {
  const size_t at = static_cast<size_t>(row) * static_cast<size_t>(width_);
  const char* from = halves_ + 2 * at;
  float* to = out_ + at;
  const auto width = static_cast<size_t>(width_);
  if (!halves_to_floats(from, bf16_, width, to)) {  // the row stays not ready
    throw model_error(
        file_, field_,
        "element " + std::to_string(at + first_non_finite(to, width)) + " is not finite");
  }
  ready_[static_cast<size_t>(row)].store(true, std::memory_order_release);
}

void HalfRows::widen(const int* ids, size_t n) {
  if (all_ready_.load(std::memory_order_acquire)) return;
  for (size_t i = 0; i < n; ++i) {
    const int64_t row = ids[i];
    if (row < 0 || row >= rows_ || ready_[static_cast<size_t>(row)].load(std::memory_order_acquire))
      continue;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!ready_[static_cast<size_t>(row)].load(std::memory_order_relaxed)) widen_row(row);
  }
}

void HalfRows::widen_first(int64_t n) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (int64_t row = 0; row < n && row < rows_; ++row) {
    if (!ready_[static_cast<size_t>(row)].load(std::memory_order_relaxed)) widen_row(row);
  }
}

void HalfRows::widen_all() {
  if (all_ready_.load(std::memory_order_acquire)) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  for (int64_t row = 0; row < rows_; ++row) {
    if (!ready_[static_cast<size_t>(row)].load(std::memory_order_relaxed)) widen_row(row);
  }
  all_ready_.store(true, std::memory_order_release);
}

}  // namespace nextword
