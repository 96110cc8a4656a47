#!/usr/bin/env bash
# The main job end to end on the embedded SQLite store, with what visalign implements.
# Usage: scripts/demo.sh [BUILD_DIR]   (make demo calls it after building)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
V="$BUILD/visalign"
OUT=demo-out
rm -rf "$OUT"
mkdir -p "$OUT"
step() { printf '\n== %s ==\n' "$*"; }

step "color: parse, convert and compare"
"$V" color convert "vivid pink"
"$V" color diff "#D9B451" "hsl(45, 64%, 58%)"
