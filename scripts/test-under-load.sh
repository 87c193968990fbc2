#!/usr/bin/env bash
# Runs the whole test suite N times (default 5) while busy loops hold every core, and stops at the
# first failing run. Tests must assert behaviour, not speed: this is how that is checked.
#   bash scripts/test-under-load.sh [RUNS]
# Needs a build (npm run build). Each run's output goes to test-results/under-load/run-K.log.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
mkdir -p test-results/under-load
hogs=()
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_hogs EXIT
# One busy loop per core, each ending by itself after 3 hours at the latest.
for _ in $(seq "$(nproc)"); do
  timeout 10800 node -e 'for (;;) {}' &
  hogs+=("$!")
done
for k in $(seq "$runs"); do
  log="test-results/under-load/run-$k.log"
  started=$(date +%s)
  if node test/run.mjs > "$log" 2>&1; then status=passed; else status=FAILED; fi
  echo "run $k of $runs: $status in $(( $(date +%s) - started )) s: $(tail -n 1 "$log")"
  if [ "$status" = FAILED ]; then
    grep -E '^✖|not ok' "$log" | head -20
    exit 1
  fi
done
