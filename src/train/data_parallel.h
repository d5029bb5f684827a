// Data-parallel training across processes: the ranks of an `mpirun -np R
// nextword train` job and the one collective a training step needs (docs/models.md,
// "Data-parallel training with MPI").
//
// MPI stays inside data_parallel.cpp. Built without NEXTWORD_MPI, or started
// without mpirun, the process is the only rank and every function here is
// trivial, so the trainer has one code path. MPI starts the first time rank()
// or ranks() is asked, and only in a process that mpirun started (Open MPI's
// environment says so): no other command, and no `nextword train` run on its
// own, ever initializes it.
#pragma once

#include <cstddef>

namespace nextword::data_parallel {

// This process's rank, 0 to ranks() - 1.
int rank();

// How many processes train together: 1 without mpirun. Throws Error(kUsage)
// when mpirun started several processes of a build without MPI, which would
// otherwise each train alone into the same directory.
int ranks();

// Sums values[0, n) over every rank, in place: one MPI_Allreduce, after which
// every rank holds the same sums. With one rank it changes nothing.
void allreduce_sum(float* values, size_t n);

// Ends every rank of the job with exit status `code`, at once: an error on one
// rank must not leave the others waiting in allreduce_sum.
[[noreturn]] void abort(int code);

// The job's orderly end, on every rank (also run at exit; a second call does
// nothing).
void finalize();

}  // namespace nextword::data_parallel
