#!/usr/bin/env python3
"""Data-parallel training speed: 1 process against `mpirun -np 2`, one thread
per rank, on the default model's shape, side by side in one run; then the
allreduce of that model's gradients alone, and docs/models.md's cost model for N
machines.

    python3 tests/bench/mpi_speed.py build/nextword [--corpus TEXT] [--rounds 3] [--steps 30]
        [--old OLD_NEXTWORD]

"1 process, 2 threads" is 2 worker threads (train --threads); with
--old, a build from before them runs "1 process, 2 threads" too (OpenBLAS's
two threads then), in the same rounds.

Needs a build with -DNEXTWORD_MPI=ON, mpirun and mpicc (openmpi-bin,
libopenmpi-dev). Rounds alternate between the configurations so that load on
a shared machine hits each alike; medians are reported. A run's tokens/s is
its last progress report's (every step of the run, no validation, before the
final save). The allreduce is timed by a small C program built with mpicc,
on a buffer of the model's parameter count plus the loss and stop flag, each
call after a barrier, so it is the collective alone and not one rank waiting
for the other's compute.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "corpus",
                                               "tinystories-train-head.txt"))
SHAPE = ["--vocab-size", "4096", "--d-model", "128", "--layers", "4", "--heads", "4",
         "--d-ff", "512", "--context", "64", "--batch", "32", "--dropout", "0.1",
         "--val-fraction", "0", "--eval-every", "0", "--checkpoint-every", "0", "--log-every",
         "1", "-f", "json"]
TOKENS_PER_STEP = 32 * 64
MPIRUN = ["mpirun", "-q", "--bind-to", "none", "--mca", "btl", "self,vader"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none")

ALLREDUCE_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = atoi(argv[1]), calls = atoi(argv[2]), rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  float* x = calloc((size_t)n, sizeof(float));
  double* seconds = calloc((size_t)calls, sizeof(double));
  for (int i = -5; i < calls; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (i >= 0) seconds[i] = MPI_Wtime() - start;
  }
  qsort(seconds, (size_t)calls, sizeof(double), compare);
  if (rank == 0) printf("%.6f\n", seconds[calls / 2]);
  MPI_Finalize();
  return 0;
}
"""


def train(nextword, corpus, out, ranks, threads, steps):
    command = [nextword, "train", corpus, "-o", out, *SHAPE, "--threads", str(threads),
               "--steps", str(steps)]
    if ranks > 1:
        command = [*MPIRUN, "-np", str(ranks), *command]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=ENV, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    reports = [json.loads(line) for line in r.stderr.splitlines() if line.startswith("{")]
    summary = json.loads(r.stdout)
    return reports[-1]["tokens_per_s"], summary["parameters"], cpu


def allreduce_seconds(floats, ranks, calls, scratch):
    source = os.path.join(scratch, "allreduce.c")
    program = os.path.join(scratch, "allreduce")
    with open(source, "w", encoding="utf-8") as f:
        f.write(ALLREDUCE_C)
    subprocess.run(["mpicc", "-O2", source, "-o", program], check=True)
    r = subprocess.run([*MPIRUN, "-np", str(ranks), program, str(floats), str(calls)],
                       stdout=subprocess.PIPE, text=True, env=ENV, check=True)
    return float(r.stdout)


def cost_model(parameters, tokens_per_s, label):
    """Step time on N machines, each as fast as this one (tokens_per_s), the
    global batch fixed (TOKENS_PER_STEP), the gradients summed by a ring
    allreduce: each machine sends and receives 2 (N - 1) / N of the gradient
    bytes, at the network's bandwidth (latency left out: at most 2 (N - 1)
    messages of tens of microseconds)."""
    gradient_bytes = 4 * parameters
    compute = TOKENS_PER_STEP / tokens_per_s
    print("\n%s: %d parameters, %.1f MB of gradients, %.0f ms of compute per step on one "
          "machine" % (label, parameters, gradient_bytes / 1e6, compute * 1e3))
    print("| N | compute/step | allreduce 1 Gbit/s | speed-up | allreduce 10 Gbit/s | speed-up |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in (1, 2, 4, 8, 16):
        row = ["%d" % n, "%.1f ms" % (compute / n * 1e3)]
        for gbit in (1, 10):
            comm = 2 * (n - 1) / n * gradient_bytes * 8 / (gbit * 1e9)
            row += ["%.1f ms" % (comm * 1e3), "%.2fx" % (compute / (compute / n + comm))]
        print("| " + " | ".join(row) + " |")
    for gbit in (1, 10):
        comm = 2 * gradient_bytes * 8 / (gbit * 1e9)  # the ring's limit, N large
        print("%d Gbit/s: allreduce %.1f ms a step for large N; half the machines' time is "
              "communication from N = %.1f; speed-up never above %.1fx"
              % (gbit, comm * 1e3, compute / comm, compute / comm))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("nextword")
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--old", help="a build from before the worker threads")
    args = parser.parse_args()
    nextword = os.path.abspath(args.nextword)
    scratch = tempfile.mkdtemp()
    configurations = [("1 process, 1 thread", 1, 1, nextword),
                      ("mpirun -np 2, 1 thread per rank", 2, 1, nextword),
                      ("1 process, 2 threads", 1, 2, nextword)]
    if args.old:
        configurations.append(("old build, 1 process, 2 threads", 1, 2,
                               os.path.abspath(args.old)))
    speeds = {name: [] for name, _, _, _ in configurations}
    cpu = {name: [] for name, _, _, _ in configurations}  # CPU seconds of the whole run
    parameters = 0
    try:
        for round_ in range(args.rounds):
            order = configurations if round_ % 2 == 0 else configurations[::-1]
            for name, ranks, threads, binary in order:
                out = os.path.join(scratch, "model")
                speed, parameters, seconds = train(binary, args.corpus, out, ranks, threads,
                                                   args.steps)
                shutil.rmtree(out)
                speeds[name].append(speed)
                cpu[name].append(seconds)
                print("round %d  %-34s %8.0f tokens/s  %6.1f CPU s" % (round_ + 1, name, speed,
                                                                       seconds), file=sys.stderr)
        print("load average %.2f %.2f %.2f" % os.getloadavg())
        print("%d steps of %d tokens, medians of %d alternating rounds:"
              % (args.steps, TOKENS_PER_STEP, args.rounds))
        # CPU seconds (every process of the run, its start and corpus reading
        # included) are the overhead's measure that load on the machine does
        # not change much; tokens/s is what the user sees.
        one = statistics.median(speeds[configurations[0][0]])
        one_cpu = statistics.median(cpu[configurations[0][0]])
        for name, _, _, _ in configurations:
            median = statistics.median(speeds[name])
            print("  %-34s %8.0f tokens/s  %.2fx  (rounds: %s); CPU %.1f s, %.2fx of 1 process"
                  % (name, median, median / one, ", ".join("%.0f" % s for s in speeds[name]),
                     statistics.median(cpu[name]), statistics.median(cpu[name]) / one_cpu))
        two = statistics.median(speeds[configurations[1][0]])
        seconds = allreduce_seconds(parameters + 2, 2, 50, scratch)
        step = TOKENS_PER_STEP / two
        print("allreduce of %d floats (%.1f MB) between 2 ranks: %.2f ms, %.1f%% of a 2-rank "
              "step (%.0f ms)" % (parameters + 2, 4 * (parameters + 2) / 1e6, seconds * 1e3,
                                  100 * seconds / step, step * 1e3))
        machine = max(statistics.median(v) for v in speeds.values())
        cost_model(parameters, machine, "default model")
        cost_model(10 * parameters, machine / 10, "10x the parameters, 10x compute per token")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
