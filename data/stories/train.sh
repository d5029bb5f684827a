#!/usr/bin/env bash
# Reproduces data/stories: splits the TinyStories files into training text and
# a development split (tools/dev_split.sh), trains a teacher and then the
# model against it with `nextword train`, and scores both on the development
# split with `nextword eval`. The corpus
# is read from CORPUS (default ../shared/corpus next to the repository) and
# never copied into the repository; the split goes to a scratch directory.
#
#   data/stories/train.sh [BINARY] [OUTPUT_DIR]
#
# Training's products run in bf16 (`--bf16`), so BINARY must be a build with
# -DNEXTWORD_DNNL=ON; without one, this script builds build-train/ so
# (cmake/install-deps.sh --train installs oneDNN). The run writes a checkpoint
# every 1,000 steps: after an interruption, the same command with RESUME=1
# continues the unfinished run from its checkpoint.json (give it the same
# SCRATCH: the teacher lives there, and a checkpoint names the training files).
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

"$repo/tools/dev_split.sh" "$corpus/tinystories-train-continuation-lowercase.txt" "$scratch"

# Two runs of the same shape and schedule. The first (the teacher) learns the
# text alone; the second, the shipped model, learns the text and the teacher's
# next-word distributions (--teacher: loss (1 - w) CE + w tau^2 KL, w 0.5,
# tau 2), from a different seed.
shape=(--vocab-size 4096 --d-model 192 --layers 4 --heads 6 --d-ff 512
  --positional rope --norm rmsnorm --activation swiglu --no-ffn-bias --context 128)
schedule=(--batch 16 --steps 22000 --warmup 500 --lr 2e-3 --min-lr 1e-4 --weight-decay 0.5
  --dropout 0.2 --val-fraction 0.02 --eval-every 1000 --checkpoint-every 1000 --threads 2
  --bf16 --format json)
text=("$corpus/tinystories-train-head.txt" "$scratch/continuation-train.txt")
teacher="$scratch/teacher"

# train DIR OPTIONS...: one run into DIR, or with RESUME=1 its continuation
# from DIR/checkpoint.json; a run that has finished (DIR/done) is skipped.
train() {
  local dir="$1"
  shift
  [ -f "$dir/done" ] && return 0
  if [ "${RESUME:-0}" = 1 ] && [ -f "$dir/checkpoint.json" ]; then
    "$bin" train --resume "$dir" --format json
  else
    "$bin" train "${text[@]}" -o "$dir" "${shape[@]}" "${schedule[@]}" "$@"
  fi
  rm -f "$dir/checkpoint.json"  # optimizer state: not part of a model
  touch "$dir/done"
}
train "$teacher" --seed 1
"$bin" eval "$scratch/heldout.txt" --model "$teacher" --format json
train "$out" --seed 2 --teacher "$teacher"
rm -f "$out/done"
"$bin" convert "$out/weights.json" "$out/weights.safetensors"  # the binary form, same floats
"$bin" eval "$scratch/heldout.txt" --model "$out" --format json
