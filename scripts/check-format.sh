#!/usr/bin/env bash
# Every C++ file git tracks under src/ and tests/ is as clang-format-14 writes it with the
# repository's .clang-format. `--fix` rewrites them in place instead of failing.
set -euo pipefail
cd "$(dirname "$0")/.."
FORMAT=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$FORMAT" >/dev/null; then
  echo "check-format: $FORMAT not found (scripts/setup.sh --test-tools installs clang-format-14)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.hpp' 'tests/*.cpp' 'tests/*.hpp')
if [ "${1:-}" = "--fix" ]; then
  "$FORMAT" -i --style=file "${files[@]}"
  exit 0
fi
if ! "$FORMAT" --dry-run --Werror --style=file "${files[@]}" 2>/tmp/check-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/check-format.$$ | cut -d: -f1,2 | sort -u | head -40 >&2
  echo "check-format: the files above differ from .clang-format (bash scripts/check-format.sh --fix)" >&2
  rm -f /tmp/check-format.$$
  exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files as .clang-format writes them"
