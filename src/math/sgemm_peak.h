// The yardstick of `nextword bench`: what this machine's OpenBLAS does at
// its best, a large square sgemm on all its threads. A forward pass's speed
// means little on a shared, noisy machine; as a fraction of this peak,
// measured in the same run, it holds.
#pragma once

#include <vector>

namespace nextword {

class SgemmPeak {
 public:
  explicit SgemmPeak(int n = 1024);
  // One n x n x n product on `threads` OpenBLAS threads (Threading::kBlas);
  // afterwards the policy is Threading::kRows on as many threads again.
  void run(int threads);
  // Floating-point operations of one product: 2 n^3.
  double flops() const;

 private:
  int n_;
  std::vector<float> a_, b_, out_;
};

}  // namespace nextword
