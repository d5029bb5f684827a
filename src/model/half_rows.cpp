#include "model/half_rows.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "model/half_float.h"

namespace nextword {

HalfRows::HalfRows(const char* halves, bool bf16, int64_t rows, int64_t width, float* out,
                   int64_t eager, std::shared_ptr<const void> owner)
    : halves_(halves),
      bf16_(bf16),
      rows_(rows),
      width_(width),
      out_(out),
      owner_(std::move(owner)),
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
  halves_to_floats(from, bf16_, static_cast<size_t>(width_), to);
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

void HalfRows::widen_all() {
  if (all_ready_.load(std::memory_order_acquire)) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  for (int64_t row = 0; row < rows_; ++row) {
    if (!ready_[static_cast<size_t>(row)].load(std::memory_order_relaxed)) widen_row(row);
  }
  all_ready_.store(true, std::memory_order_release);
}

bool halves_finite(const char* halves, bool bf16, size_t n) {
  const uint16_t exponent = bf16 ? 0x7f80u : 0x7c00u;
  uint32_t inf_or_nan = 0;
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, halves + 2 * i, 2);
    inf_or_nan |= static_cast<uint32_t>((h & exponent) == exponent);
  }
  return inf_or_nan == 0;
}

}  // namespace nextword
