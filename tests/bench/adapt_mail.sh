#!/usr/bin/env bash
# The measures of docs/usage.md's "Your own writing": `nextword adapt` of the
# English model to the public mail, against the English model as shipped
# and against presage with a trigram database of the same mail.
#
#   tests/bench/adapt_mail.sh [BINARY] [SCRATCH]
#
# SCRATCH (a temporary directory unless given; never inside the repository)
# gets the split (tools/mail_split.py), the adapted model (adapted/),
# each measure as a JSON line in results.jsonl, and compare_presage.py's
# working files. It takes about an hour on two cores, most of it presage's.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$repo/build/nextword}"
scratch="${2:-$(mktemp -d)}"
mkdir -p "$scratch"
corpus="${CORPUS:-$repo/../shared/corpus}"
python3 "$repo/tools/mail_split.py" "$corpus/mail-spamassassin-ham.txt" "$scratch"
results="$scratch/results.jsonl"
: >"$results"
note() { printf '{"measure": "%s", "model": "%s", "flags": "%s", "result": %s}\n' "$1" "$2" "$3" "$4" >>"$results"; }

"$bin" adapt "$scratch/train.txt" -o "$scratch/adapted" --force --format json >"$scratch/adapt.json"
note adapt adapted "" "$(cat "$scratch/adapt.json")"
for model in english "$scratch/adapted"; do
  note eval "$model" "--stride 64" "$("$bin" eval "$scratch/dev.txt" -m "$model" --stride 64 -f json)"
  for text in dev-typed dev-plain; do
    for flags in "" "--learn" "--no-repeat" "--learn --no-repeat"; do
      # shellcheck disable=SC2086
      note "ksr $text" "$model" "$flags" \
        "$("$bin" eval --ksr -k 6 $flags "$scratch/$text.txt" -m "$model" -f json)"
    done
  done
done
for text in dev-typed dev-plain; do
  python3 "$repo/tests/bench/compare_presage.py" "$bin" --text "$scratch/$text.txt" \
    --presage-text "$scratch/train.txt" --configs own,own-learn,own-norepeat --skip-nextword \
    --scratch "$scratch/presage-$text" --json "$scratch/presage-$text.json"
done
echo "results: $results, $scratch/presage-dev-typed.json, $scratch/presage-dev-plain.json"
