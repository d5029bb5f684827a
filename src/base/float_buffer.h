// Zeroed floats in memory of their own, on transparent huge pages where the
// kernel gives them (Linux's "madvise" mode): the weights of a model read
// from F16 or JSON fill tens of MB at every start, and faulting that in
// 4 KiB at a time costs more than converting it.
#pragma once

#include <cstddef>

namespace nextword {

class FloatBuffer {
 public:
  FloatBuffer() = default;
  explicit FloatBuffer(size_t n);  // n zeros; throws std::bad_alloc when there is no memory
  ~FloatBuffer();
  FloatBuffer(FloatBuffer&& other) noexcept;
  FloatBuffer& operator=(FloatBuffer&& other) noexcept;
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release();

  float* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // what munmap gets back
  size_t mapped_ = 0;
};

}  // namespace nextword
