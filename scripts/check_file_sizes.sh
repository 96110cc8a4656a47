#!/usr/bin/env bash
# Keeps every hand-written file at most 500 lines (issue 29: "No hand-written file over 500 lines"; a
# longer file is split along its seams, docs/architecture.md "Code layout"). ctest file_size_check.
#   scripts/check_file_sizes.sh   list each file over the limit, "<path>: <n> lines (limit 500)", and
#                                 exit 1 if any; exit 0 with a one-line summary otherwise
# Hand-written: the git-tracked sources under src/ include/ tests/ bench/ scripts/ web/: C++ (*.h, *.cc,
# *.h.in), Python, shell, JavaScript (*.js, *.cjs, *.mjs), CSS, HTML and CMake files. Not counted: the
# *.inc kernel bodies and generated tables, tests/data/ and tests/fuzz/corpus/ (data), node_modules/,
# and files of other kinds (data such as JSON, CSV, fuzz dictionaries; npm's package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."
readonly kLimit=500
command -v git >/dev/null || { echo "error: git not found (apt-get install -y git)" >&2; exit 2; }
listing=$(git ls-files -- src include tests bench scripts web) ||
  { echo "error: cannot list the tracked files ($(pwd)): expected a git checkout of visalign" >&2; exit 2; }
mapfile -t files < <(printf '%s\n' "$listing" |
  grep -E '(\.(h|cc|h\.in|py|sh|js|cjs|mjs|css|html|cmake)|/CMakeLists\.txt)$' |
  grep -v -E '^tests/data/|^tests/fuzz/corpus/|(^|/)node_modules/|\.inc$' || true)
mapfile -t present < <(for f in "${files[@]}"; do [ -f "$f" ] && echo "$f"; done)  # not deleted in the work tree
# One wc per batch of files; its "total" lines are not files.
over=$(printf '%s\0' "${present[@]}" | xargs -0 wc -l |
  awk -v limit="$kLimit" '$2 != "total" && $1 > limit { n = $1; sub(/^ *[0-9]+ /, ""); print $0 ": " n " lines (limit " limit ")" }')
if [ -n "$over" ]; then
  echo "$over"
  exit 1
fi
echo "file_size_check: ${#present[@]} hand-written files, none over $kLimit lines"
