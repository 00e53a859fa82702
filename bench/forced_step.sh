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

cat >"$W/bench.toml" <<TOML
schema = 1
name = "bench-forced-step"
[venv]
path = "$W/venv"
python = "3.11"
[[step]]
id = "venv"
kind = "venv"
[[step]]
id = "fillers"
kind = "install"
packages = [$(seq -f "\"filler-%04g\"" 1 "$N" | paste -sd, -)]
index_url = "$INDEX"
[[step]]
id = "core"
kind = "install"
packages = ["demo-core==1.1.0"]
index_url = "$INDEX"
TOML

"$BS" "$W/bench.toml" 2>"$W/first-run.log" || { cat "$W/first-run.log"; exit 1; }
count=$(ls -d "$W"/venv/lib/python3.11/site-packages/*.dist-info | wc -l)
echo "venv: $count installed distributions" >&2

hyperfine -N --warmup 3 --runs 30 --export-json "$W/forced.json" \
  -n "bootstrap run --only core --force" "$BS $W/bench.toml --only core --force" \
  -n "uv pip install (satisfied)" \
  "uv pip install --python $W/venv/bin/python --index-url $INDEX demo-core==1.1.0"

bench_ratios "$W/forced.json"
