#include "math/sgemm_peak.h"

#include "base/threading.h"
#include "math/kernels.h"
#include "math/layers.h"
#include "math/training_products.h"

namespace nextword {

SgemmPeak::SgemmPeak(int n) : n_(n), a_(area(n, n), 0.5f), b_(a_), out_(a_) {}

void SgemmPeak::run() {
  // OpenBLAS itself on each thread's rows: matmul_forward would run this
  // project's own kernels under Threading::kRows.
  auto rows = [&](int begin, int end) {
    training_product(false, false, end - begin, n_, n_, a_.data() + area(begin, n_), n_, b_.data(),
                     n_, 0.0f, out_.data() + area(begin, n_), n_);
  };
  if (!rows_split()) {
    rows(0, n_);
    return;
  }
  on_thread_rows(n_, rows);
}

double SgemmPeak::flops() const { return 2.0 * n_ * n_ * n_; }

}  // namespace nextword
