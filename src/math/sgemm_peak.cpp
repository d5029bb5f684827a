#include "math/sgemm_peak.h"

#include "math/layers.h"

namespace nextword {

SgemmPeak::SgemmPeak(int n) : n_(n), a_(area(n, n), 0.5f), b_(a_), out_(a_) {}

void SgemmPeak::run() { matmul_forward(out_.data(), a_.data(), b_.data(), nullptr, n_, n_, n_); }

double SgemmPeak::flops() const { return 2.0 * n_ * n_ * n_; }

}  // namespace nextword
