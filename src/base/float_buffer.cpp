#include "base/float_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>
#include <utility>

namespace nextword {
namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}  // namespace

FloatBuffer::FloatBuffer(size_t n) : size_(n) {
  if (n == 0) return;
  // One huge page more than needed, so that the floats can start on a huge
  // page's boundary: the kernel backs only aligned 2 MiB ranges with them.
  const size_t bytes = n * sizeof(float);
  const bool huge = bytes >= kHugePage;  // a small model would get a whole huge page
  mapped_ = huge ? bytes + kHugePage : bytes;
  mapping_ = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw std::bad_alloc();
  }
  data_ = static_cast<float*>(mapping_);
  if (!huge) return;
  const auto start = reinterpret_cast<uintptr_t>(mapping_);
  data_ = reinterpret_cast<float*>((start + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1));
  // Advice only: without transparent huge pages the memory is ordinary pages.
  madvise(data_, bytes, MADV_HUGEPAGE);
}

FloatBuffer::~FloatBuffer() { release(); }

FloatBuffer::FloatBuffer(FloatBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapped_(std::exchange(other.mapped_, 0)) {}

FloatBuffer& FloatBuffer::operator=(FloatBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

void FloatBuffer::release() {
  if (mapping_ != nullptr) munmap(mapping_, mapped_);
  mapping_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace nextword
