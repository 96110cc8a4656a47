#!/usr/bin/env bash
# Formats visalign's C++ sources with clang-format 14 and .clang-format (Debian package clang-format-14).
#   scripts/format.sh          rewrite every source in place
#   scripts/format.sh --check  change nothing; list the files that differ and exit 1 if any (ctest format_check)
# Sources: every *.h and *.cc under src/, include/, tests/ and bench/ (the *.inc tables are left as
# written: generated ones by their scripts, the kernel bodies laid out by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
FORMAT=${CLANG_FORMAT:-clang-format-14}
command -v "$FORMAT" >/dev/null || { echo "error: $FORMAT not found (apt-get install -y clang-format-14)" >&2; exit 2; }
mapfile -t files < <(find src include tests bench -type f \( -name '*.h' -o -name '*.cc' \) -not -path '*/fuzz/corpus/*' | sort)
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f"; bad=1; fi
  done
  [ $bad -eq 0 ] && echo "format_check: ${#files[@]} files formatted"
  exit $bad
fi
"$FORMAT" -i "${files[@]}"
