#!/usr/bin/env bash
# `visalign serve` under load (docs/performance.md): starts the server on loopback with a fresh
# store and a study without rate limits (one IP plays every player), runs bench/serve_load against
# it, reports the server's CPU time, stops it and checks that `hues export-humans` writes as many
# answers as the generator saw in the admin export. The store is a folder (sqlite), or a database of
# a throwaway PostgreSQL server this script starts on a loopback port (postgres;
# bench/postgres_server.sh); its CPU time is reported too.
#   bench/serve_load.sh [BUILD_DIR] [PLAYERS] [SECONDS] [THINK_MS] [sqlite|postgres]
set -euo pipefail
BUILD=${1:-build}
PLAYERS=${2:-200}
SECONDS_=${3:-60}
THINK=${4:-1000}
STORE_KIND=${5:-sqlite}
work=$(mktemp -d)
pid=""
pg_stop=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; [ -n "$pg_stop" ] && $pg_stop > /dev/null; rm -rf "$work"' EXIT
export SERVE_LOAD_TOKEN=$(head -c 24 /dev/urandom | base64)
store="$work/store"
if [ "$STORE_KIND" = postgres ]; then
  . "$(dirname "$0")/postgres_server.sh"
  start_postgres "$work/pg"
  "$pg_bindir/createdb" -h 127.0.0.1 -p "$pg_port" -U visalign study
  store="postgres://visalign@127.0.0.1:$pg_port/study"
fi
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "cpu flags: $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "store: $STORE_KIND; $PLAYERS players, $SECONDS_ s, think time $THINK ms"
cat > "$work/study.json" <<JSON
{"rate_limit_per_ip": {"per_second": 0, "burst": 0}, "rate_limit_per_session": {"per_second": 0, "burst": 0}}
JSON
"$BUILD/visalign" serve --store "$store" --study "$work/study.json" --port 0 --port-file "$work/port" \
  --admin-token-env SERVE_LOAD_TOKEN > "$work/serve.out" 2> "$work/serve.err" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' /proc/$pid/stat; }
# The CPU of every PostgreSQL process (the server and its backends, all children of its postmaster).
pg_cpu() {
  [ "$STORE_KIND" = postgres ] || { echo 0; return; }
  local master
  master=$(head -1 "$work/pg/data/postmaster.pid")
  for p in $master $(pgrep -P "$master"); do awk '{print $14 + $15}' /proc/$p/stat 2>/dev/null || true; done |
    awk '{s += $1} END {print s + 0}'
}
before=$(cpu)
pg_before=$(pg_cpu)
status=0
"$BUILD/bench/serve_load" --url "http://127.0.0.1:$port" --token-env SERVE_LOAD_TOKEN --players "$PLAYERS" \
  --seconds "$SECONDS_" --think-ms "$THINK" > "$work/load.json" || status=$?
after=$(cpu)
pg_after=$(pg_cpu)
cat "$work/load.json"
echo "server CPU: $(echo "($after - $before) / $ticks" | bc -l | xargs printf '%.1f') s over the run ($(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg))"
[ "$STORE_KIND" = postgres ] && echo "PostgreSQL CPU: $(echo "($pg_after - $pg_before) / $ticks" | bc -l | xargs printf '%.1f') s"
kill -TERM $pid; wait $pid || true
pid=""
"$BUILD/visalign" hues export-humans --store "$store" --out "$work/answers.csv"
rows=$(($(wc -l < "$work/answers.csv") - 1))
expected=$(python3 -c "import json; print(json.load(open('$work/load.json'))['export']['rows'])")
echo "export-humans rows: $rows (admin export: $expected)"
[ "$rows" = "$expected" ] || status=1
exit $status
