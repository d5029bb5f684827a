#!/usr/bin/env bash
# Reproduces data/default: splits the TinyStories files into training text and
# a held-out part, trains with `nextword train`, and scores the result on the
# held-out part with `nextword eval`. The corpus is read from CORPUS (default
# ../shared/corpus next to the repository) and never copied into the repository;
# the split goes to a scratch directory.
#
#   data/default/train.sh [BINARY] [OUTPUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-$repo/build/nextword}"
out="${2:-$here}"
corpus="${CORPUS:-$repo/../shared/corpus}"
scratch="${SCRATCH:-$(mktemp -d)}"

head_file="$corpus/tinystories-train-head.txt"
continuation="$corpus/tinystories-train-continuation-lowercase.txt"
# Held out: the paragraphs after the first blank line from line 20500 of the
# continuation file on (the last ~10% of it).
cut=$(awk 'NR >= 20500 && /^[[:space:]]*$/ { print NR; exit }' "$continuation")
head -n "$cut" "$continuation" > "$scratch/continuation-train.txt"
tail -n "+$((cut + 1))" "$continuation" > "$scratch/heldout.txt"

"$bin" train "$head_file" "$scratch/continuation-train.txt" -o "$out" \
  --vocab-size 4096 --d-model 128 --layers 4 --heads 4 --d-ff 512 --context 64 \
  --batch 32 --steps 14500 --warmup 300 --lr 2e-3 --min-lr 1e-4 --weight-decay 0.1 \
  --dropout 0.2 --val-fraction 0.02 --eval-every 1000 --checkpoint-every 1000 --seed 1 \
  --threads 2 --format json
rm -f "$out/checkpoint.json"  # optimizer state: not part of the shipped model
"$bin" convert "$out/weights.json" "$out/weights.safetensors"  # the binary form, same floats
"$bin" eval "$scratch/heldout.txt" --model "$out" --format json
