#!/usr/bin/env bash
# bench/rollback: roll back 3 changed packages (an upgrade, a downgrade, a removal) in a venv of
# ~300 packages, against `uv pip sync` of S0's exact pins; each timed run starts from the changed
# state (hyperfine --prepare re-applies the 3 changes).
# Usage: bench/rollback.sh [FILLER_PACKAGES=300] [RUNS=20]
# BOOTSTRAP_BIN=path uses that binary (and skips scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BOOTSTRAP_BIN:-}" ]; then
  bash scripts/setup.sh >/dev/null
  BOOTSTRAP_BIN=build/bootstrap
fi
export PATH="$PWD/.tools/venv/bin:$PATH"
N=${1:-300}
RUNS=${2:-20}
W=$(mktemp -d /tmp/bootstrap-bench-rollback.XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$W"' EXIT

python3 testworld/make_wheels.py --filler "$N" "$W/wheels" >/dev/null
python3 testworld/index_server.py --root "$W/wheels" --port 0 --port-file "$W/port" >"$W/index.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.1; done
INDEX="http://127.0.0.1:$(cat "$W/port")/main/simple"
export UV_CACHE_DIR="$W/uv-cache" UV_NO_CONFIG=1 BOOTSTRAP_HOME="$W/home"
V="$W/venv"
PY="$V/bin/python"

uv venv -q --python 3.11 "$V"
seq -f "filler-%04g" 1 "$N" >"$W/fillers.txt"
uv pip install -q --python "$PY" --index-url "$INDEX" -r "$W/fillers.txt" \
  demo-core==1.0.0 demo-utils==1.0.0 regex
"$BOOTSTRAP_BIN" snapshot --venv "$V" -o "$W/s0.json"
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
"$BOOTSTRAP_BIN" rollback --venv "$V" --to "$W/s0.json" --index-url "$INDEX" --dry-run >&2
echo "venv: $count installed distributions; 3 changed" >&2

hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$W/rollback.json" \
  --prepare "bash $W/change.sh" \
  -n "bootstrap rollback" "$BOOTSTRAP_BIN rollback --venv $V --to $W/s0.json --index-url $INDEX" \
  -n "uv pip sync (S0 pins)" "uv pip sync --python $PY --index-url $INDEX $W/s0.txt"

# Both end in S0: the last rollback's result must equal it.
bash "$W/change.sh"
"$BOOTSTRAP_BIN" rollback --venv "$V" --to "$W/s0.json" --index-url "$INDEX" >/dev/null 2>&1
"$BOOTSTRAP_BIN" rollback --venv "$V" --to "$W/s0.json" --index-url "$INDEX" 2>/dev/null | grep -q "nothing to do"

python3 - "$W/rollback.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
b, u = r["bootstrap rollback"], r["uv pip sync (S0 pins)"]
print(f"bootstrap rollback: {b['mean']*1000:.1f} ms ± {b['stddev']*1000:.1f}; "
      f"uv pip sync: {u['mean']*1000:.1f} ms ± {u['stddev']*1000:.1f}; "
      f"ratio bootstrap/uv = {b['mean']/u['mean']:.2f}")
PY
