#!/usr/bin/env bash
# bench/noop: a no-op re-run of a 7-step recipe over a venv with ~200 installed packages, one of
# its steps an optional one that cannot install (its first run failed it for good: later runs
# skip it without asking the index), against `uv pip install -r` of the same (already satisfied)
# requirements, measured in one hyperfine run.
# Usage: bench/noop.sh [FILLER_PACKAGES=190]   (BOOTSTRAP_BIN=path: use that binary, skip setup)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N=${1:-190}
bench_setup noop "$N"

half=$((N / 2))
{ bench_recipe_head bench-noop; cat <<TOML; } >"$W/bench.toml"
[[step]]
id = "fillers-a"
kind = "install"
packages = [$(bench_fillers 1 "$half")]
index_url = "$INDEX"
[[step]]
id = "fillers-b"
kind = "install"
packages = [$(bench_fillers $((half + 1)) "$N")]
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
id = "optional-missing"
kind = "install"
packages = ["demo-core>=99"]
index_url = "$INDEX"
optional = true
[[step]]
id = "check"
kind = "check"
verify = [{ import = "wandb" }]
TOML
{ seq -f "filler-%04g" 1 "$N"; printf '%s\n' demo-torch==2.11.0 demo-utils transformers wandb; } >"$W/reqs.txt"

bench_first_run "$W/bench.toml"
echo "venv: $(bench_installed) installed distributions; recipe: 7 steps, one optional that failed for good" >&2

hyperfine -N --warmup 5 --runs 40 --export-json "$W/noop.json" \
  -n "bootstrap no-op" "$BS $W/bench.toml" \
  -n "uv pip install -r (satisfied)" \
  "uv pip install --python $W/venv/bin/python --index-url $INDEX -r $W/reqs.txt"

bench_ratios "$W/noop.json"
