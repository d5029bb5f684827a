#include "train/data_parallel.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/error.h"

#ifdef NEXTWORD_MPI
#include <mpi.h>
#endif

namespace nextword::data_parallel {
namespace {

// The number of processes mpirun started, from the environment Open MPI
// gives each of them (0: not started by mpirun). PMIx launchers (Open MPI's
// own, or srun --mpi=pmix) set PMIX_RANK.
int launched_ranks() {
  if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE")) return std::max(std::atoi(size), 1);
  return std::getenv("PMIX_RANK") != nullptr ? 1 : 0;
}

struct World {
  int rank = 0;
  int ranks = 1;
};

#ifdef NEXTWORD_MPI

void finalize_at_exit() { finalize(); }

World start() {
  World w;
  if (launched_ranks() == 0) return w;
  // Only the main thread calls MPI; OpenBLAS's and OpenMP's threads never do.
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  std::atexit(finalize_at_exit);
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.ranks);
  return w;
}

bool running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

#else

World start() {
  const int launched = launched_ranks();
  if (launched > 1) {
    throw Error(ExitCode::kUsage, "train: mpirun started " + std::to_string(launched) +
                                      " processes, but this nextword was built without MPI "
                                      "(cmake -DNEXTWORD_MPI=ON)");
  }
  return World{};
}

#endif

const World& world() {
  static const World w = start();
  return w;
}

}  // namespace

int rank() { return world().rank; }

int ranks() { return world().ranks; }

#ifdef NEXTWORD_MPI

void allreduce_sum(float* values, size_t n) {
  if (ranks() == 1) return;
  // One call for any buffer below 2^31 floats (8 GiB of gradients).
  for (size_t done = 0; done < n;) {
    const int count = static_cast<int>(std::min<size_t>(n - done, INT_MAX));
    MPI_Allreduce(MPI_IN_PLACE, values + done, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    done += static_cast<size_t>(count);
  }
}

void abort(int code) {
  std::fflush(nullptr);
  if (running()) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void finalize() {
  if (running()) MPI_Finalize();
}

#else

void allreduce_sum(float*, size_t) {}

void abort(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}

void finalize() {}

#endif

}  // namespace nextword::data_parallel
