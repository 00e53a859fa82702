#!/usr/bin/env bash
# bench/noop: a no-op re-run of a 7-step recipe over a venv of SIZE filler packages plus 10 more,
# one of its steps an optional one that cannot install (its first run failed it for good: later
# runs skip it without asking the index), against `uv pip install -r` of the same (already
# satisfied) requirements, in one hyperfine run per size; the ratio and each side's peak RSS.
# Usage: bench/noop.sh [SIZE...]   (default: 30 300 3000; BOOTSTRAP_BIN=path: use that binary)
# Goal (issue 26): ratio <= 0.5 at every size, peak RSS <= 30 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
bench_sizes "$@"
bench_setup noop "$max"

for N in "${sizes[@]}"; do
  V="$W/venv-$N"
  half=$((N / 2))
  { bench_recipe_head bench-noop "$V"; cat <<TOML; } >"$W/noop-$N.toml"
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
  { seq -f "filler-%04g" 1 "$N"; printf '%s\n' demo-torch==2.11.0 demo-utils transformers wandb; } >"$W/reqs-$N.txt"

  bench_first_run "$W/noop-$N.toml"
  echo "== venv: $(bench_installed "$V") installed distributions; recipe: 7 steps, one optional that failed for good"
  hyperfine -N --warmup 5 --runs "${RUNS:-40}" --export-json "$W/noop.json" \
    -n "bootstrap no-op" "$BS $W/noop-$N.toml" \
    -n "uv pip install -r (satisfied)" \
    "uv pip install --python $V/bin/python --index-url $INDEX -r $W/reqs-$N.txt" >/dev/null
  bench_ratios "$W/noop.json"
  bench_rss "bootstrap no-op" "$BS" "$W/noop-$N.toml"
  bench_rss "uv pip install -r" uv pip install --python "$V/bin/python" --index-url "$INDEX" -r "$W/reqs-$N.txt"
done
