#!/usr/bin/env bash
# Reproduces data/default: splits the TinyStories files into training text and
# a development split (tests/bench/dev_split.sh), trains with `nextword train`, and
# scores the result on the development split with `nextword eval`. The corpus
# is read from CORPUS (default ../shared/corpus next to the repository) and
# never copied into the repository; the split goes to a scratch directory.
#
#   data/default/train.sh [BINARY] [OUTPUT_DIR]
#
# Training's products run in bf16 (`--bf16`), so BINARY must be a build with
# -DNEXTWORD_DNNL=ON; without one, this script builds build-train/ so
# (cmake/install-deps.sh --train installs oneDNN). The run writes a checkpoint
# every 1,000 steps: after an interruption, the same command with RESUME=1
# continues it from OUTPUT_DIR/checkpoint.json (give it the same SCRATCH: the
# checkpoint names the training files).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-}"
out="${2:-$here}"
corpus="${CORPUS:-$repo/../shared/corpus}"
scratch="${SCRATCH:-$(mktemp -d)}"

if [ -z "$bin" ]; then
  "$repo/cmake/install-deps.sh" --train
  cmake -S "$repo" -B "$repo/build-train" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    -DNEXTWORD_DNNL=ON >/dev/null
  cmake --build "$repo/build-train" -j"$(nproc)" --target nextword
  bin="$repo/build-train/nextword"
fi

"$repo/tests/bench/dev_split.sh" "$corpus/tinystories-train-continuation-lowercase.txt" "$scratch"

if [ "${RESUME:-0}" = 1 ]; then
  "$bin" train --resume "$out" --format json
else
  "$bin" train "$corpus/tinystories-train-head.txt" "$scratch/continuation-train.txt" -o "$out" \
    --vocab-size 4096 --d-model 192 --layers 4 --heads 6 --d-ff 512 \
    --positional rope --norm rmsnorm --activation swiglu --no-ffn-bias \
    --context 128 --batch 16 --steps 22000 --warmup 500 --lr 2e-3 --min-lr 1e-4 \
    --weight-decay 0.5 --dropout 0.2 --val-fraction 0.02 --eval-every 1000 \
    --checkpoint-every 1000 --seed 1 --threads 2 --bf16 --format json
fi
rm -f "$out/checkpoint.json"  # optimizer state: not part of the shipped model
"$bin" convert "$out/weights.json" "$out/weights.safetensors"  # the binary form, same floats
"$bin" eval "$scratch/heldout.txt" --model "$out" --format json
