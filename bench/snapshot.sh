#!/usr/bin/env bash
# bench/snapshot: `bootstrap snapshot` of a venv with ~300 installed packages, against
# `uv pip freeze` and `pip freeze` of the same venv, measured in one hyperfine run.
# Usage: bench/snapshot.sh [FILLER_PACKAGES=300]
# BOOTSTRAP_BIN=path uses that binary (and skips scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N=${1:-300}
bench_setup snapshot "$N"

# `python3 -m venv` so that pip is in the venv (for `pip freeze`); the packages go in with uv.
python3 -m venv "$W/venv"
seq -f "filler-%04g" 1 "$N" >"$W/reqs.txt"
uv pip install -q --python "$W/venv/bin/python" --index-url "$INDEX" -r "$W/reqs.txt"
count=$(ls -d "$W"/venv/lib/python3*/site-packages/*.dist-info | wc -l)
echo "venv: $count installed distributions" >&2

# The first snapshot asks Python for its facts once and caches them (and the host facts) in the
# venv, as any bootstrap run on it would have; the measured runs spawn nothing.
"$BS" snapshot --venv "$W/venv" -o "$W/first.json"
test "$(grep -c '"version"' "$W/first.json")" -ge "$count"

hyperfine -N --warmup 5 --runs 30 --export-json "$W/snapshot.json" \
  -n "bootstrap snapshot" "$BS snapshot --venv $W/venv -o /dev/null" \
  -n "uv pip freeze" "uv pip freeze --python $W/venv/bin/python" \
  -n "pip freeze" "$W/venv/bin/python -m pip freeze"

bench_ratios "$W/snapshot.json"
