#!/usr/bin/env bash
# bench/snapshot: `bootstrap snapshot` of a venv with ~300 installed packages, against
# `uv pip freeze` and `pip freeze` of the same venv, measured in one hyperfine run.
# Usage: bench/snapshot.sh [FILLER_PACKAGES=300]
# Env: BOOTSTRAP=path/to/bootstrap (default build/bootstrap, built by scripts/setup.sh);
#      BENCH_NO_SETUP=1 skips scripts/setup.sh (the binary and tools are already there).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${BENCH_NO_SETUP:-}" ] || bash scripts/setup.sh >/dev/null
export PATH="$PWD/.tools/venv/bin:$PATH"
BS=${BOOTSTRAP:-build/bootstrap}
N=${1:-300}
W=$(mktemp -d /tmp/bootstrap-bench-snapshot.XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$W"' EXIT

python3 testworld/make_wheels.py --filler "$N" "$W/wheels" >/dev/null
python3 testworld/index_server.py --root "$W/wheels" --port 0 --port-file "$W/port" >"$W/index.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.1; done
INDEX="http://127.0.0.1:$(cat "$W/port")/main/simple"
export UV_CACHE_DIR="$W/uv-cache"

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

python3 - "$W/snapshot.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
b, u, p = r["bootstrap snapshot"], r["uv pip freeze"], r["pip freeze"]
ms = lambda x: f"{x['mean']*1000:.1f} ms ± {x['stddev']*1000:.1f}"
print(f"bootstrap snapshot: {ms(b)}; uv pip freeze: {ms(u)}; pip freeze: {ms(p)}")
print(f"ratio bootstrap/uv = {b['mean']/u['mean']:.2f}; bootstrap/pip = {b['mean']/p['mean']:.3f}")
PY
