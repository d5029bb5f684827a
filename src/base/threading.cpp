#include "base/threading.h"

#include <cblas.h>
#include <omp.h>

#include <cstdlib>

namespace nextword {
namespace {
Threading policy = Threading::kRows;
bool split_rows = false;

// Runs before the libraries' own constructors read the environment: both
// are linked in statically (cmake/NextwordDependencies.cmake) and this
// constructor's priority puts it first. A user's own settings win.
//  - OpenBLAS starts no threads of its own when it loads: only training's
//    Threading::kBlas uses them, and set_threading starts them then.
//  - libgomp's threads spin for 300,000 rounds after each parallel loop
//    before they sleep. When the cores are busy (other processes, or
//    OpenBLAS's threads in training) the spinning thread holds a core that
//    the thread it waits for needs. A short spin makes a busy machine's
//    streams and training much faster, and a shorter one still costs an
//    idle machine's batches more than it gains: 10,000 rounds gives up
//    little of either.
__attribute__((constructor(101))) void tune_thread_pools() {
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  if (std::getenv("GOMP_SPINCOUNT") == nullptr && std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("GOMP_SPINCOUNT", "10000", 0);
  }
}
}  // namespace

void set_threading(Threading mode, int threads) {
  policy = mode;
  split_rows = mode == Threading::kRows && threads > 1;
  openblas_set_num_threads(mode == Threading::kRows ? 1 : threads);
  omp_set_num_threads(threads);
}

void set_worker_threads(int threads) { omp_set_num_threads(threads); }

bool rows_split() { return split_rows; }

bool fixed_row_blocks() { return policy == Threading::kRows; }

int available_cores() { return omp_get_num_procs(); }

}  // namespace nextword
