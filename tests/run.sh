#!/usr/bin/env bash
# The README's second command, and what CI runs (.ci/run): install what is
# missing, then two builds, each running the whole test suite:
#   build/           g++, Release, warnings as errors, with data-parallel
#                    training over MPI (-DNEXTWORD_MPI=ON) and bf16 training
#                    products with oneDNN (-DNEXTWORD_DNNL=ON);
#   build-sanitize/  clang with AddressSanitizer and UndefinedBehaviorSanitizer
#                    (any report fails the test that triggered it), plus the
#                    libFuzzer targets, each run for NEXTWORD_FUZZ_SECONDS
#                    (default 30) on its seed corpus.
# The tests that read ../shared (corpora and llama2.c's stories260K beside the
# repository) are reported skipped without it, each with one line saying what
# is missing; ctest lists them at the end (NEXTWORD_REQUIRE_SHARED=1, as
# .ci/run sets, makes them fail instead).
set -euo pipefail
cd "$(dirname "$0")/.."

cmake/install-deps.sh --test
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNEXTWORD_WERROR=ON -DNEXTWORD_MPI=ON -DNEXTWORD_DNNL=ON \
  -DNEXTWORD_REQUIRE_TORCH=ON -DNEXTWORD_REQUIRE_BROWSER=ON -DBUILD_TESTING=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"

cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DNEXTWORD_SANITIZE=ON -DNEXTWORD_WERROR=ON -DNEXTWORD_REQUIRE_TORCH=ON \
  -DNEXTWORD_REQUIRE_BROWSER=ON -DBUILD_TESTING=ON \
  -DNEXTWORD_FUZZ_SECONDS="${NEXTWORD_FUZZ_SECONDS:-30}" >/dev/null
cmake --build build-sanitize -j"$(nproc)"
# LLVM's libomp registers each process in /dev/shm/__KMP_REGISTERED_LIB_PID_UID
# and reads the file of a new process with the same pid; one left empty by a
# process that died while creating it makes that process fail with SIGBUS.
# Remove those of processes that are gone (their pid is not running).
for f in /dev/shm/__KMP_REGISTERED_LIB_*; do
  [[ -f "$f" && ! -s "$f" && -O "$f" ]] || continue
  pid=${f#/dev/shm/__KMP_REGISTERED_LIB_}
  pid=${pid%%_*}
  kill -0 "$pid" 2>/dev/null || rm -f "$f"
done
ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)"
