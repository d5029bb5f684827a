// The yardstick of `nextword bench`: what this machine's OpenBLAS does at
// its best, a large square sgemm on all the threads. A forward pass's speed
// means little on a shared, noisy machine; as a fraction of this peak,
// measured in the same run, it holds.
//
// It runs OpenBLAS's sgemm on the forward pass's own threads (Threading::kRows:
// the rows split over OpenMP's threads, OpenBLAS single-threaded), which reach
// the peak of OpenBLAS's own threads. OpenBLAS's own threads keep spinning
// for a while after each product, and a batch timed in turns with them
// would lose a core to them.
#pragma once

#include <vector>

namespace nextword {

class SgemmPeak {
 public:
  explicit SgemmPeak(int n = 1024);
  // One n x n x n product, on the threads of the policy in force (bench,
  // like prediction, sets Threading::kRows once).
  void run();
  // Floating-point operations of one product: 2 n^3.
  double flops() const;

 private:
  int n_;
  std::vector<float> a_, b_, out_;
};

}  // namespace nextword
