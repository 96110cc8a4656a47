#!/usr/bin/env bash
# Issue 30's cost check (docs/performance.md, "VIOLIN probes"): violin_probes_benchmark run ROUNDS
# times with random interleaving and 12 repetitions each, the fastest repetition of every benchmark
# kept per round (this VM's medians move by up to 40 % between runs, the fastest by a few %), and each
# probe's time printed as a multiple of the VIOLIN single-colour item of the same image and size in
# the same round. A multiple above 1 is a probe that costs more than a VIOLIN item.
# Usage: bench/probe_ratios.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ROUNDS=${2:-3}
field() { grep -m1 "^$1" /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'; }
simd=$(field flags | tr ' ' '\n' | grep -xE 'avx2|avx512f|avx512bw|avx512_bf16' | tr '\n' ' ')
echo "CPU: $(field 'model name') (family $(field 'cpu family') model $(field 'model')), $(nproc) CPUs, ${simd:-no AVX2}"
for round in $(seq "$ROUNDS"); do
  "$BUILD/bench/violin_probes_benchmark" --benchmark_filter='Score/' --benchmark_repetitions=12 \
    --benchmark_min_time=0.05 --benchmark_enable_random_interleaving=true --benchmark_format=csv 2> /dev/null |
    awk -F, -v round="$round" '
      # rows: "Score/<Kind>_<image>/<side>",iterations,real_time,cpu_time,...; aggregates skipped
      $1 ~ /^"Score\// && $1 !~ /_(mean|median|stddev|cv)"$/ {
        name = $1; gsub(/"/, "", name); sub(/^Score\//, "", name)
        if (!(name in best) || $4 + 0 < best[name]) best[name] = $4 + 0
      }
      END {
        for (name in best) {
          split(name, part, "/"); kind = part[1]; side = part[2]
          image = kind; sub(/.*_/, "", image); sub(/_[^_]*$/, "", kind)
          reference = best["Violin_single_" image "/" side]
          printf "round %d  %-16s %-6s %5s  %8.4f ms  %5.2f x\n", round, kind, image, side, best[name], best[name] / reference
        }
      }' | sort -k3,3 -k4,4 -k5,5n
done
