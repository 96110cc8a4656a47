#!/usr/bin/env bash
# The main job end to end on the embedded SQLite store, using local reference servers on loopback
# so it needs no network and no API keys:
#   color science -> VIOLIN dataset -> image API server (degraded) -> resumable generation into the
#   run store -> VIOLIN scoring -> VIOLIN probes against probe-degraded servers -> Hues and Cues
#   human baseline and published models -> a tiny
#   random-weight CLIP model generated here -> native CLIP Hues and Cues run -> ACVA-Bench
#   generate/judge/analyze -> a `visalign serve` study played by a script and exported -> one HTML
#   report over all of it. Needs nothing outside this checkout.
# Usage: scripts/demo.sh [BUILD_DIR]   (make demo calls it after building). Outputs go to demo-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
V="$(pwd)/$BUILD/visalign"
OUT=demo-out
rm -rf "$OUT"
mkdir -p "$OUT"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
step() { printf '\n== %s ==\n' "$*"; }
# wait_port FILE: waits until a server has written its port into FILE.
wait_port() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; echo "server did not start" >&2; exit 1; }

step "color: parse, convert, compare (Sharma et al. 2005 pair 1: dE2000 = 2.0425)"
"$V" color convert "vivid pink"
"$V" color diff "lab(50, 2.6772, -79.7751)" "lab(50, 0, -82.7485)" --json

step "VIOLIN: dataset at 1% scale (prompts, ground-truth images, splits)"
"$V" violin dataset --out "$OUT/violin" --scale 0.01 --log-level warn

step "VIOLIN: reference image API on loopback (profile noise:8, 10% injected HTTP 500s, 200 req/s limit)"
"$V" violin reference-server --dataset "$OUT/violin" --port 0 --port-file "$OUT/generator.port" \
  --profile noise:8 --fail-rate 0.1 --rate-limit 200 > "$OUT/generator.log" 2>&1 &
PIDS+=($!)
wait_port "$OUT/generator.port"

step "violin generate: one image per prompt over HTTP into the embedded store (retries, resumable)"
# 12 attempts: with 10% injected failures, an image fails all of them with probability 1e-12 (at the
# default 5 it is 1e-5 per image, so a demo run would fail now and then).
"$V" violin generate --dataset "$OUT/violin" --run reference-noise --backend openai \
  --endpoint "http://127.0.0.1:$(cat "$OUT/generator.port")" --model reference \
  --store "$OUT/store" --concurrency 8 --backoff 0.05 --max-attempts 12
echo "(running the same command again resumes: nothing left to request)"
"$V" violin generate --dataset "$OUT/violin" --run reference-noise --backend openai \
  --endpoint "http://127.0.0.1:$(cat "$OUT/generator.port")" --model reference \
  --store "$OUT/store" --concurrency 8 --backoff 0.05 --max-attempts 12 --log-level warn

step "VIOLIN: score the ground truth (0 everywhere but variation 4, whose 8-bit GT is 1/255 off its range) and the degraded run"
"$V" violin evaluate --dataset "$OUT/violin" --images ground-truth="$OUT/violin/images" \
  --store "$OUT/store" --run reference-noise --out "$OUT/violin-eval"

step "VIOLIN probes (paper §2.2 Level 5, §2.4, Fig. 4): negation, semantic gravity, aesthetic inertia, geometry"
"$V" violin probes --out "$OUT/probes" --scale 0.25 --image-size 128
# Two reference servers with probe degradations: a splitter biased halfway to 50/50 and a generator
# that drifts 30 % of the way to the context object's colour; the evaluation must recover 0.5 and 0.3.
for profile in split-bias:0.5 pull:0.3; do
  name=probes-${profile%%:*}
  "$V" violin reference-server --dataset "$OUT/probes" --port 0 --port-file "$OUT/$name.port" --profile "$profile" \
    > "$OUT/$name.log" 2>&1 &
  PIDS+=($!)
  wait_port "$OUT/$name.port"
  "$V" violin generate --dataset "$OUT/probes" --run "$name" --backend openai \
    --endpoint "http://127.0.0.1:$(cat "$OUT/$name.port")" --model reference --size 128x128 \
    --store "$OUT/store" --concurrency 8 --log-level warn
done
"$V" violin evaluate --dataset "$OUT/probes" --images ground-truth="$OUT/probes/images" \
  --store "$OUT/store" --run probes-split-bias --run probes-pull --out "$OUT/probes-eval" --log-level warn
grep -E "^\| (model|---)|inertia \| all \| (slope|intercept)|gravity \| (consistent|conflicting) \| pull" \
  "$OUT/probes-eval/summary.md"

step "Hues and Cues: human baseline (leave-one-out fail rates)"
"$V" hues humans | head -40

step "Hues and Cues: the two published sample models against the older human snapshot"
"$V" hues evaluate --predictions data/hues/peer-sample --humans data/hues/peer-sample/HC_old.csv \
  --out "$OUT/hues-eval" --log-level warn
cat "$OUT/hues-eval/summary.md"

step "native CLIP: a tiny model with RANDOM WEIGHTS, generated here (deterministic: the same files on every machine)"
"$V" clip random-model --out "$OUT/clip-random" --seed 0
"$V" clip info --clip-model "$OUT/clip-random"

step "native CLIP: hues run with the tiny model (RANDOM WEIGHTS: its numbers mean nothing)"
"$V" hues run --clip-model "$OUT/clip-random" --name clip-random --nonsense \
  --cache "$OUT/cache" --out "$OUT/hues-runs" --log-level warn
"$V" hues evaluate --predictions "$OUT/hues-runs" --out "$OUT/hues-runs-eval" --log-level warn
cat "$OUT/hues-runs-eval/summary.md"
"$V" hues nonsense --predictions "$OUT/hues-runs" --out "$OUT/hues-nonsense"

step "ACVA-Bench: local image generator + deterministic judge, two models, tiny CLIP embeddings (RANDOM WEIGHTS)"
"$V" acva reference-server --port 0 > "$OUT/acva-server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q "listening on" "$OUT/acva-server.log" && break; sleep 0.1; done
ACVA_URL=$(grep -o "http://127.0.0.1:[0-9]*" "$OUT/acva-server.log" | head -1)
for model in varied mono; do
  "$V" acva generate --store "$OUT/store" --run "acva-$model" --endpoint "$ACVA_URL" --model "$model" \
    --seed 0 --param 'seed={seed}' --log-level warn
done
"$V" acva judge --store "$OUT/store" --run acva-varied --run acva-mono \
  --judge-endpoint "$ACVA_URL" --judge-model reference-judge --log-level warn
"$V" acva analyze --store "$OUT/store" --run acva-varied --run acva-mono --judge-model reference-judge \
  --clip-model "$OUT/clip-random" --cluster-threshold 0.001 --out "$OUT/acva" --log-level warn
cat "$OUT/acva/summary.md"

step "visalign serve: a Hues and Cues study on loopback, one scripted session through its API, the answers exported"
cat > "$OUT/study.json" <<'JSON'
{"words_per_participant": 5, "completion_codes": ["DEMO-CODE"],
 "completion_url": "https://app.prolific.com/submissions/complete?cc={code}"}
JSON
"$V" serve --store "$OUT/study-store" --study "$OUT/study.json" --port 0 --port-file "$OUT/serve.port" \
  > "$OUT/serve.log" 2>&1 &
SERVE_PID=$!
PIDS+=($SERVE_PID)
wait_port "$OUT/serve.port"
echo "(a participant would open http://127.0.0.1:$(cat "$OUT/serve.port")/?PROLIFIC_PID=...)"
python3 scripts/play_session.py "http://127.0.0.1:$(cat "$OUT/serve.port")" --seed 1
kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true
"$V" hues export-humans --store "$OUT/study-store" --out "$OUT/study-answers.csv"
head -3 "$OUT/study-answers.csv"
"$V" hues export-humans --store "$OUT/study-store" --merge-shipped --out "$OUT/all-answers.csv"
"$V" hues humans --humans "$OUT/all-answers.csv" | head -8

step "report: one self-contained HTML page over this demo's results and runs"
"$V" report --title "visalign demo" --results "$OUT/violin-eval" --results "$OUT/probes-eval" --results "$OUT/hues-eval" \
  --results "$OUT/hues-runs-eval" --results "$OUT/hues-nonsense" --results "$OUT/acva" \
  --store "$OUT/store" --run reference-noise \
  --out "$OUT/report.html"

step "done: outputs in $OUT/"
echo "report: $(pwd)/$OUT/report.html"
