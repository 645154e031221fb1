#!/usr/bin/env bash
# demo.sh -- the main job: set up, record all nine workloads (train and infer)
# on a small preset, archive each run, analyze the archives, print the results
# and write them as charts and an HTML page (with this machine's roofline).
#   scripts/demo.sh [PRESET]   (default: tiny; `small` takes about 1.6 times as long)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-tiny}
scripts/setup.sh build
out=traces/demo-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
./build/fathom record --all --modes train,infer --preset "$preset" --steps 6 --dir "$out"
./build/fathom analyze breakdown --skip-first 1 --skip-last 1 "$out"/*.tar.zst
./build/fathom analyze similarity --skip-first 1 --skip-last 1 "$out"/*train*.tar.zst
./build/fathom peak --format json >"$out/peak.json"
./build/fathom report --skip-first 1 --skip-last 1 --peak "$out/peak.json" -o "$out/report" "$out"/*.tar.zst >/dev/null
echo "archives: $out"
echo "report: $out/report/index.html"
