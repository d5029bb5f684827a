#!/usr/bin/env bash
# Reproduces data/english: unpacks and cleans the 2015 English Wikipedia
# text (tests/bench/clean_wikipedia.py), keeps its last 150 articles out as
# the development split (tests/bench/wiki_split.py), trains with `nextword
# train` (cased, a 65,536-word vocabulary behind an adaptive softmax), writes
# the weights as F16 safetensors, and scores the model on the development
# split and on WikiText-103's validation split, without and with the cache.
# The corpus is read from CORPUS (default ../shared/corpus next to the
# repository) and never copied into the repository; the unpacked and cleaned
# text and the split go to SCRATCH (a temporary directory unless given).
#
#   data/english/train.sh [BINARY] [OUTPUT_DIR]
#
# The run writes a checkpoint every 500 steps: after an interruption, the
# same command with RESUME=1 and the same SCRATCH continues it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-}"
out="${2:-$here}"
corpus="${CORPUS:-$repo/../shared/corpus}"
scratch="${SCRATCH:-$(mktemp -d)}"

if [ -z "$bin" ]; then
  "$repo/cmake/install-deps.sh"
  cmake -S "$repo" -B "$repo/build-train" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$repo/build-train" -j"$(nproc)" --target nextword
  bin="$repo/build-train/nextword"
fi

if [ ! -f "$scratch/split/train.txt" ]; then
  xz -dc "$corpus/wikipedia-en-2015.txt.xz" >"$scratch/wikipedia-en-2015.txt"
  python3 "$repo/tests/bench/clean_wikipedia.py" "$scratch/wikipedia-en-2015.txt" "$scratch/clean.txt"
  rm "$scratch/wikipedia-en-2015.txt"
  python3 "$repo/tests/bench/wiki_split.py" "$scratch/clean.txt" "$scratch/split"
fi

# The recipe (data/english/ablations.md says how it was chosen).
shape=(--no-lowercase --vocab-size 65536 --adaptive-cutoffs 4096,16384 --d-model 192 --layers 4
  --heads 6 --d-ff 512 --positional rope --norm rmsnorm --activation swiglu --no-ffn-bias
  --context 128)
schedule=(--batch 16 --steps "${STEPS:-9000}" --warmup 500 --lr 2e-3 --min-lr 1e-4
  --weight-decay 0.1 --dropout 0 --val-fraction 0.002 --eval-every 2000 --checkpoint-every 500
  --threads 2 --seed 1 --format json)

if [ "${RESUME:-0}" = 1 ] && [ -f "$out/checkpoint.json" ]; then
  "$bin" train --resume "$out" --format json
else
  "$bin" train "$scratch/split/train.txt" -o "$out" "${shape[@]}" "${schedule[@]}"
fi
rm -f "$out/checkpoint.json" "$out/weights.safetensors"  # optimizer state: not part of a model
"$bin" convert "$out/weights.json" "$out/weights.safetensors" --dtype f16
rm "$out/weights.json"
# One pass each gives the figures with the cache and, under cache.without,
# without it.
for text in "$scratch/split/dev.tokens" "$corpus/wikitext103-valid.tokens"; do
  "$bin" eval --wikitext "$text" --model "$out" --format json --cache
done
