// Who spreads the matrix products over the cores: the process's one
// threading policy, chosen by the front end (or a test) before work starts.
//
//   kBlas: OpenBLAS's own threads (training, whose products are large).
//   kRows: OpenBLAS runs single-threaded and OpenMP threads split the rows of
//          each large product, so one pool of threads runs the products,
//          attention and the element loops, with no hand-over between two
//          pools that spin on the same cores (prediction's batches run
//          faster than under kBlas).
//          Products run in calls of a fixed number of rows (math/layers.cpp),
//          so each row's result does not depend on the rows beside it: the
//          policy of everything that prints results, and the default.
//
// Whichever the policy, OpenMP's threads wait for work by spinning only
// briefly (GOMP_SPINCOUNT 10000, unless the user set it or OMP_WAIT_POLICY),
// then sleep; and OpenBLAS starts its threads only when kBlas asks for them
// (see threading.cpp).
#pragma once

namespace nextword {

enum class Threading { kBlas, kRows };

// Applies the policy to OpenBLAS and OpenMP, for `threads` threads.
void set_threading(Threading mode, int threads);

// For a thread the program started itself (a server's worker): the OpenMP
// teams this thread starts get `threads` threads. OpenMP keeps that setting
// per thread, so a new thread does not inherit set_threading's.
void set_worker_threads(int threads);
// True under kRows with more than one thread: math/ splits product rows.
bool rows_split();

// True under kRows: math/ runs products in fixed-shape row blocks.
bool fixed_row_blocks();

// Every core the process may use.
int available_cores();

}  // namespace nextword
