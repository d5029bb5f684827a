#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main
# job, a prediction with the bundled default model.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)"

set -x
build/nextword predict "the president of the united"
