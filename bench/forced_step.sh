#!/usr/bin/env bash
# bench/forced_step: what running one install step costs over the installer itself. A step whose
# requirement is already satisfied is forced to run (`run --only core --force`) in a venv with
# ~300 installed packages: bootstrap takes the venv lock, snapshots before and after, marks the
# venv as changing (a hard link to every installed RECORD, so a stop mid-install is repaired),
# runs uv on a pseudo-terminal, settles the marker and writes history; uv finds nothing to do.
# Against `uv pip install` of the same requirement in the same venv, in one hyperfine run.
# Usage: bench/forced_step.sh [FILLER_PACKAGES=290]   (BOOTSTRAP_BIN=path: use that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N=${1:-290}
bench_setup forced-step "$N"

{ bench_recipe_head bench-forced-step; cat <<TOML; } >"$W/bench.toml"
[[step]]
id = "fillers"
kind = "install"
packages = [$(bench_fillers 1 "$N")]
index_url = "$INDEX"
[[step]]
id = "core"
kind = "install"
packages = ["demo-core==1.1.0"]
index_url = "$INDEX"
TOML

bench_first_run "$W/bench.toml"
echo "venv: $(bench_installed) installed distributions" >&2

hyperfine -N --warmup 3 --runs 30 --export-json "$W/forced.json" \
  -n "bootstrap run --only core --force" "$BS $W/bench.toml --only core --force" \
  -n "uv pip install (satisfied)" \
  "uv pip install --python $W/venv/bin/python --index-url $INDEX demo-core==1.1.0"

bench_ratios "$W/forced.json"
