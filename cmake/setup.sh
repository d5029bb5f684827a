#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main
# job, a prediction with the default model (or the example model while no
# default model is bundled).
set -euo pipefail
cd "$(dirname "$0")/.."

cmake/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)"

if [[ -f data/default/weights.json ]]; then
  phrase="once upon a"
  set -x
  build/nextword predict "$phrase"
else
  set -x
  build/nextword predict --model data/examples/fruit "banana apple"
fi
