#!/usr/bin/env bash
# The report's size and speed check (docs/performance.md, "Report"): 162 Hues and Cues models (and
# their nonsense baseline), 8 VIOLIN models and 6 ACVA models (bench/report_inputs.py), `visalign
# report` timed five times, the page's size, the time headless Chromium takes to open it and render
# every figure, then the static export of every figure (--figures, SVG and PNG) timed once.
# Usage: bench/report_benchmark.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
python3 bench/report_inputs.py "$OUT/inputs"
args=(report --results "$OUT/inputs/violin" --results "$OUT/inputs/hues" --results "$OUT/inputs/nonsense"
      --results "$OUT/inputs/acva" --out "$OUT/report.html")
for i in 1 2 3 4 5; do
  /usr/bin/time -f "visalign report: %e s wall, %M KB max RSS" "$BUILD/visalign" "${args[@]}" > /dev/null
done
echo "report.html: $(stat -c %s "$OUT/report.html") bytes"
start=$(date +%s.%N)
node tests/testing/report_check.cjs "$BUILD/web/report/node_modules" "$OUT/report.html" > "$OUT/check.json"
end=$(date +%s.%N)
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('chromium: %d figures rendered, %d console errors, %d requests' % (len(d['marks']), len(d['errors']), len(d['requests'])))" "$OUT/check.json"
echo "chromium open + render + style switch: $(echo "$end - $start" | bc) s"
/usr/bin/time -f "visalign report --figures (SVG + PNG): %e s wall, %M KB max RSS" "$BUILD/visalign" "${args[@]}" \
  --figures "$OUT/figures" --format both > /dev/null
echo "figures: $(ls "$OUT/figures" | wc -l) files, $(du -sb "$OUT/figures" | cut -f1) bytes"
