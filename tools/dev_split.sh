#!/usr/bin/env bash
# The development split of the TinyStories continuation file on which the next
# default model is chosen, the one rule that tools/ablations.py,
# tests/bench/compare_presage.py and tests/bench/model_speed.py use. It lies
# inside the part the shipped default model held out (data/stories/train.sh
# cuts at line 20,500), so neither has seen it.
#
#   tools/dev_split.sh CONTINUATION_FILE OUTPUT_DIR
#
# Writes OUTPUT_DIR/continuation-train.txt (lines 1 to the first blank line at
# or after line 21500, that blank line included: training text) and
# OUTPUT_DIR/heldout.txt (the rest, 603 stories, about 2.6% of the TinyStories
# text: the development split, never trained on).
set -euo pipefail
continuation="$1"
out="$2"
cut=$(awk 'NR >= 21500 && /^[[:space:]]*$/ { print NR; exit }' "$continuation")
if [ -z "$cut" ]; then
  echo "dev_split.sh: $continuation: no blank line at or after line 21500" >&2
  exit 1
fi
head -n "$cut" "$continuation" > "$out/continuation-train.txt"
tail -n "+$((cut + 1))" "$continuation" > "$out/heldout.txt"
