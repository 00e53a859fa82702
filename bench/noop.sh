#!/usr/bin/env bash
# bench/noop: a no-op re-run of a 6-step recipe over a venv with ~200 installed packages, against
# `uv pip install -r` of the same (already satisfied) requirements, measured in one hyperfine run.
# Usage: bench/noop.sh [FILLER_PACKAGES=190]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
export PATH="$PWD/.tools/venv/bin:$PATH"
N=${1:-190}
W=$(mktemp -d /tmp/bootstrap-bench-noop.XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$W"' EXIT

python3 testworld/make_wheels.py --filler "$N" "$W/wheels" >/dev/null
python3 testworld/index_server.py --root "$W/wheels" --port 0 --port-file "$W/port" >"$W/index.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.1; done
INDEX="http://127.0.0.1:$(cat "$W/port")/main/simple"
export UV_CACHE_DIR="$W/uv-cache"

half=$((N / 2))
list() { seq -f "\"filler-%04g\"" "$1" "$2" | paste -sd, -; }
cat >"$W/bench.toml" <<TOML
schema = 1
name = "bench-noop"
[venv]
path = "$W/venv"
python = "3.11"
[[step]]
id = "venv"
kind = "venv"
[[step]]
id = "fillers-a"
kind = "install"
packages = [$(list 1 "$half")]
index_url = "$INDEX"
[[step]]
id = "fillers-b"
kind = "install"
packages = [$(list $((half + 1)) "$N")]
index_url = "$INDEX"
[[step]]
id = "torch"
kind = "install"
packages = ["demo-torch==2.11.0", "demo-utils"]
index_url = "$INDEX"
verify = [{ import = "demo_torch" }]
[[step]]
id = "transformers"
kind = "install"
packages = ["transformers", "wandb"]
index_url = "$INDEX"
verify = [{ import = "transformers", attr = "AutoTokenizer" }]
[[step]]
id = "check"
kind = "check"
verify = [{ import = "wandb" }]
TOML
{ seq -f "filler-%04g" 1 "$N"; printf '%s\n' demo-torch==2.11.0 demo-utils transformers wandb; } >"$W/reqs.txt"

build/bootstrap "$W/bench.toml" 2>"$W/first-run.log" || { cat "$W/first-run.log"; exit 1; }
count=$(ls -d "$W"/venv/lib/python3.11/site-packages/*.dist-info | wc -l)
echo "venv: $count installed distributions; recipe: 6 steps" >&2

hyperfine -N --warmup 5 --runs 40 --export-json "$W/noop.json" \
  -n "bootstrap no-op" "build/bootstrap $W/bench.toml" \
  -n "uv pip install -r (satisfied)" \
  "uv pip install --python $W/venv/bin/python --index-url $INDEX -r $W/reqs.txt"

python3 - "$W/noop.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
b, u = r["bootstrap no-op"], r["uv pip install -r (satisfied)"]
print(f"bootstrap no-op: {b['mean']*1000:.1f} ms ± {b['stddev']*1000:.1f}; "
      f"uv pip install -r: {u['mean']*1000:.1f} ms ± {u['stddev']*1000:.1f}; "
      f"ratio bootstrap/uv = {b['mean']/u['mean']:.2f}")
PY
