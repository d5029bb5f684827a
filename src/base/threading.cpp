#include "base/threading.h"

#include <cblas.h>
#include <omp.h>

namespace nextword {
namespace {
bool split_rows = false;
}  // namespace

void set_threading(Threading mode, int threads) {
  split_rows = mode == Threading::kRows && threads > 1;
  openblas_set_num_threads(mode == Threading::kRows ? 1 : threads);
  omp_set_num_threads(threads);
}

bool rows_split() { return split_rows; }

int available_cores() { return omp_get_num_procs(); }

}  // namespace nextword
