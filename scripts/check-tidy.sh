#!/usr/bin/env bash
# clang-tidy-14 over every C++ file git tracks under src/, with the repository's .clang-tidy
# (a small set of bug-finding checks; every finding is an error). Reads build/'s compile
# database, less the precompiled header (GCC's .gch, which clang cannot read): each file is
# parsed with the flags it is built with.
#   check-tidy.sh [FILE...]   only these files
#   TIDY_JOBS=2               files checked at once (default: the CPU count)
set -euo pipefail
cd "$(dirname "$0")/.."
TIDY=${CLANG_TIDY:-clang-tidy-14}
if ! command -v "$TIDY" >/dev/null; then
  echo "check-tidy: $TIDY not found (scripts/setup.sh --test-tools installs clang-tidy-14)" >&2
  exit 2
fi
if [ ! -f build/compile_commands.json ]; then
  echo "check-tidy: build/compile_commands.json is missing (configure build/ first: scripts/setup.sh)" >&2
  exit 2
fi
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - build/compile_commands.json "$db/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    e["command"] = re.sub(r" -include \S+cmake_pch\.hxx", "", e["command"]).replace(" -Winvalid-pch", "")
json.dump(entries, open(sys.argv[2], "w"))
PY
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- 'src/*.cpp' | grep -v '^src/core/glibc_compat.cpp$')
fi
jobs=${TIDY_JOBS:-$(nproc)}
# One clang-tidy per file, $jobs at once; a file's findings are printed together.
if ! printf '%s\0' "${files[@]}" |
    xargs -0 -n1 -P"$jobs" sh -c 'out=$("$0" -p "$1" --quiet --extra-arg=-Wno-unknown-warning-option "$2" 2>&1) ||
                                   { printf "%s\n" "$out" | grep -v "warnings generated" >&2; exit 1; }' "$TIDY" "$db"; then
  echo "check-tidy: the findings above break .clang-tidy's checks (fix them, or say why with NOLINT(check))" >&2
  exit 1
fi
echo "check-tidy: ${#files[@]} files pass .clang-tidy's checks"
