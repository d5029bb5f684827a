#!/usr/bin/env bash
# Reproduces data/english: unpacks and cleans the 2015 English Wikipedia
# text (tools/clean_wikipedia.py), keeps its last 150 articles out as
# the development split (tools/wiki_split.py), trains with `nextword
# train` (cased, a 65,536-word vocabulary behind an adaptive softmax), writes
# the weights as F16 safetensors, and scores the model on the development
# split and on WikiText-103's validation split, without and with the cache.
# The corpus is read from CORPUS (default ../shared/corpus next to the
# repository) and never copied into the repository; the unpacked and cleaned
# text and the split go to SCRATCH (a temporary directory unless given).
#
#   data/english/train.sh [BINARY] [OUTPUT_DIR]
#
# This run continues the first English model (commit 0dd1e65's data/english,
# taken from git into SCRATCH/issue35) with its vocabulary, on the same text
# in a fresh order (--shuffle, seed 2), warmup-stable-decay at a learning
# rate that does not undo it (2e-3, the first model's peak, cost 0.25 nats in 400
# steps; 5e-4 none: data/english/ablations.md), then builds the memory
# (`nextword memory`, the whole text) and fits its weights on the
# development split.
#
# The run writes a checkpoint every 500 steps into OUTPUT_DIR (keep it
# outside the repository): after an interruption, the same command with
# RESUME=1 and the same SCRATCH and OUTPUT_DIR continues it (STEPS moves its
# end). Were the checkpoint lost, the run starts again from the first model.
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
  python3 "$repo/tools/clean_wikipedia.py" "$scratch/wikipedia-en-2015.txt" "$scratch/clean.txt"
  rm "$scratch/wikipedia-en-2015.txt"
  python3 "$repo/tools/wiki_split.py" "$scratch/clean.txt" "$scratch/split"
fi

# The recipe (data/english/ablations.md says how it was chosen): the first
# model's shape, from its weights.
init="$scratch/issue35"
if [ ! -f "$init/vocab.json" ]; then
  mkdir -p "$init"
  for f in vocab.json weights.safetensors lexicon.tsv; do
    git -C "$repo" show "0dd1e65:data/english/$f" >"$init/$f"
  done
fi
shape=(--no-lowercase --vocab-size 65536 --adaptive-cutoffs 4096,16384 --d-model 192 --layers 4
  --heads 6 --d-ff 512 --positional rope --norm rmsnorm --activation swiglu --no-ffn-bias
  --context 128 --init-from "$init")
schedule=(--batch 16 --steps "${STEPS:-40000}" --warmup 200 --lr 6e-4 --min-lr 3e-5
  --schedule wsd --decay-fraction 0.15 --shuffle
  --weight-decay 0.1 --dropout 0 --val-fraction 0.002 --eval-every 2000 --checkpoint-every 500
  --threads 2 --seed 2 --format json)

if [ "${RESUME:-0}" = 1 ] && [ -f "$out/checkpoint.json" ]; then
  "$bin" train --resume "$out" --format json ${STEPS:+--steps "$STEPS"}
else
  "$bin" train "$scratch/split/train.txt" -o "$out" "${shape[@]}" "${schedule[@]}"
fi
rm -f "$out/checkpoint.json" "$out/weights.safetensors"  # optimizer state: not part of a model
"$bin" convert "$out/weights.json" "$out/weights.safetensors" --dtype f16
rm "$out/weights.json"
# The memory of the whole text, its weights fitted on the development split.
"$bin" memory "$scratch/split/train.txt" -m "$out" --order "${ORDER:-4}" \
  --cutoffs "${CUTOFFS:-2,3,4}" --dev "$scratch/split/dev.tokens" --format json
# One pass each gives the figures with the cache and, under cache.without,
# without it; with the memory and without.
for text in "$scratch/split/dev.tokens" "$corpus/wikitext103-valid.tokens"; do
  "$bin" eval --wikitext "$text" --model "$out" --format json --cache
  "$bin" eval --wikitext "$text" --model "$out" --format json --cache --no-memory
done
