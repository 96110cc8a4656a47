#!/usr/bin/env bash
# Many workers, one run (docs/performance.md "Many workers on one run"): items/s of N concurrent
# `visalign violin generate` processes (1, 2, 4, 8; --concurrency 4 each) sharing one run of a fresh
# store against the VIOLIN reference server answering after 200 ms (a latency-bound API). The store
# is an embedded SQLite store (sqlite), or a database of a throwaway PostgreSQL server this script
# starts on a loopback port with Debian's defaults (postgres; as `nobody` when run as root), images
# in a folder. Prints the CPU it ran on, then one line per N: seconds until the last worker exits,
# items/s, the images the server served (= items: nothing requested twice), and the CPU seconds the
# workers used.
#   bench/workers_benchmark.sh [BUILD_DIR] [LATENCY_MS] [sqlite|postgres]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
LATENCY_MS=${2:-200}
STORE_KIND=${3:-sqlite}
CONCURRENCY=4
V="$(cd "$BUILD" && pwd)/visalign"
export VISALIGN_DATA="$(pwd)/data"
tmp=$(mktemp -d)
server=""
pg_stop=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; [ -n "$pg_stop" ] && $pg_stop > /dev/null; rm -rf "$tmp"' EXIT

if [ "$STORE_KIND" = postgres ]; then
  . bench/postgres_server.sh
  start_postgres "$tmp/pg"
fi

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
"$V" violin dataset --out "$tmp/ds" --scale 0.04 --variations 1 2 --no-images --log-level warn > /dev/null
items=$(wc -l < "$tmp/ds/manifest.jsonl")
"$V" violin reference-server --dataset "$tmp/ds" --port 0 --port-file "$tmp/port" --latency-ms "$LATENCY_MS" \
    --log-level warn > /dev/null 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
url="http://127.0.0.1:$(cat "$tmp/port")"
echo "dataset: $items items; server latency $LATENCY_MS ms; --concurrency $CONCURRENCY per worker"
echo "store: $STORE_KIND"
echo "workers  seconds  items/s  served  cpu_s"
for n in 1 2 4 8; do
  store="$tmp/store-$n"
  store_flags=()
  if [ "$STORE_KIND" = postgres ]; then
    "$pg_bindir/createdb" -h 127.0.0.1 -p "$pg_port" -U visalign "bench$n"
    store="postgres://visalign@127.0.0.1:$pg_port/bench$n"
    store_flags=(--image-root "$tmp/images-$n")
  fi
  before=$(curl -s "$url/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_status"].get("200", 0))')
  start=$(date +%s.%N)
  pids=()
  for w in $(seq "$n"); do
    "$V" --log-level warn violin generate --dataset "$tmp/ds" --store "$store" --run bench --backend openai \
        --endpoint "$url" --model reference --size 32x32 --concurrency "$CONCURRENCY" "${store_flags[@]}" \
        > "$tmp/w$n-$w.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  end=$(date +%s.%N)
  after=$(curl -s "$url/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_status"].get("200", 0))')
  cpu=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  python3 -c "s = $end - $start; print(f'{$n:7d}  {s:7.2f}  {$items / s:7.1f}  {$after - $before:6d}  {($cpu - ${cpu_prev:-0}) / $(getconf CLK_TCK):5.1f}')"
  cpu_prev=$cpu
done
