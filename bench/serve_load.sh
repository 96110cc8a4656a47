#!/usr/bin/env bash
# `visalign serve` under load (docs/performance.md): starts the server on loopback with a fresh
# store and a study without rate limits (one IP plays every player), runs bench/serve_load against
# it, reports the server's CPU time, stops it and checks that `hues export-humans` writes as many
# answers as the generator saw in the admin export.
#   bench/serve_load.sh [BUILD_DIR] [PLAYERS] [SECONDS] [THINK_MS]
set -euo pipefail
BUILD=${1:-build}
PLAYERS=${2:-200}
SECONDS_=${3:-60}
THINK=${4:-1000}
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
export SERVE_LOAD_TOKEN=$(head -c 24 /dev/urandom | base64)
cat > "$work/study.json" <<JSON
{"rate_limit_per_ip": {"per_second": 0, "burst": 0}, "rate_limit_per_session": {"per_second": 0, "burst": 0}}
JSON
"$BUILD/visalign" serve --store "$work/store" --study "$work/study.json" --port 0 --port-file "$work/port" \
  --admin-token-env SERVE_LOAD_TOKEN > "$work/serve.out" 2> "$work/serve.err" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' /proc/$pid/stat; }
before=$(cpu)
status=0
"$BUILD/bench/serve_load" --url "http://127.0.0.1:$port" --token-env SERVE_LOAD_TOKEN --players "$PLAYERS" \
  --seconds "$SECONDS_" --think-ms "$THINK" > "$work/load.json" || status=$?
after=$(cpu)
cat "$work/load.json"
echo "server CPU: $(echo "($after - $before) / $ticks" | bc -l | xargs printf '%.1f') s over the run ($(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg))"
kill -TERM $pid; wait $pid || true
"$BUILD/visalign" hues export-humans --store "$work/store" --out "$work/answers.csv"
rows=$(($(wc -l < "$work/answers.csv") - 1))
expected=$(python3 -c "import json; print(json.load(open('$work/load.json'))['export']['rows'])")
echo "export-humans rows: $rows (admin export: $expected)"
[ "$rows" = "$expected" ] || status=1
exit $status
