#!/usr/bin/env bash
# Repeats the K1 experiment with different seeds and tallies the verdicts:
#   scripts/acceptance-k1.sh off 10    -> expect exit 1 (stale-write-accepted) in >= 9 of 10
#   scripts/acceptance-k1.sh on 10     -> expect exit 0 with refused stale writes in 10 of 10
set -u
fence=${1:-off}; runs=${2:-10}; shift 2 || true
store=${STORE:-$(mktemp -d)}
cd "$(dirname "$0")/.."
for seed in $(seq 1 "$runs"); do
  node dist/cli/test-jepsen.js --backend redis --nemesis pause --fence "$fence" --time-limit 30 --seed "$seed" --store "$store" "$@" >/dev/null 2>&1
  code=$?
  dir=$(readlink -f "$store/latest")
  stale=$(grep -o '"stale-write-accepted"' "$dir/results.json" | head -1)
  refused=$(grep -c '"accepted":false' "$dir/resource.ndjson")
  echo "seed $seed: exit $code ${stale:+stale-write-accepted} refused=$refused"
done
