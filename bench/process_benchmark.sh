#!/usr/bin/env bash
# Whole-process costs of the built binary, warm page cache (docs/performance.md "Start-up and
# small jobs"): shared libraries loaded, `visalign --version`, `violin score` of one 256² PNG, and
# `violin evaluate` of ~300 solid 256² PNGs on one thread, the last against the independent Python
# reference (bench/violin_reference.py `time`, which needs python3-opencv for Canny) on the same
# images in the same run. Needs hyperfine (Debian package). Prints the CPU it ran on.
#   bench/process_benchmark.sh [BUILD_DIR] [OLD_BINARY]   OLD_BINARY: an earlier build to compare
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OLD=${2:-}
V="$(pwd)/$BUILD/visalign"
export VISALIGN_DATA="$(pwd)/data"
command -v hyperfine >/dev/null || { echo "error: hyperfine not found (apt-get install -y hyperfine)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "simd: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512_bf16|amx_tile|amx_bf16)$' | tr '\n' ' ')"
echo "shared libraries (ldd | wc -l): $(ldd "$V" | wc -l)${OLD:+, old binary: $(ldd "$OLD" | wc -l)}"

"$V" violin dataset --out "$tmp/ds" --scale 0.1 --variations 1 --log-level warn > /dev/null 2>&1
images=$(ls "$tmp/ds/images" | wc -l)
one=$(ls "$tmp/ds/images"/*.png | sed -n 1p)
echo "dataset: $images solid 256x256 PNGs (variation 1 at scale 0.1)"

commands=("$V --version" "$V violin score $one --target=#808080")
if [ -n "$OLD" ]; then commands+=("$OLD --version" "$OLD violin score $one --target=#808080"); fi
hyperfine -N -w 10 -r 100 --export-json "$tmp/start.json" "${commands[@]}" > /dev/null 2>&1
evaluate=()
for binary in "$V" ${OLD:+"$OLD"}; do
  evaluate+=("$binary violin evaluate --dataset $tmp/ds --images $tmp/ds/images --out $tmp/eval --threads 1 --log-level warn")
done
hyperfine -N -w 2 -r 15 --export-json "$tmp/eval.json" "${evaluate[@]}" > /dev/null 2>&1

python3 - "$tmp/start.json" "$tmp/eval.json" "$images" <<'PY'
import json, statistics, sys
start, evaluate, images = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
for r in start["results"]:
    print(f"{r['command']:<90.90} median {1e3 * r['median']:6.2f} ms  min {1e3 * r['min']:6.2f} ms")
for r in evaluate["results"]:
    print(f"{r['command'].split()[0]} violin evaluate, {images} images, 1 thread, whole process: "
          f"median {1e3 * r['median']:.1f} ms = {1e3 * r['median'] / images:.3f} ms/image "
          f"(min {1e3 * r['min'] / images:.3f})")
PY
if /usr/bin/python3 -c "import cv2" 2>/dev/null; then
  /usr/bin/python3 bench/violin_reference.py time "$tmp/ds/images" --target '#808080' --repeat 5 |
    python3 -c "import json,sys; r=json.load(sys.stdin); print(f\"Python reference, same images, 1 thread, in process (start-up excluded): best {r['ms_per_image_best']:.3f} ms/image, median {r['ms_per_image_median']:.3f}\")"
else
  echo "Python reference: not run (python3-opencv missing: apt-get install -y python3-opencv)"
fi
