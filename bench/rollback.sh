#!/usr/bin/env bash
# bench/rollback: roll back 3 changed packages (an upgrade, a downgrade, a removal) in a venv of
# ~300 packages, against `uv pip sync` of S0's exact pins; each timed run starts from the changed
# state (hyperfine --prepare re-applies the 3 changes).
# Usage: bench/rollback.sh [FILLER_PACKAGES=300] [RUNS=20]
# BOOTSTRAP_BIN=path uses that binary (and skips scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N=${1:-300}
RUNS=${2:-20}
bench_setup rollback "$N"

export UV_NO_CONFIG=1 BOOTSTRAP_HOME="$W/home"
V="$W/venv"
PY="$V/bin/python"

uv venv -q --python 3.11 "$V"
seq -f "filler-%04g" 1 "$N" >"$W/fillers.txt"
uv pip install -q --python "$PY" --index-url "$INDEX" -r "$W/fillers.txt" \
  demo-core==1.0.0 demo-utils==1.0.0 regex
"$BS" snapshot --venv "$V" -o "$W/s0.json"
# S0 as exact pins, for uv pip sync.
python3 - "$W/s0.json" >"$W/s0.txt" <<'PY'
import json, sys
for name, p in sorted(json.load(open(sys.argv[1]))["packages"].items()):
    print(f"{name}=={p['version']}")
PY
count=$(wc -l <"$W/s0.txt")

cat >"$W/change.sh" <<SH
set -e
uv pip install -q --python "$PY" --index-url "$INDEX" --no-deps demo-core==2.0.0 demo-utils==0.9.0
uv pip uninstall -q --python "$PY" filler-0001
SH
bash "$W/change.sh"
"$BS" rollback --venv "$V" --to "$W/s0.json" --index-url "$INDEX" --dry-run >&2
echo "venv: $count installed distributions; 3 changed" >&2

hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$W/rollback.json" \
  --prepare "bash $W/change.sh" \
  -n "bootstrap rollback" "$BS rollback --venv $V --to $W/s0.json --index-url $INDEX" \
  -n "uv pip sync (S0 pins)" "uv pip sync --python $PY --index-url $INDEX $W/s0.txt"

# Both end in S0: the last rollback's result must equal it.
bash "$W/change.sh"
"$BS" rollback --venv "$V" --to "$W/s0.json" --index-url "$INDEX" >/dev/null 2>&1
# Its log ends with the time of each phase ("# took …").
grep -h "^# took" "$(ls -td "$V"/.bootstrap/logs/*/ | head -1)rollback.log" >&2 || true
"$BS" rollback --venv "$V" --to "$W/s0.json" --index-url "$INDEX" 2>/dev/null | grep -q "nothing to do"

bench_ratios "$W/rollback.json"
