#!/usr/bin/env bash
# The README's second command, and what CI runs (.ci/run): install what is
# missing, build with warnings as errors, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake/install-deps.sh --test
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNEXTWORD_WERROR=ON \
  -DNEXTWORD_REQUIRE_TORCH=ON -DBUILD_TESTING=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
