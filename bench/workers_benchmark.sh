#!/usr/bin/env bash
# Many workers, one run (docs/performance.md "Many workers on one run"): items/s of N concurrent
# `visalign violin generate` processes (1, 2, 4, 8; --concurrency 4 each) sharing one run of a fresh
# SQLite store against the VIOLIN reference server answering after 200 ms (a latency-bound API).
# Prints the CPU it ran on, then one line per N: seconds until the last worker exits, items/s, and
# the images the server served (= items: nothing requested twice).
#   bench/workers_benchmark.sh [BUILD_DIR] [LATENCY_MS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
LATENCY_MS=${2:-200}
CONCURRENCY=4
V="$(cd "$BUILD" && pwd)/visalign"
export VISALIGN_DATA="$(pwd)/data"
tmp=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
"$V" violin dataset --out "$tmp/ds" --scale 0.04 --variations 1 2 --no-images --log-level warn > /dev/null
items=$(wc -l < "$tmp/ds/manifest.jsonl")
"$V" violin reference-server --dataset "$tmp/ds" --port 0 --port-file "$tmp/port" --latency-ms "$LATENCY_MS" \
    --log-level warn > /dev/null 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$tmp/port")"
echo "dataset: $items items; server latency $LATENCY_MS ms; --concurrency $CONCURRENCY per worker"
echo "workers  seconds  items/s  served"
for n in 1 2 4 8; do
  store="$tmp/store-$n"
  before=$(curl -s "$url/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_status"].get("200", 0))')
  start=$(date +%s.%N)
  pids=()
  for w in $(seq "$n"); do
    "$V" --log-level warn violin generate --dataset "$tmp/ds" --store "$store" --run bench --backend openai \
        --endpoint "$url" --model reference --size 32x32 --concurrency "$CONCURRENCY" > "$tmp/w$n-$w.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  end=$(date +%s.%N)
  after=$(curl -s "$url/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_status"].get("200", 0))')
  python3 -c "s = $end - $start; print(f'{$n:7d}  {s:7.2f}  {$items / s:7.1f}  {$after - $before:6d}')"
done
