#include "math/sgemm_peak.h"

#include <cblas.h>

#include "base/threading.h"
#include "math/layers.h"

namespace nextword {

SgemmPeak::SgemmPeak(int n) : n_(n), a_(area(n, n), 0.5f), b_(a_), out_(a_) {}

void SgemmPeak::run(int threads) {
  set_threading(Threading::kBlas, threads);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n_, n_, n_, 1.0f, a_.data(), n_, b_.data(),
              n_, 0.0f, out_.data(), n_);
  set_threading(Threading::kRows, threads);
}

double SgemmPeak::flops() const { return 2.0 * n_ * n_ * n_; }

}  // namespace nextword
