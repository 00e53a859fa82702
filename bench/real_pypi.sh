#!/usr/bin/env bash
# bench/real_pypi: recipes/pypi-small.toml against real PyPI (no index_url: the default index),
# measured in one hyperfine run each against uv:
#   1. a no-op re-run  vs  `uv pip install -r` of the same pins (already satisfied);
#   2. `rollback --last` of a run that changed 3 packages  vs  `uv pip sync` of the saved pins
#      (each timed run first re-applies the change, untimed, with hyperfine's --prepare).
# Downloads land in a uv cache under build/ (a few MB, kept between runs), so after the first
# run both sides ask PyPI only for index pages, with PyPI's own cache headers.
# Usage: bench/real_pypi.sh   (BOOTSTRAP_BIN=path: use that binary, skip setup)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
if [ -n "${BOOTSTRAP_BIN:-}" ]; then BS=$BOOTSTRAP_BIN; else bash scripts/setup.sh --test-tools >/dev/null; BS=build/bootstrap; fi
export PATH="$PWD/.tools/venv/bin:$PATH"
export UV_CACHE_DIR="$PWD/build/real-pypi-cache/uv"
W=$(mktemp -d /tmp/bootstrap-bench-real.XXXXXX)
trap 'rm -rf "$W"' EXIT
export BOOTSTRAP_HOME="$W/home"
V="$W/venv"

"$BS" recipes/pypi-small.toml --venv "$V" 2>"$W/first.log" || { cat "$W/first.log"; exit 1; }
uv pip freeze --python "$V/bin/python" >"$W/pins.txt"
echo "venv: $(wc -l <"$W/pins.txt") packages from PyPI; recipe: 6 steps" >&2

hyperfine -N --warmup 3 --runs 20 --export-json "$W/noop.json" \
  -n "bootstrap no-op (real PyPI)" "$BS recipes/pypi-small.toml --venv $V" \
  -n "uv pip install -r (satisfied)" "uv pip install --python $V/bin/python -r $W/pins.txt"
bench_ratios "$W/noop.json"

# The change a rollback undoes: packaging 24.2 -> 24.1, six 1.16.0 -> 1.17.0, attrs added.
sed 's/packages = \["packaging==24.2"\]/packages = ["packaging==24.1", "six==1.17.0", "attrs==24.2.0"]/' \
  recipes/pypi-small.toml >"$W/changed.toml"
change="$BS $W/changed.toml --venv $V"
hyperfine -N --warmup 2 --runs 15 --export-json "$W/rollback.json" \
  --prepare "$change" \
  -n "bootstrap rollback --last (3 changed)" "$BS rollback --last --venv $V" \
  -n "uv pip sync (saved pins)" "uv pip sync --python $V/bin/python $W/pins.txt"
bench_ratios "$W/rollback.json"
